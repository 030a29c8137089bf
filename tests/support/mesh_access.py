"""Tests and benchmarks that call a ``locus up`` stack's internal services directly (ingestion,
ast, impact ...) or its bus do it as one of its services would: with the stack's service token
and NATS user and password, read from the files its stack.json names (docs/adr/0009). The
public gateway needs no service token but an API key: the stack's admin key (docs/adr/0008).
Blocking channels."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import grpc

from locus.messaging import BusCredentials
from locus.rpc import SERVICE_TOKEN_HEADER
from locus.rpc.bearer import with_bearer


def service_token_of(state: Mapping[str, Any] | Any) -> str:
    """The service token of the stack ``state`` (stack.json's data, or a StackState)
    describes; "" without one."""
    if isinstance(state, Mapping):
        token_file = state.get("service_token_file") or ""
    else:
        token_file = getattr(state, "service_token_file", "")
    return Path(token_file).read_text(encoding="utf-8").strip() if token_file else ""


def admin_key_of(state: Mapping[str, Any] | Any) -> str:
    """The admin API key ``locus up`` wrote for the stack ``state`` describes."""
    if isinstance(state, Mapping):
        key_file = state.get("admin_key_file") or ""
    else:
        key_file = getattr(state, "admin_key_file", "")
    if not key_file:
        raise AssertionError("the stack's state names no admin_key_file")
    return Path(key_file).read_text(encoding="utf-8").strip()


def gateway_channel(address: str, state: Mapping[str, Any] | Any) -> grpc.Channel:
    """A blocking channel to the stack's gateway whose calls carry its admin key."""
    return with_bearer(grpc.insecure_channel(address), admin_key_of(state))


def bus_credentials_of(state: Mapping[str, Any]) -> BusCredentials:
    """The NATS user and password of the stack ``state`` (stack.json's data) describes."""
    password_file = state.get("nats_password_file") or ""
    if not password_file:
        return BusCredentials()
    password = Path(password_file).read_text(encoding="utf-8").strip()
    return BusCredentials(str(state.get("nats_user") or ""), password)


class _Details(grpc.ClientCallDetails):
    def __init__(self, details: Any, token: str) -> None:
        kept = [(k, v) for k, v in (details.metadata or ()) if k != SERVICE_TOKEN_HEADER]
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = [*kept, (SERVICE_TOKEN_HEADER, token)]
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


class _WithToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    def __init__(self, token: str) -> None:
        self._token = token

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        return continuation(_Details(client_call_details, self._token), request)

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        return continuation(_Details(client_call_details, self._token), request)


def internal_channel(address: str, token: str) -> grpc.Channel:
    """A blocking plaintext channel to an internal service whose calls carry ``token`` (none
    when it is empty). Closing it closes the underlying channel."""
    channel = grpc.insecure_channel(address)
    return grpc.intercept_channel(channel, _WithToken(token)) if token else channel
