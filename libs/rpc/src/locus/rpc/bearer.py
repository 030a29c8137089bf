"""A caller's credential on every call of a channel: the ``authorization: Bearer <credential>``
metadata the gateway authenticates (an API key or an OIDC token). For grpc.aio channels
(``bearer_interceptors``) and blocking ones (``with_bearer``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

AUTHORIZATION = "authorization"


def _metadata_with(metadata: Any, credential: str) -> list[tuple[str, str]]:
    kept = [(k, v) for k, v in (metadata or ()) if k != AUTHORIZATION]
    return [*kept, (AUTHORIZATION, f"Bearer {credential}")]


def _aio_details(details: grpc.aio.ClientCallDetails, credential: str) -> Any:
    return grpc.aio.ClientCallDetails(
        method=details.method,
        timeout=details.timeout,
        metadata=grpc.aio.Metadata(*_metadata_with(details.metadata, credential)),
        credentials=details.credentials,
        wait_for_ready=details.wait_for_ready,
    )


class _AioUnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, credential: str) -> None:
        self._credential = credential

    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        return await continuation(_aio_details(client_call_details, self._credential), request)


class _AioUnaryStream(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, credential: str) -> None:
        self._credential = credential

    async def intercept_unary_stream(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        return await continuation(_aio_details(client_call_details, self._credential), request)


def bearer_interceptors(credential: str) -> list[grpc.aio.ClientInterceptor]:
    """Interceptors for ``grpc.aio.*_channel(..., interceptors=...)``."""
    return [_AioUnaryUnary(credential), _AioUnaryStream(credential)]


class _Details(grpc.ClientCallDetails):
    def __init__(self, details: Any, credential: str) -> None:
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = tuple(_metadata_with(details.metadata, credential))
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


class _SyncInterceptor(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
):
    def __init__(self, credential: str) -> None:
        self._credential = credential

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        return continuation(_Details(client_call_details, self._credential), request)

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        return continuation(_Details(client_call_details, self._credential), request)


def with_bearer(channel: grpc.Channel, credential: str) -> grpc.Channel:
    """A blocking channel whose calls all carry ``credential`` (no-op when it is empty)."""
    if not credential:
        return channel
    return grpc.intercept_channel(channel, _SyncInterceptor(credential))
