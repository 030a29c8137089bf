"""AnswerService over gRPC: validates the request, runs the answer in its own task and streams
its events.

The answer runs in a task of its own so that the end of the RPC (client cancel, deadline,
server stop) cancels it at once through ``context.add_done_callback``, whatever the stream is
waiting on; cancelling it closes the generator's stream, which cancels an LLM request.
Each answer's outcome is set on its ``answer.generate`` span (``locus.answer.status``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from opentelemetry import trace

from locus.answer.adapters.messages import (
    answer_request_from_message,
    event_message,
    final_message,
)
from locus.answer.domain import (
    AnswerFinal,
    AnswerPolicy,
    AnswerProblem,
    AnswerRequest,
    Generator,
    InvalidAnswerRequest,
    RequestLimits,
    answer_question,
    validate_request,
)
from locus.rpc import InvalidArgument, RpcContext
from locus.v1 import answer_pb2, answer_pb2_grpc

log = logging.getLogger(__name__)

STATUS_ATTRIBUTE = "locus.answer.status"
_END = object()


class AnswerServicer(answer_pb2_grpc.AnswerServiceServicer):
    def __init__(
        self,
        generator: Generator,
        policy: AnswerPolicy,
        limits: RequestLimits,
        tracer: trace.Tracer,
    ) -> None:
        self._generator = generator
        self._policy = policy
        self._limits = limits
        self._tracer = tracer

    async def Generate(
        self, request: answer_pb2.GenerateRequest, context: RpcContext
    ) -> AsyncIterator[answer_pb2.GenerateEvent]:
        answer_request = answer_request_from_message(request)
        try:
            validate_request(answer_request, self._limits)
        except InvalidAnswerRequest as error:
            raise InvalidArgument(str(error)) from error
        events: asyncio.Queue[Any] = asyncio.Queue()
        producer = asyncio.create_task(self._produce(answer_request, events))
        # types-grpcio declares the callback a class no function matches (type_check_only).
        context.add_done_callback(lambda _: producer.cancel())  # type: ignore[arg-type]
        try:
            while (item := await events.get()) is not _END:
                yield item
        finally:
            if not producer.done():
                producer.cancel()
            await asyncio.gather(producer, return_exceptions=True)

    async def _produce(self, request: AnswerRequest, events: asyncio.Queue[Any]) -> None:
        status = "cancelled"
        with self._tracer.start_as_current_span("answer.generate") as span:
            span.set_attribute("locus.answer.generator", self._generator.name)
            span.set_attribute("locus.answer.snippets", len(request.snippets))
            try:
                async for event in answer_question(request, self._generator, self._policy):
                    if isinstance(event, AnswerFinal):
                        status = event.status
                        span.set_attribute("locus.answer.grounded", event.grounded)
                    events.put_nowait(event_message(event))
            except asyncio.CancelledError:
                status = "cancelled"
                log.info("answer %s cancelled: generation stopped", request.request_id)
                raise
            except Exception as error:
                status = "failed"
                log.exception("answer %s failed", request.request_id)
                problem = AnswerProblem("INTERNAL", f"internal error: {type(error).__name__}")
                events.put_nowait(event_message(problem))
                events.put_nowait(
                    final_message(AnswerFinal("failed", grounded=False, message=problem.message))
                )
            finally:
                span.set_attribute(STATUS_ATTRIBUTE, status)
                events.put_nowait(_END)
