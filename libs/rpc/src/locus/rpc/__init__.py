"""gRPC runtime for Locus services: server with health and reflection, traced channels with
deadlines, request IDs on every call, typed errors that become canonical status codes, and the
mesh credentials (service token, mTLS) internal calls carry and internal servers require."""

from locus.rpc.channels import make_channel, wait_until_serving
from locus.rpc.errors import (
    AlreadyExists,
    Cancelled,
    DeadlineExceeded,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
    Unauthenticated,
    Unavailable,
)
from locus.rpc.lifecycle import (
    Component,
    ServiceRuntime,
    StoreLifecycle,
    run_service,
    run_until_signalled,
)
from locus.rpc.mesh import SERVICE_TOKEN_HEADER, MeshCredentials, TlsMaterial
from locus.rpc.server import RpcContext, RpcServer
from locus.rpc.worker_processes import die_with_parent

__all__ = [
    "SERVICE_TOKEN_HEADER",
    "AlreadyExists",
    "Cancelled",
    "Component",
    "DeadlineExceeded",
    "FailedPrecondition",
    "InvalidArgument",
    "MeshCredentials",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "ResourceExhausted",
    "RpcContext",
    "RpcServer",
    "ServiceError",
    "ServiceRuntime",
    "StoreLifecycle",
    "TlsMaterial",
    "Unauthenticated",
    "Unavailable",
    "die_with_parent",
    "make_channel",
    "run_service",
    "run_until_signalled",
    "wait_until_serving",
]
