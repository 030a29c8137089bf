"""gRPC runtime for Locus services: server with health and reflection, traced channels with
deadlines, request IDs on every call, typed errors that become canonical status codes."""

from locus.rpc.channels import make_channel, wait_until_serving
from locus.rpc.errors import (
    AlreadyExists,
    Cancelled,
    DeadlineExceeded,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
    Unavailable,
)
from locus.rpc.lifecycle import (
    Component,
    ServiceRuntime,
    StoreLifecycle,
    run_service,
    run_until_signalled,
)
from locus.rpc.server import RpcServer
from locus.rpc.worker_processes import die_with_parent

__all__ = [
    "AlreadyExists",
    "Cancelled",
    "Component",
    "DeadlineExceeded",
    "FailedPrecondition",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "ResourceExhausted",
    "RpcServer",
    "ServiceError",
    "ServiceRuntime",
    "StoreLifecycle",
    "Unavailable",
    "die_with_parent",
    "make_channel",
    "run_service",
    "run_until_signalled",
    "wait_until_serving",
]
