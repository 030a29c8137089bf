"""The request ID: one per user request, carried in W3C baggage across every gRPC and NATS hop."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import baggage, context

REQUEST_ID_BAGGAGE_KEY = "locus.request_id"
REQUEST_ID_ATTRIBUTE = "locus.request_id"
REQUEST_ID_HEADER = "x-request-id"

# Accept what proxies and portals typically send (uuids, ULIDs, short tokens), nothing else.
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def new_request_id() -> str:
    return uuid.uuid4().hex


def is_valid_request_id(value: str) -> bool:
    return bool(_VALID_REQUEST_ID.match(value))


def current_request_id(ctx: context.Context | None = None) -> str | None:
    value = baggage.get_baggage(REQUEST_ID_BAGGAGE_KEY, context=ctx)
    return str(value) if value else None


@contextmanager
def with_request_id(request_id: str) -> Iterator[str]:
    """Make ``request_id`` current (in baggage) for everything started inside the block."""
    token = context.attach(baggage.set_baggage(REQUEST_ID_BAGGAGE_KEY, request_id))
    try:
        yield request_id
    finally:
        context.detach(token)
