"""Service layer of the request log: open a record when a question arrives (under its request
id), time its stages, keep its artifacts, close it exactly once with its outcome, and tell the
audit trail about both ends."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from locus.gateway.domain.errors import InvalidRequest, RequestIdTaken, RequestNotFound
from locus.gateway.domain.ports import AuditTrail, MetadataStore
from locus.gateway.domain.requests import (
    Artifact,
    ArtifactKind,
    Feedback,
    FeedbackPage,
    FeedbackQuery,
    NewRequest,
    RequestDetails,
    RequestKind,
    RequestOutcome,
    RequestPage,
    RequestQuery,
    RequestStatus,
    StoredRequest,
)
from locus.gateway.domain.validation import (
    MAX_QUESTION_CHARS,
    require_id,
    validate_comment,
    validate_rating,
)
from locus.telemetry import redact

log = logging.getLogger(__name__)

MAX_STORED_REF_CHARS = 200


@dataclass
class OpenRequest:
    """A request in flight: what the service layer learns about it on the way."""

    request_id: str
    kind: RequestKind
    project_ref: str
    created_at: datetime
    started: float  # time.monotonic() at open
    project_id: str = ""
    project_name: str = ""
    snapshot_id: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    closing: asyncio.Task[None] | None = None  # recording the outcome, once

    @property
    def closed(self) -> bool:
        """An outcome is (being) recorded: later outcomes are ignored."""
        return self.closing is not None

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - start) * 1000
            self.timings_ms[stage] = round(self.timings_ms.get(stage, 0.0) + elapsed, 2)


class RequestJournal:
    def __init__(
        self,
        store: MetadataStore,
        audit: AuditTrail,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        drain_seconds: float = 10.0,
    ) -> None:
        self._store = store
        self._audit = audit
        self._now = clock
        self._drain_seconds = drain_seconds
        self._pending: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        """Let outcomes still being recorded for cancelled requests finish (bounded)."""
        if self._pending:
            await asyncio.wait(set(self._pending), timeout=self._drain_seconds)

    async def open(
        self,
        kind: RequestKind,
        project_ref: str,
        question: str,
        *,
        request_id: str,
        trace_id: str = "",
        principal: str = "",
    ) -> OpenRequest:
        """Record a running request. A reused request id gets a suffix (``<id>.<8 hex>``) so
        that every record stays addressable; the response carries the id actually used."""
        new = NewRequest(
            request_id=request_id,
            kind=kind,
            project_ref=project_ref.strip()[:MAX_STORED_REF_CHARS],
            # Redacted: a pasted log carries tokens, passwords and keys; none is stored.
            question=redact(question.strip()[:MAX_QUESTION_CHARS]),
            created_at=self._now(),
            trace_id=trace_id,
            principal=principal,
        )
        try:
            await self._store.create_request(new)
        except RequestIdTaken:
            new = NewRequest(
                request_id=f"{request_id}.{uuid.uuid4().hex[:8]}",
                kind=new.kind,
                project_ref=new.project_ref,
                question=new.question,
                created_at=new.created_at,
                trace_id=new.trace_id,
                principal=new.principal,
            )
            log.info("request id %s reused; recording as %s", request_id, new.request_id)
            await self._store.create_request(new)
        await self._audit.request_submitted(new)
        return OpenRequest(
            request_id=new.request_id,
            kind=kind,
            project_ref=new.project_ref,
            created_at=new.created_at,
            started=time.monotonic(),
        )

    async def add_artifacts(self, entry: OpenRequest, artifacts: Sequence[Artifact]) -> None:
        await self._store.add_artifacts(entry.request_id, artifacts)

    def close(
        self,
        entry: OpenRequest,
        status: RequestStatus,
        *,
        error_code: str = "",
        error_message: str = "",
        response: bytes = b"",
        answer_text: str = "",
        citations: Sequence[Artifact] = (),
    ) -> Awaitable[None]:
        """Record the outcome (and the citations) of a request. The first call wins, later ones
        wait for it; the recording runs to its end even when the caller is cancelled meanwhile
        (a request whose client went away must still be recorded), and ``stop`` waits for it."""
        if entry.closing is None:
            outcome = RequestOutcome(
                status=status,
                completed_at=self._now(),
                latency_ms=int((time.monotonic() - entry.started) * 1000),
                project_id=entry.project_id,
                project_name=entry.project_name,
                snapshot_id=entry.snapshot_id,
                timings_ms=dict(entry.timings_ms),
                error_code=error_code,
                # Redacted: an endpoint's URL in a message may carry its credentials.
                error_message=redact(error_message)[:4000],
                response=response,
                answer_text=answer_text,
                notes=redact("\n".join(entry.notes))[:4000],
            )
            task = asyncio.ensure_future(self._record(entry, outcome, list(citations)))
            self._pending.add(task)
            task.add_done_callback(self._settled)
            entry.closing = task
        return asyncio.shield(entry.closing)

    async def _record(
        self, entry: OpenRequest, outcome: RequestOutcome, citations: list[Artifact]
    ) -> None:
        await self._store.add_artifacts(entry.request_id, citations)
        recorded = await self._store.finish_request(entry.request_id, outcome)
        if recorded:
            await self._audit.request_completed(
                entry.request_id,
                entry.project_id or entry.project_ref,
                outcome.status.value,
                len(citations),
                outcome.latency_ms,
            )

    def _settled(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("could not record the outcome of a request: %r", task.exception())


class RequestHistory:
    """Reading the request log back, and feedback on recorded requests."""

    def __init__(
        self,
        store: MetadataStore,
        audit: AuditTrail,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._audit = audit
        self._now = clock

    async def get(self, request_id: str) -> tuple[StoredRequest, list[Artifact]]:
        """The request and its citations; RequestNotFound when unknown."""
        request_id = require_id("request_id", request_id)
        stored = await self._store.get_request(request_id)
        if stored is None:
            raise RequestNotFound(f"no request {request_id!r}; list requests to find its id")
        citations = await self._store.artifacts([request_id], ArtifactKind.CITATION)
        return stored, citations.get(request_id, [])

    async def details(self, request_id: str) -> RequestDetails:
        """The request with every artifact and the feedback on it; RequestNotFound when
        unknown."""
        request_id = require_id("request_id", request_id)
        stored = await self._store.get_request(request_id)
        if stored is None:
            raise RequestNotFound(f"no request {request_id!r}; list requests to find its id")
        artifacts = await self._store.artifacts([request_id])
        return RequestDetails(
            request=stored,
            artifacts=artifacts.get(request_id, []),
            feedback=await self._store.feedback(request_id),
        )

    async def list_feedback(self, query: FeedbackQuery) -> FeedbackPage:
        return await self._store.list_feedback(query)

    async def list(self, query: RequestQuery) -> tuple[RequestPage, dict[str, list[Artifact]]]:
        if query.start is not None and query.end is not None and query.start >= query.end:
            raise InvalidRequest("time_range.start must be before time_range.end")
        page = await self._store.list_requests(query)
        citations = await self._store.artifacts(
            [r.request_id for r in page.requests], ArtifactKind.CITATION
        )
        return page, citations

    async def record_feedback(self, request_id: str, rating: int, comment: str) -> Feedback:
        feedback = Feedback(
            feedback_id=f"fb_{uuid.uuid4().hex[:20]}",
            request_id=require_id("request_id", request_id),
            rating=validate_rating(rating),
            comment=validate_comment(comment),
            created_at=self._now(),
        )
        await self._store.record_feedback(feedback)
        await self._audit.feedback_recorded(feedback)
        return feedback
