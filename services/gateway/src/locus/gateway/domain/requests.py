"""The request log: what the gateway records about every question (locate, ask, search), the
artifacts it retrieved or cited, and the feedback people give on it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum


class RequestKind(StrEnum):
    LOCATE = "locate"
    ASK = "ask"
    SEARCH = "search"


class RequestStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    DENIED = "denied"  # the principal lacks the role the request needs


class ArtifactKind(StrEnum):
    CHUNK = "chunk"  # a chunk retrieval returned
    CONTEXT = "context"  # a snippet sent to the answer service (with its text)
    CITATION = "citation"  # a citation the answer made


@dataclass(frozen=True)
class NewRequest:
    request_id: str
    kind: RequestKind
    project_ref: str  # the project as the caller named it (id or name)
    question: str
    created_at: datetime
    trace_id: str = ""
    principal: str = ""  # who asked: "key:<key id>" or "oidc:<subject>"


@dataclass(frozen=True)
class RequestOutcome:
    status: RequestStatus
    completed_at: datetime
    latency_ms: int
    project_id: str = ""
    project_name: str = ""
    snapshot_id: str = ""
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    error_code: str = ""
    error_message: str = ""
    response: bytes = b""  # the serialized final response (a LocateResponse for locate/ask)
    answer_text: str = ""
    notes: str = ""  # what was degraded on the way (e.g. impact analysis skipped)


@dataclass(frozen=True)
class StoredRequest:
    request_id: str
    kind: RequestKind
    project_ref: str
    project_id: str
    project_name: str
    question: str
    status: RequestStatus
    created_at: datetime
    completed_at: datetime | None
    latency_ms: int
    timings_ms: Mapping[str, float]
    error_code: str
    error_message: str
    response: bytes
    answer_text: str
    snapshot_id: str
    trace_id: str
    notes: str
    principal: str = ""


@dataclass(frozen=True)
class Artifact:
    kind: ArtifactKind
    ordinal: int  # position within the kind, from 0
    chunk_id: str = ""
    relative_path: str = ""
    start_line: int = 0
    end_line: int = 0
    score: float = 0.0
    payload: bytes = b""  # the serialized message (a SearchHit, ContextSnippet or Citation)


@dataclass(frozen=True)
class Feedback:
    feedback_id: str
    request_id: str
    rating: int
    comment: str
    created_at: datetime
    project_id: str = ""  # the request's project (filled in when feedback is listed)


@dataclass(frozen=True)
class RequestQuery:
    """Filters of ListRequests; empty/None means any. ``start`` inclusive, ``end`` exclusive."""

    project: str = ""  # matches the project's id or name, or what the caller called it
    principal: str = ""  # only this principal's requests ("" = anyone's)
    status: RequestStatus | None = None
    start: datetime | None = None
    end: datetime | None = None
    page_size: int = 50
    page_token: str = ""


@dataclass(frozen=True)
class RequestPage:
    requests: list[StoredRequest]
    next_page_token: str


@dataclass(frozen=True)
class FeedbackQuery:
    """Filters of ListFeedback; empty means any. Newest first."""

    request_id: str = ""
    project: str = ""  # matches the request's project id or name, or what the caller called it
    principal: str = ""  # only feedback on this principal's requests ("" = anyone's)
    page_size: int = 50
    page_token: str = ""


@dataclass(frozen=True)
class FeedbackPage:
    feedback: list[Feedback]
    next_page_token: str


@dataclass(frozen=True)
class RequestDetails:
    """A recorded request with everything the log keeps about it."""

    request: StoredRequest
    artifacts: list[Artifact]  # by kind, then ordinal
    feedback: list[Feedback]

    def of_kind(self, kind: ArtifactKind) -> list[Artifact]:
        return [a for a in self.artifacts if a.kind == kind]
