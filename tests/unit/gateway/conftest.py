"""Fakes of the gateway's downstream ports (project directory, chunk search, symbol index,
impact, answer generation) and of the audit trail, for the Locate/Ask service-layer tests. The
request log is the real SQLAlchemy store on a temporary SQLite file (in-process)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace

from locus.database import Database
from locus.gateway.adapters.sql_metadata_store import SqlMetadataStore
from locus.gateway.asking import Asker
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import Ranking
from locus.gateway.domain.requests import Feedback, NewRequest
from locus.gateway.locating import Locator
from locus.gateway.reading import FileReader
from locus.gateway.request_log import RequestHistory, RequestJournal
from locus.gateway.settings import GatewaySettings
from locus.rpc import NotFound, ServiceError
from locus.v1 import answer_pb2, ast_pb2, common_pb2, impact_pb2, ingestion_pb2, retrieval_pb2

KINDS = {
    "module": common_pb2.SYMBOL_KIND_MODULE,
    "class": common_pb2.SYMBOL_KIND_CLASS,
    "function": common_pb2.SYMBOL_KIND_FUNCTION,
    "method": common_pb2.SYMBOL_KIND_METHOD,
    "signature": common_pb2.SYMBOL_KIND_SIGNATURE,
}


def make_symbol(qualified_name: str, path: str, lines: tuple[int, int], kind: str) -> Any:
    node_id = f"n:{qualified_name}"
    return common_pb2.Symbol(
        node_id=node_id,
        qualified_name=qualified_name,
        scope_name=qualified_name.split(".", 2)[-1],
        name=qualified_name.rsplit(".", 1)[-1],
        kind=KINDS[kind],
        location=common_pb2.CodeLocation(
            project_id="p_shop",
            file_id=f"f:{path}",
            relative_path=path,
            start_line=lines[0],
            end_line=lines[1],
            language="python",
            node_id=node_id,
        ),
    )


def make_chunk(chunk_id: str, symbol: Any, text: str) -> Any:
    location = common_pb2.CodeLocation()
    location.CopyFrom(symbol.location)
    return common_pb2.Chunk(
        chunk_id=chunk_id,
        location=location,
        symbol_node_id=symbol.node_id,
        symbol_qualified_name=symbol.qualified_name,
        text=text,
    )


PLACE = make_symbol(
    "shop.orders.OrderService.place_order", "src/shop/orders.py", (14, 21), "method"
)
CANCEL = make_symbol(
    "shop.orders.OrderService.cancel_order", "src/shop/orders.py", (23, 26), "method"
)
CHARGE = make_symbol("shop.payments.charge_card", "src/shop/payments.py", (8, 12), "function")
REFUND = make_symbol("shop.payments.refund_payment", "src/shop/payments.py", (15, 16), "function")
TEST_PLACE = make_symbol(
    "tests.test_orders.test_place_order", "tests/test_orders.py", (4, 6), "function"
)
SYMBOLS = {s.node_id: s for s in (PLACE, CANCEL, CHARGE, REFUND, TEST_PLACE)}
CHUNKS = {
    "c-place": make_chunk("c-place", PLACE, "def place_order(self, customer_id, items): ..."),
    "c-charge": make_chunk("c-charge", CHARGE, "def charge_card(customer_id, amount): ..."),
    "c-cancel": make_chunk("c-cancel", CANCEL, "def cancel_order(self, order_id): ..."),
    "c-test": make_chunk("c-test", TEST_PLACE, "def test_place_order(): ..."),
}


@dataclass
class FakeProjects:
    projects: dict[str, Any] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    # ScoreFileHistory: the history of these paths (commits, last change, message score)
    histories: dict[str, tuple[int, int, float]] = field(default_factory=dict)
    history_requests: list[Any] = field(default_factory=list)
    history_error: Exception | None = None
    # ListFiles / GetFileContent: relative path → the file's text (its sha256 is its path)
    files: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, *, scanned: bool = True) -> Any:
        project = ingestion_pb2.Project(
            project_id=f"p_{name}", name=name, latest_snapshot_id="snap_1" if scanned else ""
        )
        self.projects[name] = self.projects[project.project_id] = project
        return project

    async def get_project(self, project_ref: str) -> Any:
        self.calls.append(project_ref)
        if project_ref not in self.projects:
            raise NotFound(
                f"no project {project_ref!r}; create it first (locus project create NAME)"
            )
        return self.projects[project_ref]

    async def list_files(self, request: Any) -> Any:
        return ingestion_pb2.ListFilesResponse(
            files=[
                ingestion_pb2.FileRecord(
                    file_id=f"f_{path}", relative_path=path, sha256=path, language="python"
                )
                for path in sorted(self.files)
                if path.startswith(request.path_prefix)
            ]
        )

    async def get_file_content(self, request: Any) -> Any:
        lines = self.files[request.sha256].splitlines(keepends=True)
        last = min(request.end_line or len(lines), len(lines))
        return ingestion_pb2.GetFileContentResponse(
            sha256=request.sha256,
            text="".join(lines[request.start_line - 1 : last]),
            start_line=request.start_line,
            end_line=last,
            total_lines=len(lines),
        )

    async def score_file_history(self, request: Any) -> Any:
        self.history_requests.append(request)
        if self.history_error is not None:
            raise self.history_error
        return ingestion_pb2.ScoreFileHistoryResponse(
            commits_read=100 if self.histories else 0,
            files=[
                ingestion_pb2.FileHistory(
                    relative_path=path,
                    commits=commits,
                    last_change=last,
                    change_percentile=0.5,
                    message_score=score,
                )
                for path in request.relative_paths
                if path in self.histories
                for commits, last, score in [self.histories[path]]
            ],
        )


@dataclass
class FakeSearch:
    hits: list[tuple[str, float, int, int]] = field(default_factory=list)  # chunk, score, ranks
    requests: list[Any] = field(default_factory=list)
    error: ServiceError | None = None
    # ScoreSymbols: the stored vectors' similarity per symbol node id (others have no vector)
    similarities: dict[str, float] = field(default_factory=dict)
    score_requests: list[Any] = field(default_factory=list)
    score_error: ServiceError | None = None

    async def score_symbols(self, request: Any) -> Any:
        self.score_requests.append(request)
        if self.score_error is not None:
            raise self.score_error
        scored = [
            (i, self.similarities[i]) for i in request.symbol_node_ids if i in self.similarities
        ]
        return retrieval_pb2.ScoreSymbolsResponse(
            symbols=[
                retrieval_pb2.SymbolSimilarity(node_id=node_id, similarity=value)
                for node_id, value in sorted(scored, key=lambda item: -item[1])
            ],
            chunks_scored=len(scored),
        )

    async def search(self, request: Any) -> Any:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return retrieval_pb2.SearchResponse(
            hits=[
                retrieval_pb2.SearchHit(
                    chunk=CHUNKS[chunk_id],
                    score=score,
                    lexical_rank=lexical,
                    vector_rank=vector,
                )
                for chunk_id, score, lexical, vector in self.hits
            ],
            mode=retrieval_pb2.SEARCH_MODE_HYBRID,
        )


@dataclass
class FakeSymbols:
    enrich_requests: list[Any] = field(default_factory=list)
    lookups: list[Any] = field(default_factory=list)
    lookup_error: ServiceError | None = None
    outlines: list[Any] = field(default_factory=list)
    text_requests: list[Any] = field(default_factory=list)
    texts_error: ServiceError | None = None

    async def get_symbol_texts(self, request: Any) -> Any:
        """Each symbol's own chunk (CHUNKS), as the ast service answers GetSymbolTexts."""
        self.text_requests.append(request)
        if self.texts_error is not None:
            raise self.texts_error
        own = {c.symbol_node_id: c for c in CHUNKS.values()}
        response = ast_pb2.GetSymbolTextsResponse()
        for node_id in request.node_ids:
            if node_id in own:
                chunk = own[node_id]
                response.symbols.add(node_id=node_id, chunk_id=chunk.chunk_id, text=chunk.text)
            else:
                response.missing_node_ids.append(node_id)
        return response

    async def enrich(self, request: Any) -> Any:
        self.enrich_requests.append(request)
        found = []
        for chunk_id in request.chunk_ids:
            chunk = CHUNKS[chunk_id]
            found.append(ast_pb2.EnrichedChunk(chunk=chunk, symbol=SYMBOLS[chunk.symbol_node_id]))
        return ast_pb2.EnrichResponse(chunks=found)

    async def find_symbols(self, request: Any) -> Any:
        self.lookups.append(request)
        if self.lookup_error is not None:
            raise self.lookup_error
        matches = [s for s in SYMBOLS.values() if request.name in (s.name, s.qualified_name)]
        return ast_pb2.FindSymbolsResponse(symbols=matches)

    async def list_file_symbols(self, request: Any) -> Any:
        self.outlines.append(request)
        return ast_pb2.ListFileSymbolsResponse(
            files=[
                ast_pb2.FileSymbols(
                    file_id=file_id,
                    symbols=[
                        s
                        for s in SYMBOLS.values()
                        if s.location.file_id == file_id
                        and (not request.kinds or s.kind in request.kinds)
                    ][: request.limit_per_file or None],
                )
                for file_id in request.file_ids
            ]
        )


@dataclass
class FakeImpact:
    requests: list[Any] = field(default_factory=list)
    error: ServiceError | None = None
    # More one-hop neighbours of every seed: (symbol, relation, reverse).
    neighbours: list[tuple[Any, Any, bool]] = field(default_factory=list)

    async def compute(self, request: Any) -> Any:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        impacted = [impact_pb2.ImpactedSymbol(symbol=CHARGE, score=0.5, distance=1)]
        if request.each_seed:
            return impact_pb2.ComputeImpactResponse(
                each_seed=[
                    impact_pb2.SeedImpact(
                        seed_node_id=seed,
                        symbols=[
                            *impacted,
                            *(
                                impact_pb2.ImpactedSymbol(
                                    symbol=symbol,
                                    score=0.9,
                                    distance=1,
                                    reason=[
                                        impact_pb2.ImpactStep(
                                            relation=relation,
                                            reverse=reverse,
                                            from_node_id=seed,
                                            to_node_id=symbol.node_id,
                                        )
                                    ],
                                )
                                for symbol, relation, reverse in self.neighbours
                            ),
                        ],
                    )
                    for seed in request.seed_node_ids
                ]
            )
        return impact_pb2.ComputeImpactResponse(symbols=impacted)


class FakeAnswerStream:
    """Plays scripted GenerateEvents; an exception in the script is raised at that point;
    ``hang`` waits forever (until cancelled) after the script."""

    def __init__(self, script: list[Any], hang: bool) -> None:
        self._script = script
        self._hang = hang
        self.cancelled = asyncio.Event()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._events()

    async def _events(self) -> AsyncIterator[Any]:
        for item in self._script:
            if isinstance(item, BaseException):
                raise item
            yield item
        if self._hang:
            await self.cancelled.wait()

    def cancel(self) -> None:
        self.cancelled.set()


@dataclass
class FakeAnswers:
    script: list[Any] = field(default_factory=list)
    hang: bool = False
    requests: list[Any] = field(default_factory=list)
    streams: list[FakeAnswerStream] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    def generate(self, request: Any) -> FakeAnswerStream:
        self.requests.append(request)
        stream = FakeAnswerStream(self.script, self.hang)
        self.streams.append(stream)
        self.started.set()
        return stream


@dataclass
class RecordingAudit:
    events: list[tuple[str, Any]] = field(default_factory=list)

    async def request_submitted(self, request: NewRequest) -> None:
        self.events.append(("request.submitted", request.request_id))

    async def request_completed(
        self, request_id: str, project_id: str, status: str, citations: int, latency_ms: int
    ) -> None:
        self.events.append(("answer.completed", (request_id, project_id, status, citations)))

    async def feedback_recorded(self, feedback: Feedback) -> None:
        self.events.append(("feedback.recorded", feedback.request_id))

    async def access_denied(
        self, request_id: str, principal: str, method: str, scope: str, code: str, reason: str
    ) -> None:
        self.events.append(("access.denied", (principal, method, scope, code)))


@dataclass
class RecordingReranker:
    """Keeps the ranking (or fails like an unreachable endpoint) and records what it got."""

    error: Exception | None = None
    calls: list[tuple[str, Ranking, dict[str, str]]] = field(default_factory=list)
    window: int = 30

    async def rerank(self, question: str, ranking: Ranking, texts: Mapping[str, str]) -> Ranking:
        self.calls.append((question, ranking, dict(texts)))
        if self.error is not None:
            raise self.error
        return ranking


@dataclass
class Service:
    """The Locate/Ask service layer wired to fakes, plus everything to inspect afterwards."""

    settings: GatewaySettings
    projects: FakeProjects
    search: FakeSearch
    symbols: FakeSymbols
    impact: FakeImpact
    answers: FakeAnswers
    reranker: RecordingReranker
    audit: RecordingAudit
    store: SqlMetadataStore
    journal: RequestJournal
    history: RequestHistory
    locator: Locator
    asker: Asker


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[Service]:
    # File outlines are off here (their test turns them on): each test sees the symbols of
    # its hits, lookups and graph hops only.
    settings = GatewaySettings(
        data_dir=tmp_path, search_top_k=40, impact_seed_symbols=2, outline_files=0
    )
    store = SqlMetadataStore(Database(f"sqlite+aiosqlite:///{tmp_path / 'gateway.db'}"))
    await store.initialize()
    projects, search, symbols = FakeProjects(), FakeSearch(), FakeSymbols()
    impact, answers, audit = FakeImpact(), FakeAnswers(), RecordingAudit()
    reranker = RecordingReranker()
    projects.add("shop")
    projects.add("fresh", scanned=False)
    journal = RequestJournal(store, audit)
    locator = Locator(
        settings,
        projects=projects,
        search=search,
        symbols=symbols,
        impact=impact,
        ranker=RankingV1(),
        reranker=reranker,
        tracer=trace.get_tracer("tests"),
    )
    try:
        yield Service(
            settings,
            projects,
            search,
            symbols,
            impact,
            answers,
            reranker,
            audit,
            store,
            journal,
            RequestHistory(store, audit),
            locator,
            Asker(settings, locator, answers, journal, FileReader(projects, projects)),
        )
    finally:
        await store.close()


GenerateEvent = Callable[..., Any]


@pytest.fixture
def symbol_of_kind() -> Callable[[str, str, str], Any]:
    """symbol_of_kind(qualified_name, path, kind) → a Symbol of the shop project (lines 3-9)."""
    return lambda qualified_name, path, kind: make_symbol(qualified_name, path, (3, 9), kind)


@pytest.fixture
def generate_event() -> GenerateEvent:
    """generate_event(text="..."), (citation=...), (final=...), ... → a GenerateEvent."""
    return answer_pb2.GenerateEvent
