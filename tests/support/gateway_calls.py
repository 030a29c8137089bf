"""Calls to the real gateway that many integration tests make: the error a refused call ends
with, a new API key with given grants, and a request's record once it has finished."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import grpc

from locus.v1 import gateway_pb2


async def refusal(call: Any) -> grpc.aio.AioRpcError:
    """The error a unary call, or a stream's first event, ends with."""
    try:
        if hasattr(call, "__aiter__"):
            async for _ in call:
                pass
        else:
            await call
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError("the call succeeded")


async def make_key(stub: Any, *grants: tuple[str, int], **fields: Any) -> Any:
    """A new key (created through ``stub``, a Gateway stub) with these (project, role) grants."""
    return await stub.CreateApiKey(
        gateway_pb2.CreateApiKeyRequest(
            name=fields.pop("name", f"key-{uuid.uuid4().hex[:6]}"),
            grants=[gateway_pb2.Grant(project=p, role=r) for p, r in grants],
            **fields,
        )
    )


async def wait_for_record(gateway: Any, request_id: str, within_seconds: float = 10) -> Any:
    """The request's record once it is no longer running."""
    deadline = time.monotonic() + within_seconds
    while True:
        record = await gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=request_id))
        if record.status != "running" or time.monotonic() > deadline:
            return record
        await asyncio.sleep(0.1)
