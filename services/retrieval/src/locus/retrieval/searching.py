"""Service layer of search: a validated plan in, fused hits out.

BM25 and vector candidates (and, when asked, whole files by BM25) are fetched concurrently
(each index in its own worker thread),
then fused by reciprocal rank fusion; a single-list mode fuses one list, so the score of a
hit always means the same thing. Vectors are an enhancement: a project whose vectors are not in
yet is searched lexically, and a hybrid search goes on lexically while the embedder is away.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field

from locus.retrieval.adapters.store import RetrievalStore
from locus.retrieval.domain.errors import EmbedderUnavailable, NothingIndexed
from locus.retrieval.domain.fusion import fuse
from locus.retrieval.domain.model import (
    ChunkFilter,
    FileHit,
    FusedHit,
    ScoredChunk,
    SearchMode,
)
from locus.retrieval.domain.ports import BM25Index, Embedder, VectorIndex
from locus.retrieval.domain.search_request import SearchPlan, SymbolScorePlan

log = logging.getLogger(__name__)


# Chunks read per scored symbol: a symbol's best chunk is among the nearest this many times
# as many chunks as symbols were asked for (most symbols have one or two chunks).
CHUNKS_PER_SCORED_SYMBOL = 8
# The query vectors of the latest questions: Locate searches a question and then scores its
# candidates with the same vector.
QUERY_VECTORS_KEPT = 64


@dataclass(frozen=True)
class SymbolScores:
    similarity: dict[str, float]  # node id -> the cosine of its best chunk, best first
    chunks_scored: int


@dataclass(frozen=True)
class SearchResult:
    hits: list[FusedHit]
    mode: SearchMode
    files: list[FileHit] = field(default_factory=list)
    whole_files: list[FileHit] = field(default_factory=list)
    # (query, its whole-file list) per SearchPlan.whole_file_queries, in order
    whole_file_lists: list[tuple[str, list[FileHit]]] = field(default_factory=list)


class Searcher:
    def __init__(
        self,
        store: RetrievalStore,
        bm25: BM25Index,
        vectors: VectorIndex,
        embedder: Embedder,
    ) -> None:
        self._store = store
        self._bm25 = bm25
        self._vectors = vectors
        self._embedder = embedder
        self._query_vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()

    async def search(self, plan: SearchPlan) -> SearchResult:
        if not await self._store.project_has_chunks(plan.project_id):
            raise NothingIndexed(
                f"project {plan.project_id} has no indexed chunks yet; run a scan "
                "(locus scan) and wait for it to complete"
            )
        # A snapshot retrieval has not seen changed no file: every chunk indexed so far is
        # valid in it, so it adds no bound.
        max_seq = await self._max_snapshot_seq(plan.project_id, plan.snapshot_id)
        filters = ChunkFilter(
            project_id=plan.project_id,
            subsystem=plan.subsystem,
            languages=plan.languages,
            path_prefix=plan.path_prefix,
            max_snapshot_seq=max_seq,
        )
        (lexical, files), vector, whole_files = await asyncio.gather(
            self._lexical(plan, filters),
            self._vector(plan, filters),
            self._whole_files(plan, filters),
        )
        return SearchResult(
            fuse(lexical, vector, k=plan.rrf_k, limit=plan.top_k),
            plan.mode,
            files,
            whole_files[plan.query],
            [(query, whole_files[query]) for query in plan.whole_file_queries],
        )

    async def _lexical(
        self, plan: SearchPlan, filters: ChunkFilter
    ) -> tuple[list[ScoredChunk], list[FileHit]]:
        """One lexical search serves both lists: its head is fused, its pool ranks files."""
        if not plan.mode.uses_lexical:
            return [], []
        return await self._bm25.search_with_files(
            plan.query, filters, plan.top_k_lexical, plan.file_pool, plan.top_files
        )

    async def _whole_files(
        self, plan: SearchPlan, filters: ChunkFilter
    ) -> dict[str, list[FileHit]]:
        """The whole-file list of the query and of each whole-file query, by query text, each
        distinct text searched once (a one-line question is its own title)."""
        queries = list(dict.fromkeys((plan.query, *plan.whole_file_queries)))
        if not plan.mode.uses_lexical or not plan.top_whole_files:
            return {query: [] for query in queries}
        lists = await asyncio.gather(
            *(self._bm25.search_whole_files(q, filters, plan.top_whole_files) for q in queries)
        )
        return dict(zip(queries, lists, strict=True))

    async def _vector(self, plan: SearchPlan, filters: ChunkFilter) -> list[ScoredChunk]:
        if not plan.mode.uses_vectors:
            return []
        try:
            query_vector = await self._query_vector(plan.query)
        except EmbedderUnavailable as error:
            if plan.mode is SearchMode.VECTOR:
                raise
            # Hybrid keeps working on its lexical list while the embedder is away.
            log.warning("hybrid search without vectors: %s", error)
            return []
        return await self._vectors.search(query_vector, filters, plan.top_k_vector)

    async def _max_snapshot_seq(self, project_id: str, snapshot_id: str) -> int | None:
        """The bound a snapshot puts on the chunks searched; none without one."""
        if not snapshot_id:
            return None
        return await self._store.snapshot_seq(project_id, snapshot_id)

    async def _query_vector(self, query: str) -> list[float]:
        """The query's vector, embedded once for the latest ``QUERY_VECTORS_KEPT`` queries
        (keyed by the embedder's model, so a new model never meets an old vector)."""
        key = (self._embedder.model_id, query)
        vector = self._query_vectors.get(key)
        if vector is None:
            (embedded,) = await self._embedder.embed([query])
            vector = embedded.tolist()
            self._query_vectors[key] = vector
            while len(self._query_vectors) > QUERY_VECTORS_KEPT:
                self._query_vectors.popitem(last=False)
        else:
            self._query_vectors.move_to_end(key)
        return vector

    async def score_symbols(self, plan: SymbolScorePlan) -> SymbolScores:
        """The query's cosine similarity to each symbol's best stored chunk. Symbols without a
        vector (not embedded yet, or unknown) are left out; a project without vectors scores
        nothing. Raises ``EmbedderUnavailable``."""
        if not plan.symbol_node_ids:
            return SymbolScores({}, 0)
        max_seq = await self._max_snapshot_seq(plan.project_id, plan.snapshot_id)
        filters = ChunkFilter(
            project_id=plan.project_id,
            max_snapshot_seq=max_seq,
            symbol_node_ids=plan.symbol_node_ids,
        )
        vector = await self._query_vector(plan.query)
        limit = CHUNKS_PER_SCORED_SYMBOL * len(plan.symbol_node_ids)
        found = await self._vectors.search(vector, filters, limit)
        best: dict[str, float] = {}
        for scored in found:  # nearest first: a symbol's first chunk is its best
            best.setdefault(scored.chunk.symbol_node_id, scored.score)
        return SymbolScores(best, len(found))
