"""The audit trail on NATS JetStream: ``request.submitted``, ``answer.completed``,
``feedback.recorded`` and ``access.denied`` with message ids derived from the request id (a
retried publish is deduplicated). Publishing is best effort and off the request's path: the
request log in the store is the record, so a slow or absent bus never delays or fails a
request (it is logged)."""

from __future__ import annotations

import asyncio
import logging

from google.protobuf.message import Message

from locus.gateway.domain.requests import Feedback, NewRequest
from locus.messaging import EventBus
from locus.v1 import events_pb2

log = logging.getLogger(__name__)


MAX_PENDING_PUBLISHES = 1000


class BusAuditTrail:
    def __init__(self, bus: EventBus, *, publish_timeout_seconds: float = 5.0) -> None:
        self._bus = bus
        self._timeout = publish_timeout_seconds
        self._pending: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await self._bus.ensure_stream()

    async def stop(self) -> None:
        """Give the events still in flight their chance before the bus closes."""
        if self._pending:
            await asyncio.wait(set(self._pending), timeout=self._timeout)

    async def request_submitted(self, request: NewRequest) -> None:
        event = events_pb2.RequestSubmitted(
            request_id=request.request_id,
            project_id=request.project_ref,
            kind=request.kind.value,
            question=request.question,
            principal=request.principal,
        )
        event.submitted_at.FromDatetime(request.created_at)
        await self._publish(
            self._bus.subjects.request_submitted,
            event,
            f"request.submitted:{request.request_id}",
        )

    async def request_completed(
        self, request_id: str, project_id: str, status: str, citations: int, latency_ms: int
    ) -> None:
        await self._publish(
            self._bus.subjects.answer_completed,
            events_pb2.AnswerCompleted(
                request_id=request_id,
                project_id=project_id,
                status=status,
                citations=citations,
                latency_ms=latency_ms,
            ),
            f"answer.completed:{request_id}",
        )

    async def feedback_recorded(self, feedback: Feedback) -> None:
        await self._publish(
            self._bus.subjects.feedback_recorded,
            events_pb2.FeedbackRecorded(
                request_id=feedback.request_id, rating=feedback.rating, comment=feedback.comment
            ),
            f"feedback.recorded:{feedback.request_id}:{feedback.feedback_id}",
        )

    async def access_denied(
        self, request_id: str, principal: str, method: str, scope: str, code: str, reason: str
    ) -> None:
        event = events_pb2.AccessDenied(
            request_id=request_id,
            principal=principal,
            method=method,
            scope=scope,
            code=code,
            reason=reason,
        )
        event.denied_at.GetCurrentTime()
        await self._publish(
            self._bus.subjects.access_denied, event, f"access.denied:{request_id}:{method}"
        )

    async def _publish(self, subject: str, event: Message, message_id: str) -> None:
        if len(self._pending) >= MAX_PENDING_PUBLISHES:
            log.warning("audit backlog full, dropping %s (%s)", subject, message_id)
            return
        task = asyncio.ensure_future(self._publish_now(subject, event, message_id))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _publish_now(self, subject: str, event: Message, message_id: str) -> None:
        try:
            await asyncio.wait_for(
                self._bus.publish(subject, event, message_id=message_id), self._timeout
            )
        except Exception as error:  # audit must not fail the request it describes
            log.warning("could not publish %s (%s): %s", subject, message_id, error)
