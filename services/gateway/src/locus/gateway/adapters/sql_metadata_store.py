"""The MetadataStore on SQLAlchemy: one implementation for SQLite and PostgreSQL (portable SQL
only). Requests are listed newest first with keyset pagination: the opaque page token holds the
(created_at, request_id) of the last row returned."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from locus.database import Database, table_of
from locus.database.migrations import prepare_schema
from locus.gateway.adapters.migrations import SCHEMA
from locus.gateway.adapters.tables import ArtifactRow, FeedbackRow, RequestRow
from locus.gateway.domain.errors import InvalidPageToken, RequestIdTaken, RequestNotFound
from locus.gateway.domain.requests import (
    Artifact,
    ArtifactKind,
    Feedback,
    FeedbackPage,
    FeedbackQuery,
    NewRequest,
    RequestKind,
    RequestOutcome,
    RequestPage,
    RequestQuery,
    RequestStatus,
    StoredRequest,
)

_TOKEN_VERSION = 1


class SqlMetadataStore:
    def __init__(self, database: Database, *, migrate_on_start: bool = True) -> None:
        self._db = database
        self._migrate_on_start = migrate_on_start

    async def initialize(self) -> None:
        await prepare_schema(self._db, SCHEMA, migrate_on_start=self._migrate_on_start)

    async def close(self) -> None:
        await self._db.dispose()

    async def start(self) -> None:
        await self.initialize()

    async def stop(self) -> None:
        await self.close()

    async def create_request(self, request: NewRequest) -> None:
        row = RequestRow(
            request_id=request.request_id,
            kind=request.kind.value,
            project_ref=request.project_ref,
            project_id="",
            project_name="",
            question=request.question,
            status=RequestStatus.RUNNING.value,
            error_code="",
            error_message="",
            created_at=_utc(request.created_at),
            completed_at=None,
            latency_ms=0,
            timings="{}",
            snapshot_id="",
            trace_id=request.trace_id,
            response=b"",
            answer_text="",
            notes="",
            principal=request.principal,
        )
        try:
            async with self._db.transaction() as session:
                session.add(row)
        except IntegrityError:
            raise RequestIdTaken(f"request {request.request_id!r} is recorded already") from None

    async def finish_request(self, request_id: str, outcome: RequestOutcome) -> bool:
        async with self._db.transaction() as session:
            result = await session.execute(
                update(RequestRow)
                .where(
                    RequestRow.request_id == request_id,
                    RequestRow.status == RequestStatus.RUNNING.value,
                )
                .values(
                    status=outcome.status.value,
                    completed_at=_utc(outcome.completed_at),
                    latency_ms=outcome.latency_ms,
                    project_id=outcome.project_id,
                    project_name=outcome.project_name,
                    snapshot_id=outcome.snapshot_id,
                    timings=json.dumps(dict(outcome.timings_ms), sort_keys=True),
                    error_code=outcome.error_code,
                    error_message=outcome.error_message,
                    response=outcome.response,
                    answer_text=outcome.answer_text,
                    notes=outcome.notes,
                )
            )
            if result.rowcount:  # type: ignore[attr-defined]
                return True
            exists = await session.scalar(
                select(RequestRow.request_id).where(RequestRow.request_id == request_id)
            )
        if exists is None:
            raise RequestNotFound(f"no request {request_id!r}")
        return False

    async def add_artifacts(self, request_id: str, artifacts: Sequence[Artifact]) -> None:
        if not artifacts:
            return
        # One multi-row INSERT, not ORM objects: a Locate journals its 150 hits on the
        # request path, and the unit of work took longer than the insert itself.
        async with self._db.transaction() as session:
            await session.execute(
                insert(table_of(ArtifactRow)),
                [
                    {
                        "request_id": request_id,
                        "kind": a.kind.value,
                        "ordinal": a.ordinal,
                        "chunk_id": a.chunk_id,
                        "relative_path": a.relative_path,
                        "start_line": a.start_line,
                        "end_line": a.end_line,
                        "score": a.score,
                        "payload": a.payload,
                    }
                    for a in artifacts
                ],
            )

    async def get_request(self, request_id: str) -> StoredRequest | None:
        async with self._db.sessions() as session:
            row = await session.get(RequestRow, request_id)
            return _stored(row) if row is not None else None

    async def list_requests(self, query: RequestQuery) -> RequestPage:
        statement = select(RequestRow)
        if query.project:
            statement = statement.where(
                or_(
                    RequestRow.project_id == query.project,
                    RequestRow.project_name == query.project,
                    RequestRow.project_ref == query.project,
                )
            )
        if query.principal:
            statement = statement.where(RequestRow.principal == query.principal)
        if query.status is not None:
            statement = statement.where(RequestRow.status == query.status.value)
        if query.start is not None:
            statement = statement.where(RequestRow.created_at >= _utc(query.start))
        if query.end is not None:
            statement = statement.where(RequestRow.created_at < _utc(query.end))
        if query.page_token:
            created_at, request_id = _decode_token(query.page_token)
            statement = statement.where(
                or_(
                    RequestRow.created_at < created_at,
                    and_(RequestRow.created_at == created_at, RequestRow.request_id < request_id),
                )
            )
        statement = statement.order_by(
            RequestRow.created_at.desc(), RequestRow.request_id.desc()
        ).limit(query.page_size + 1)
        async with self._db.sessions() as session:
            rows = list(await session.scalars(statement))
        page = [_stored(r) for r in rows[: query.page_size]]
        token = ""
        if len(rows) > query.page_size and page:
            token = _encode_token(page[-1].created_at, page[-1].request_id)
        return RequestPage(requests=page, next_page_token=token)

    async def artifacts(
        self, request_ids: Sequence[str], kind: ArtifactKind | None = None
    ) -> dict[str, list[Artifact]]:
        if not request_ids:
            return {}
        statement = select(ArtifactRow).where(ArtifactRow.request_id.in_(list(request_ids)))
        if kind is not None:
            statement = statement.where(ArtifactRow.kind == kind.value)
        statement = statement.order_by(
            ArtifactRow.request_id, ArtifactRow.kind, ArtifactRow.ordinal
        )
        found: dict[str, list[Artifact]] = {}
        async with self._db.sessions() as session:
            for row in await session.scalars(statement):
                found.setdefault(row.request_id, []).append(
                    Artifact(
                        kind=ArtifactKind(row.kind),
                        ordinal=row.ordinal,
                        chunk_id=row.chunk_id,
                        relative_path=row.relative_path,
                        start_line=row.start_line,
                        end_line=row.end_line,
                        score=row.score,
                        payload=bytes(row.payload or b""),
                    )
                )
        return found

    async def record_feedback(self, feedback: Feedback) -> None:
        async with self._db.transaction() as session:
            exists = await session.scalar(
                select(RequestRow.request_id).where(RequestRow.request_id == feedback.request_id)
            )
            if exists is None:
                raise RequestNotFound(f"no request {feedback.request_id!r}")
            session.add(
                FeedbackRow(
                    feedback_id=feedback.feedback_id,
                    request_id=feedback.request_id,
                    rating=feedback.rating,
                    comment=feedback.comment,
                    created_at=_utc(feedback.created_at),
                )
            )

    async def feedback(self, request_id: str) -> list[Feedback]:
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(FeedbackRow)
                .where(FeedbackRow.request_id == request_id)
                .order_by(FeedbackRow.created_at, FeedbackRow.feedback_id)
            )
            return [
                Feedback(
                    feedback_id=r.feedback_id,
                    request_id=r.request_id,
                    rating=r.rating,
                    comment=r.comment,
                    created_at=_utc(r.created_at),
                )
                for r in rows
            ]

    async def list_feedback(self, query: FeedbackQuery) -> FeedbackPage:
        statement = select(FeedbackRow, RequestRow.project_id, RequestRow.project_ref).join(
            RequestRow, RequestRow.request_id == FeedbackRow.request_id
        )
        if query.request_id:
            statement = statement.where(FeedbackRow.request_id == query.request_id)
        if query.project:
            statement = statement.where(
                or_(
                    RequestRow.project_id == query.project,
                    RequestRow.project_name == query.project,
                    RequestRow.project_ref == query.project,
                )
            )
        if query.principal:
            statement = statement.where(RequestRow.principal == query.principal)
        if query.page_token:
            created_at, feedback_id = _decode_token(query.page_token)
            statement = statement.where(
                or_(
                    FeedbackRow.created_at < created_at,
                    and_(
                        FeedbackRow.created_at == created_at,
                        FeedbackRow.feedback_id < feedback_id,
                    ),
                )
            )
        statement = statement.order_by(
            FeedbackRow.created_at.desc(), FeedbackRow.feedback_id.desc()
        ).limit(query.page_size + 1)
        async with self._db.sessions() as session:
            rows = list(await session.execute(statement))
        page = [
            Feedback(
                feedback_id=row.feedback_id,
                request_id=row.request_id,
                rating=row.rating,
                comment=row.comment,
                created_at=_utc(row.created_at),
                project_id=project_id or project_ref,
            )
            for row, project_id, project_ref in rows[: query.page_size]
        ]
        token = ""
        if len(rows) > query.page_size and page:
            token = _encode_token(page[-1].created_at, page[-1].feedback_id)
        return FeedbackPage(feedback=page, next_page_token=token)


def _stored(row: RequestRow) -> StoredRequest:
    return StoredRequest(
        request_id=row.request_id,
        kind=RequestKind(row.kind),
        project_ref=row.project_ref,
        project_id=row.project_id,
        project_name=row.project_name,
        question=row.question,
        status=RequestStatus(row.status),
        created_at=_utc(row.created_at),
        completed_at=_utc(row.completed_at) if row.completed_at else None,
        latency_ms=int(row.latency_ms or 0),
        timings_ms=json.loads(row.timings or "{}"),
        error_code=row.error_code,
        error_message=row.error_message,
        response=bytes(row.response or b""),
        answer_text=row.answer_text,
        snapshot_id=row.snapshot_id,
        trace_id=row.trace_id,
        notes=row.notes,
        principal=row.principal or "",
    )


def _utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored moment is UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _encode_token(created_at: datetime, request_id: str) -> str:
    payload = json.dumps(
        {"v": _TOKEN_VERSION, "t": _utc(created_at).isoformat(), "r": request_id},
        separators=(",", ":"),
    )
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def _decode_token(token: str) -> tuple[datetime, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        if payload.get("v") != _TOKEN_VERSION:
            raise ValueError("unknown version")
        created_at = datetime.fromisoformat(str(payload["t"]))
        request_id = str(payload["r"])
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        raise InvalidPageToken("page_token is not one this server issued") from None
    return _utc(created_at), request_id
