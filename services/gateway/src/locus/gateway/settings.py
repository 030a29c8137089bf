"""Gateway settings (LOCUS_GATEWAY_*): where the peers are, how long each hop may take, the
limits of Locate and Ask. Fails fast on invalid values."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

from locus.config import ServiceSettings
from locus.gateway.domain.access import Grant
from locus.gateway.domain.ranking_weights import RankingWeights


class GatewaySettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="LOCUS_GATEWAY_", extra="ignore")

    service_name: str = "gateway"
    grpc_port: int = Field(default=50050, ge=0, le=65535)

    # Deadline of each outbound call, per peer (the channel default is rpc_timeout_seconds).
    ingestion_timeout_seconds: float = Field(default=10.0, gt=0)
    ast_timeout_seconds: float = Field(default=10.0, gt=0)
    retrieval_timeout_seconds: float = Field(default=15.0, gt=0)
    impact_timeout_seconds: float = Field(default=10.0, gt=0)
    # The whole answer stream (the LLM included) must finish within this.
    answer_timeout_seconds: float = Field(default=300.0, gt=0)
    audit_publish_timeout_seconds: float = Field(default=5.0, gt=0)

    # Admission control: Locate and Search calls answered at once (more wait in a queue of
    # max_queued_questions for at most max_queue_wait_seconds; beyond that they are shed with
    # RESOURCE_EXHAUSTED / UNAVAILABLE at once), and Ask streams at once.
    max_concurrent_questions: int = Field(default=4, ge=1, le=10_000)
    max_concurrent_answers: int = Field(default=4, ge=1, le=10_000)
    max_queued_questions: int = Field(default=64, ge=0, le=100_000)
    max_queue_wait_seconds: float = Field(default=2.0, gt=0)

    # Locate: how many chunks retrieval returns before ranking (and how many each list, BM25
    # and vectors, contributes before fusion), and the result sizes.
    search_top_k: int = Field(default=150, ge=1, le=500)
    search_candidates_per_list: int = Field(default=150, ge=1, le=500)
    # Retrieval's file list: files ranked by their chunks' BM25 among a large lexical pool
    # join the candidates (0 = off).
    search_top_files: int = Field(default=100, ge=0, le=1000)
    # Retrieval's whole-file list (one BM25 document per file): features of the learned ranker.
    search_whole_files: int = Field(default=100, ge=0, le=1000)
    # The chunk list of each part of the question (its title, its opening) searched alone, by
    # BM25: features of the learned ranker (0 = not searched).
    search_part_chunks: int = Field(default=150, ge=0, le=500)
    # Scopes wider than a project (Locate, Search): at most this many projects, asked at most
    # scope_parallelism at a time.
    max_scope_projects: int = Field(default=50, ge=1, le=1000)
    scope_parallelism: int = Field(default=4, ge=1, le=64)
    default_max_files: int = Field(default=10, ge=1)
    default_max_symbols: int = Field(default=20, ge=1)
    max_files_limit: int = Field(default=100, ge=1)
    max_symbols_limit: int = Field(default=200, ge=1)
    default_impact_depth: int = Field(default=2, ge=1)
    max_impact_depth: int = Field(default=5, ge=1)
    impact_seed_symbols: int = Field(default=5, ge=0, le=50)
    impact_limit: int = Field(default=50, ge=1)
    # Identifiers from the question looked up by exact name in the ast service (0 = none).
    identifier_lookups: int = Field(default=8, ge=0, le=50)
    # Graph propagation: the first ranking's best symbols whose neighbours (one hop: members,
    # callees, callers, bases) are ranked too (0 = off), and how many neighbours at most, shared
    # out per seed. Impact lists a seed's callers before its members, so a small share would
    # leave out the methods of a class that many tests call.
    graph_seed_symbols: int = Field(default=8, ge=0, le=50)
    graph_neighbor_limit: int = Field(default=1000, ge=1, le=5000)
    # Candidate recall: the functions and methods of the first ranking's best files join the
    # candidates (ast ListFileSymbols; 0 files = off), at most this many per file, in source
    # order. The cap only guards against generated files: a header-only C++ library or a
    # `utils.py` holds hundreds of callables, and a cap of 200 left every one after the 200th
    # out of reach (bench/RESULTS.md, session 16).
    outline_files: int = Field(default=10, ge=0, le=50)
    outline_symbols_per_file: int = Field(default=5000, ge=1, le=5000)
    # The change history (ingestion ScoreFileHistory) of at most this many candidate files
    # (0 = none): features of the learned ranking.
    history_paths: int = Field(default=2000, ge=0, le=2000)
    # The question's vector similarity to the hand ranking's best candidate symbols (retrieval
    # ScoreSymbols over the stored vectors): features of the learned ranking; false = never ask.
    score_symbol_vectors: bool = True
    # Overrides of RankingWeights by field name, as JSON
    # (LOCUS_GATEWAY_RANKING_WEIGHTS='{"file_context": 0.3}'); unknown names are refused.
    ranking_weights: dict[str, float] = Field(default_factory=dict)
    # Which ranking orders Locate's candidates: "learned" (the model shipped with the gateway,
    # or ranker_model_path; trained by `make train-ranker`) or "hand" (RankingV1's weights).
    # The hand ranking always picks the graph seeds, so both rank the same candidates.
    ranker: Literal["learned", "hand"] = "learned"
    ranker_model_path: Path | None = None

    # Optional rerank stage after ranking: a rerank endpoint (vLLM / Jina / Cohere /
    # llama.cpp API, POST {rerank_url}/rerank) reorders the best rerank_top_n symbols by
    # z(ranking score) + rerank_weight * z(relevance) (0.25: measured out of fold, see
    # domain/reranking.py; "inf" follows the endpoint alone). Empty URL: no rerank. A failing
    # endpoint never fails Locate: the ranking is kept, with a note.
    rerank_url: str = ""
    rerank_model: str = ""
    rerank_api_key: SecretStr = SecretStr("")  # sent as Authorization: Bearer …
    rerank_top_n: int = Field(default=30, ge=2, le=200)
    rerank_max_document_chars: int = Field(default=2000, ge=100)
    rerank_timeout_seconds: float = Field(default=10.0, gt=0)
    rerank_weight: float = Field(default=0.25, gt=0)

    # Access (docs/adr/0008-access.md): every call needs a credential. API keys are made with
    # CreateApiKey / `locus keys create`. admin_key_file: the deployment's admin key (admin:*):
    # registered at start when the file holds one (a Kubernetes Secret), else created and
    # written there with 0600 permissions (`locus up` does this).
    admin_key_file: Path | None = None
    # OIDC bearer tokens (JWTs) from an identity provider, checked against its JWKS; off while
    # oidc_issuer is empty. The JWKS URL comes from the issuer's discovery document unless set.
    oidc_issuer: str = ""
    oidc_audience: str = ""
    oidc_jwks_url: str = ""
    oidc_algorithms: list[str] = Field(default_factory=lambda: ["RS256", "ES256"])
    # The claim that lists the caller's groups or roles (a dotted path such as
    # realm_access.roles works), and what each group may do, as JSON:
    # LOCUS_GATEWAY_OIDC_ROLE_MAPPING='{"locus-admins": ["admin:*"], "shop-devs": ["writer:shop"]}'
    oidc_groups_claim: str = "groups"
    oidc_role_mapping: dict[str, list[str]] = Field(default_factory=dict)
    oidc_jwks_cache_seconds: int = Field(default=300, ge=0, le=86_400)
    # A token naming a key id the cached keys lack fetches them again (the issuer rotated its
    # keys), at most once per this many seconds.
    oidc_jwks_refetch_cooldown_seconds: float = Field(default=30.0, ge=0, le=3600)
    oidc_leeway_seconds: int = Field(default=30, ge=0, le=600)

    # Ask: the context bundle sent to the answer service.
    default_context_chunks: int = Field(default=8, ge=1)
    max_context_chunks_limit: int = Field(default=32, ge=1)
    answer_max_tokens: int = Field(default=1024, ge=1)
    answer_min_relevance: float = Field(default=0.0, ge=0.0)

    @model_validator(mode="after")
    def _known_ranking_weights(self) -> GatewaySettings:
        known = {f.name for f in fields(RankingWeights) if f.type in ("float", "bool")}
        unknown = sorted(set(self.ranking_weights) - known)
        if unknown:
            raise ValueError(
                f"ranking_weights: unknown weight(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            )
        return self

    @model_validator(mode="after")
    def _rerank_model_named(self) -> GatewaySettings:
        if self.rerank_url and not self.rerank_model:
            raise ValueError(
                "rerank_url is set but rerank_model is not: name the model the endpoint serves "
                "(LOCUS_GATEWAY_RERANK_MODEL, e.g. BAAI/bge-reranker-v2-m3)"
            )
        return self

    @model_validator(mode="after")
    def _oidc_complete(self) -> GatewaySettings:
        if self.oidc_issuer and not self.oidc_audience:
            raise ValueError(
                "oidc_issuer is set but oidc_audience is not: name the audience the issuer puts "
                "in tokens for this gateway (LOCUS_GATEWAY_OIDC_AUDIENCE)"
            )
        for group, grants in self.oidc_role_mapping.items():
            for grant in grants:
                try:
                    Grant.parse(grant)
                except ValueError as error:
                    raise ValueError(f"oidc_role_mapping[{group!r}]: {error}") from None
        return self

    @model_validator(mode="after")
    def _defaults_within_limits(self) -> GatewaySettings:
        for default, limit in (
            ("default_max_files", "max_files_limit"),
            ("default_max_symbols", "max_symbols_limit"),
            ("default_impact_depth", "max_impact_depth"),
            ("default_context_chunks", "max_context_chunks_limit"),
        ):
            if getattr(self, default) > getattr(self, limit):
                raise ValueError(f"{default} must not exceed {limit}")
        return self
