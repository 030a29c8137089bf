"""File contents from ingestion's ``IngestionService.GetFileContents`` (a batch's files in one call
or a few), with gRPC failures sorted into transient (retry the event) and permanent (report the
files failed)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import grpc

from locus.ast.ports import ContentUnavailable, FetchedContents
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc

_SHA256 = re.compile(r"[0-9a-f]{64}")
_PER_CALL = 256  # the most sha256 GetFileContents takes at once
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

    async def texts(self, sha256s: Sequence[str], *, final_attempt: bool) -> FetchedContents:
        fetched = FetchedContents(texts={}, rejected={})
        pending = []
        for sha256 in dict.fromkeys(sha256s):
            if _SHA256.fullmatch(sha256):
                pending.append(sha256)
            else:  # one malformed value must not fail the call for the whole batch
                fetched.rejected[sha256] = f"{sha256!r} is not a sha256 (64 lowercase hex)"
        while pending:
            asked, pending = pending[:_PER_CALL], pending[_PER_CALL:]
            try:
                # wait_for_ready: ride out an ingestion restart until the call's deadline.
                reply = await self._stub.GetFileContents(
                    ingestion_pb2.GetFileContentsRequest(sha256=asked), wait_for_ready=True
                )
            except grpc.aio.AioRpcError as error:
                code = error.code()
                message = (
                    f"ingestion GetFileContents({len(asked)} files, first {asked[0][:12]}…): "
                    f"{code.name}: {error.details()}"
                )
                if code in _TRANSIENT or (code not in _PERMANENT and not final_attempt):
                    raise ContentUnavailable(message) from error
                fetched.rejected.update(dict.fromkeys(asked, message))
                continue
            fetched.texts.update((content.sha256, content.text) for content in reply.contents)
            for sha256 in reply.missing_sha256:
                fetched.rejected[sha256] = f"ingestion has no stored content with sha256 {sha256}"
            pending = list(reply.deferred_sha256) + pending
            if not reply.contents and reply.deferred_sha256:
                raise ContentUnavailable("ingestion GetFileContents deferred every file")
        return fetched

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        await self._channel.close()
