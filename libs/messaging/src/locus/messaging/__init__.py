"""NATS JetStream messaging for Locus through FastStream: one stream, durable pull consumers,
deterministic message IDs, bounded redelivery and a dead-letter subject (listed and replayed
by ``dead_letters``); plus an embedded nats-server for laptops and tests."""

from locus.messaging.batching import MessageBatcher
from locus.messaging.bus import EventBus, MalformedEvent
from locus.messaging.credentials import BusCredentials
from locus.messaging.dead_letters import (
    DeadLetterNotFound,
    DeadLetters,
    NotADeadLetter,
    Replayed,
    StoredDeadLetter,
    connect_dead_letters,
    open_dead_letters,
)
from locus.messaging.delivery import Delivery
from locus.messaging.embedded_server import EmbeddedNatsServer, nats_server_binary
from locus.messaging.lanes import LaneItem, PriorityLanes
from locus.messaging.message_ids import index_updated_message_id
from locus.messaging.subjects import Subjects

__all__ = [
    "BusCredentials",
    "DeadLetterNotFound",
    "DeadLetters",
    "Delivery",
    "EmbeddedNatsServer",
    "EventBus",
    "LaneItem",
    "MalformedEvent",
    "MessageBatcher",
    "NotADeadLetter",
    "PriorityLanes",
    "Replayed",
    "StoredDeadLetter",
    "Subjects",
    "connect_dead_letters",
    "index_updated_message_id",
    "nats_server_binary",
    "open_dead_letters",
]
