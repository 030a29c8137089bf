"""Ports of the gateway: the request log store, the API key store, the audit trail, the token
verifier and the optional reranker.
Adapters live in ``locus.gateway.adapters``; every store adapter passes tests/contract/gateway."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from locus.gateway.domain.access import Principal
from locus.gateway.domain.api_keys import ApiKey
from locus.gateway.domain.ranking_types import Ranking
from locus.gateway.domain.requests import (
    Artifact,
    ArtifactKind,
    Feedback,
    FeedbackPage,
    FeedbackQuery,
    NewRequest,
    RequestOutcome,
    RequestPage,
    RequestQuery,
    StoredRequest,
)


class MetadataStore(Protocol):
    """Requests, their final responses, artifacts and feedback."""

    async def initialize(self) -> None: ...

    async def close(self) -> None: ...

    async def create_request(self, request: NewRequest) -> None:
        """Record a running request; RequestIdTaken when its id is recorded already."""

    async def finish_request(self, request_id: str, outcome: RequestOutcome) -> bool:
        """Record the outcome of a running request. False (and nothing changes) when the
        request already has an outcome; RequestNotFound when it is unknown."""

    async def add_artifacts(self, request_id: str, artifacts: Sequence[Artifact]) -> None: ...

    async def get_request(self, request_id: str) -> StoredRequest | None: ...

    async def list_requests(self, query: RequestQuery) -> RequestPage:
        """Newest first; InvalidPageToken for a token this store did not issue."""

    async def artifacts(
        self, request_ids: Sequence[str], kind: ArtifactKind | None = None
    ) -> dict[str, list[Artifact]]:
        """Artifacts of each request (ordered by kind, then ordinal); absent ids are left out."""

    async def record_feedback(self, feedback: Feedback) -> None:
        """RequestNotFound when the request is unknown."""

    async def feedback(self, request_id: str) -> list[Feedback]: ...

    async def list_feedback(self, query: FeedbackQuery) -> FeedbackPage:
        """Newest first, each with its request's project id; InvalidPageToken for a token this
        store did not issue."""


class ApiKeyStore(Protocol):
    """API keys with the SHA-256 of their secret (never the secret itself)."""

    async def add_key(self, key: ApiKey, secret_hash: str) -> bool:
        """Store a key; False (and nothing changes) when its id is taken."""

    async def key(self, key_id: str) -> tuple[ApiKey, str] | None:
        """The key and its secret's hash; None when unknown."""

    async def keys(self, *, created_by: str = "", include_revoked: bool = False) -> list[ApiKey]:
        """Oldest first; only those ``created_by`` made when it is given."""

    async def revoke_key(self, key_id: str, at: datetime) -> ApiKey | None:
        """Mark a key revoked (a revoked key keeps its first revocation time); None when
        unknown."""


class TokenVerifier(Protocol):
    """Checks a bearer token (an OIDC access token) and says who it names."""

    async def principal(self, token: str) -> Principal:
        """NotAuthenticated when the token is not valid (signature, issuer, audience, expiry,
        algorithm)."""


class AuditTrail(Protocol):
    """Audit events about requests (published on the bus). Never fails a request."""

    async def request_submitted(self, request: NewRequest) -> None: ...

    async def request_completed(
        self,
        request_id: str,
        project_id: str,
        status: str,
        citations: int,
        latency_ms: int,
    ) -> None: ...

    async def feedback_recorded(self, feedback: Feedback) -> None: ...

    async def access_denied(
        self, request_id: str, principal: str, method: str, scope: str, code: str, reason: str
    ) -> None: ...


class Reranker(Protocol):
    """Reorders a ranking (e.g. with a cross-encoder). It may drop but must not invent results.
    ``texts``: the code it may read: chunk id → the chunk's text, for the chunks the ranking's
    symbols cite, and symbol node id → the symbol's own first chunk, for symbols of the window
    that cite none (graph neighbours, symbols found by name). ``window``: how many of the
    ranking's first symbols it reads (0: none, no text is fetched for it).
    RerankerUnavailable when it cannot rerank; the caller then keeps the ranking."""

    window: int

    async def rerank(
        self, question: str, ranking: Ranking, texts: Mapping[str, str]
    ) -> Ranking: ...
