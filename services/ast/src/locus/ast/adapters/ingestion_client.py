"""File contents from ingestion's ``IngestionService.GetFileContent``, with gRPC failures sorted
into transient (retry the event) and permanent (report the file failed)."""

from __future__ import annotations

import grpc

from locus.ast.ports import ContentRejected, ContentUnavailable
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc

_TRANSIENT = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.CANCELLED,
    }
)
_PERMANENT = frozenset(
    {
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)


class IngestionContentClient:
    """A ``FileContentSource`` over a channel from ``locus.rpc.make_channel`` (deadline,
    tracing and request id on every call); closes the channel when stopped."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._channel = channel
        self._stub = ingestion_pb2_grpc.IngestionServiceStub(channel)

    async def text(self, sha256: str, *, final_attempt: bool) -> str:
        try:
            # wait_for_ready: ride out an ingestion restart until the call's deadline.
            reply = await self._stub.GetFileContent(
                ingestion_pb2.GetFileContentRequest(sha256=sha256), wait_for_ready=True
            )
        except grpc.aio.AioRpcError as error:
            code = error.code()
            message = f"ingestion GetFileContent({sha256[:12]}…): {code.name}: {error.details()}"
            if code in _TRANSIENT:
                raise ContentUnavailable(message) from error
            if code in _PERMANENT or final_attempt:
                raise ContentRejected(message) from error
            raise ContentUnavailable(message) from error
        return str(reply.text)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        await self._channel.close()
