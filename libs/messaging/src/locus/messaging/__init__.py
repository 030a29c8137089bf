"""NATS JetStream messaging for Locus through FastStream: one stream, durable pull consumers,
deterministic message IDs, bounded redelivery and a dead-letter subject; plus an embedded
nats-server for laptops and tests."""

from locus.messaging.batching import MessageBatcher
from locus.messaging.bus import EventBus, MalformedEvent
from locus.messaging.delivery import Delivery
from locus.messaging.embedded_server import EmbeddedNatsServer, nats_server_binary
from locus.messaging.lanes import LaneItem, PriorityLanes
from locus.messaging.subjects import Subjects

__all__ = [
    "Delivery",
    "EmbeddedNatsServer",
    "EventBus",
    "LaneItem",
    "MalformedEvent",
    "MessageBatcher",
    "PriorityLanes",
    "Subjects",
    "nats_server_binary",
]
