"""Service layer of Locate: from a question to ranked files and symbols, without an LLM.

1. validate the question and limits; resolve the project (ingestion) and require a scan;
2. hybrid Search (retrieval, a generous top_k) while the names the question mentions are looked
   up exactly in the symbol index (ast FindSymbols);
3. Enrich the hits (ast): chunk → innermost symbol;
4. rank (``Ranker``); one hop in the code graph from the best symbols (impact Compute); rank
   again with those neighbours, then the optional ``Reranker``;
5. impact of the top symbols (impact Compute: callers, dependents) — optional: when impact
   fails, the result is still returned and the request notes why impact is missing.
Every hop runs under its own deadline (the peer clients set them)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import grpc
from opentelemetry import trace

from locus.gateway.adapters.proto_mapping import (
    CALLABLE_KIND_VALUES,
    chunk_match,
    file_history,
    file_match,
    graph_neighbors,
    locate_response,
    part_hit,
    symbol_ref,
)
from locus.gateway.domain.candidates import candidates_to_json
from locus.gateway.domain.document_sections import document_candidates
from locus.gateway.domain.errors import ProjectNotScanned, RerankerUnavailable
from locus.gateway.domain.features import vector_scored_symbols
from locus.gateway.domain.ports import Reranker
from locus.gateway.domain.question_cues import QuestionCues, extract_cues
from locus.gateway.domain.question_digest import digest_question
from locus.gateway.domain.question_parts import question_parts
from locus.gateway.domain.ranking_types import (
    RRF_K,
    FileMatch,
    GraphNeighbor,
    PartHit,
    RankedSymbol,
    Ranker,
    Ranking,
    RankingInput,
    SymbolRef,
    candidate_paths,
)
from locus.gateway.domain.reranking import retrieved_code
from locus.gateway.domain.symbol_kinds import MODULE_KINDS
from locus.gateway.domain.validation import (
    bounded_count,
    normalize_path_prefix,
    validate_question,
)
from locus.gateway.downstream import ChunkSearch, ImpactAnalysis, ProjectDirectory, SymbolIndex
from locus.gateway.request_log import OpenRequest
from locus.gateway.settings import GatewaySettings
from locus.rpc import ServiceError
from locus.v1 import ast_pb2, common_pb2, gateway_pb2, impact_pb2, ingestion_pb2, retrieval_pb2

log = logging.getLogger(__name__)
SYMBOL_TEXTS_PER_CALL = 100  # ast GetSymbolTexts takes at most this many

NAME_LOOKUP_PAGE = 5


def not_scanned_message(project_name: str) -> str:
    return f"project {project_name} has not been scanned yet; run locus scan {project_name} --wait"


@dataclass(frozen=True)
class LocateQuery:
    project_ref: str
    question: str
    max_files: int = 0  # 0 = default
    max_symbols: int = 0
    path_prefix: str = ""
    include_tests: bool = False
    impact_depth: int = 0
    include_candidates: bool = False  # return the ranking's input as JSON (for training)


@dataclass(frozen=True)
class Located:
    response: gateway_pb2.LocateResponse
    project: Any  # ingestion_pb2.Project
    question: str
    ranking: Ranking
    hits: list[Any]  # retrieval SearchHits, in fused order
    chunks: dict[str, Any]  # chunk_id → Chunk (with its text)


@dataclass(frozen=True)
class Searched:
    """What Locate's first step brought back (``Locator._search_and_look_up``)."""

    hits: list[Any]  # retrieval SearchHits, in fused order
    files: list[FileMatch]  # retrieval's file list
    whole_files: list[FileMatch]  # the whole-file list
    whole_file_parts: dict[str, list[FileMatch]]  # the whole-file list of each part, by part
    part_chunks: dict[str, list[PartHit]]  # the chunk list of each part, by part
    named: list[Any]  # the symbols the question names (ast Symbols)


def ranker_name(ranker: Ranker) -> str:
    return str(getattr(ranker, "name", type(ranker).__name__))


class Locator:
    def __init__(
        self,
        settings: GatewaySettings,
        projects: ProjectDirectory,
        search: ChunkSearch,
        symbols: SymbolIndex,
        impact: ImpactAnalysis,
        ranker: Ranker,
        reranker: Reranker,
        tracer: trace.Tracer,
        seed_ranker: Ranker | None = None,
    ) -> None:
        """``seed_ranker`` picks the symbols whose graph neighbours join the candidates (the
        first ranking); ``ranker`` orders the final candidates. Both default to ``ranker``."""
        self._settings = settings
        self._projects = projects
        self._search = search
        self._symbols = symbols
        self._impact = impact
        self._ranker = ranker
        self._seed_ranker = seed_ranker or ranker
        self._reranker = reranker
        self._tracer = tracer

    async def locate(self, query: LocateQuery, entry: OpenRequest) -> Located:
        s = self._settings
        # A long paste (a whole log) is reduced to its telling lines; the digest is what is
        # searched, ranked and answered (the request log keeps the question as asked).
        question = digest_question(validate_question(query.question))
        max_files = bounded_count(
            "max_files", query.max_files, default=s.default_max_files, limit=s.max_files_limit
        )
        max_symbols = bounded_count(
            "max_symbols",
            query.max_symbols,
            default=s.default_max_symbols,
            limit=s.max_symbols_limit,
        )
        impact_depth = bounded_count(
            "impact_depth",
            query.impact_depth,
            default=s.default_impact_depth,
            limit=s.max_impact_depth,
        )
        path_prefix = normalize_path_prefix(query.path_prefix)
        project = await self.resolve_scanned_project(query.project_ref, entry)
        cues = extract_cues(question)

        with entry.timed("search"):
            searched = await self._search_and_look_up(question, project, path_prefix, cues)
        hits, named = searched.hits, searched.named
        enriched: dict[str, Any] = {}
        if hits:
            with entry.timed("enrich"):
                response = await self._symbols.enrich(
                    ast_pb2.EnrichRequest(
                        project_id=project.project_id,
                        chunk_ids=list(dict.fromkeys(h.chunk.chunk_id for h in hits)),
                        symbols_only=True,
                    )
                )
            enriched = {e.chunk.chunk_id: e for e in response.chunks}

        known_symbols: dict[str, Any] = {}
        matches = []
        for rank, hit in enumerate(hits, start=1):
            item = enriched.get(hit.chunk.chunk_id)
            if item is not None and item.HasField("symbol") and item.symbol.node_id:
                known_symbols.setdefault(item.symbol.node_id, item.symbol)
            matches.append(chunk_match(rank, hit, item))
        for symbol in named:
            known_symbols.setdefault(symbol.node_id, symbol)

        candidate_chunks, named_refs = document_candidates(
            cues, matches, [symbol_ref(symbol) for symbol in named]
        )
        ranking_input = RankingInput(
            cues=cues,
            chunks=candidate_chunks,
            named_symbols=named_refs,
            file_hits=searched.files,
            include_tests=query.include_tests,
            max_files=max_files,
            max_symbols=max(max_symbols, s.graph_seed_symbols),
        )
        with entry.timed("rank"), self._tracer.start_as_current_span("gateway.rank"):
            ranking = self._seed_ranker.rank(ranking_input)
        neighbors, outlines = await asyncio.gather(
            self._graph_neighbors(project.project_id, ranking, entry),
            self._outline_symbols(project.project_id, ranking, entry),
        )
        final_input = replace(
            ranking_input,
            graph_neighbors=neighbors,
            file_symbols=outlines,
            whole_file_hits=searched.whole_files,
            whole_file_parts=searched.whole_file_parts,
            part_chunks=searched.part_chunks,
            max_symbols=max_symbols,
        )
        history, similarity = await asyncio.gather(
            self._history(project.project_id, question, final_input, query, entry),
            self._symbol_vectors(project, question, final_input, query, entry),
        )
        final_input = replace(final_input, **history, **similarity)
        with entry.timed("rank"), self._tracer.start_as_current_span("gateway.rank") as span:
            ranking = self._ranker.rank(final_input)
            span.set_attribute("locus.ranker", ranker_name(self._ranker))
        chunks: dict[str, Any] = {}
        for hit in hits:
            chunk = hit.chunk
            item = enriched.get(chunk.chunk_id)
            if not chunk.text and item is not None and item.chunk.text:
                chunk = item.chunk
            chunks.setdefault(chunk.chunk_id, chunk)
        ranking = await self._rerank(project.project_id, question, ranking, chunks, entry)

        impact = await self._impact_of(project.project_id, ranking, impact_depth, entry)
        response = locate_response(
            entry.request_id, ranking, known_symbols, impact, project.latest_snapshot_id
        )
        response.ranker = ranker_name(self._ranker)
        for located_file in response.files:  # a caller reading one list never guesses whose
            located_file.project_id, located_file.project_name = project.project_id, project.name
        if query.include_candidates:
            response.candidates_json = json.dumps(
                candidates_to_json(question, final_input), separators=(",", ":")
            )
        return Located(
            response=response,
            project=project,
            question=question,
            ranking=ranking,
            hits=hits,
            chunks=chunks,
        )

    async def resolve_scanned_project(self, project_ref: str, entry: OpenRequest) -> Any:
        """The project (NOT_FOUND from ingestion when unknown); refused until a scan completed."""
        with entry.timed("resolve_project"):
            project = await self._projects.get_project(project_ref.strip())
        entry.project_id, entry.project_name = project.project_id, project.name
        if not project.latest_snapshot_id:
            raise ProjectNotScanned(not_scanned_message(project.name))
        entry.snapshot_id = project.latest_snapshot_id
        return project

    async def _search_and_look_up(
        self, question: str, project: Any, path_prefix: str, cues: QuestionCues
    ) -> Searched:
        """Retrieval's lists for the question and for each part of it alone, and the symbols
        named in the question, looked up at the same time."""
        lookups = asyncio.ensure_future(self._look_up_names(project.project_id, path_prefix, cues))
        filters = retrieval_pb2.SearchFilters(
            project_id=project.project_id, path_prefix=path_prefix
        )
        parts = question_parts(question)
        part_chunks = asyncio.ensure_future(self._search_parts(parts, filters))
        whole_file_parts = parts if self._settings.search_whole_files else {}
        try:
            response = await self._search.search(
                retrieval_pb2.SearchRequest(
                    query=question,
                    mode=retrieval_pb2.SEARCH_MODE_HYBRID,
                    filters=filters,
                    top_k=self._settings.search_top_k,
                    top_k_lexical=self._settings.search_candidates_per_list,
                    top_k_vector=self._settings.search_candidates_per_list,
                    # The fusion the ranking's columns and evidence were built with, whatever
                    # default a deployment gives retrieval's own searches.
                    rrf_k=RRF_K,
                    top_files=self._settings.search_top_files,
                    top_whole_files=self._settings.search_whole_files,
                    whole_file_queries=list(whole_file_parts.values()),
                )
            )
        except ServiceError as error:
            lookups.cancel()
            part_chunks.cancel()
            if error.code == grpc.StatusCode.FAILED_PRECONDITION:
                # Retrieval has no chunks of the project (yet): the same advice as unscanned.
                raise ProjectNotScanned(
                    f"{not_scanned_message(project.name)} (retrieval: {error.message})"
                ) from error
            raise
        except BaseException:
            lookups.cancel()
            part_chunks.cancel()
            raise
        return Searched(
            hits=list(response.hits),
            files=[file_match(f) for f in response.files],
            whole_files=[file_match(f) for f in response.whole_files],
            whole_file_parts={
                part: [file_match(f) for f in listed.files]
                for part, listed in zip(whole_file_parts, response.whole_file_lists, strict=False)
            },
            part_chunks=await part_chunks,
            named=await lookups,
        )

    async def _search_parts(
        self, parts: Mapping[str, str], filters: Any
    ) -> dict[str, list[PartHit]]:
        """Each part of the question searched alone, by BM25 over the project's chunks
        (features of the learned ranking). Best effort: a part whose search fails has no
        list, and the failure is logged."""
        limit = self._settings.search_part_chunks
        if not limit:
            return {}

        async def search(part: str, text: str) -> tuple[str, list[PartHit]]:
            try:
                response = await self._search.search(
                    retrieval_pb2.SearchRequest(
                        query=text,
                        mode=retrieval_pb2.SEARCH_MODE_BM25,
                        filters=filters,
                        top_k=limit,
                        top_k_lexical=limit,
                    )
                )
            except ServiceError as error:
                log.info("search by the question's %s skipped: %s", part, error.message)
                return part, []
            return part, [part_hit(hit) for hit in response.hits]

        found = await asyncio.gather(*(search(part, text) for part, text in parts.items()))
        return {part: hits for part, hits in found if hits}

    async def _look_up_names(
        self, project_id: str, path_prefix: str, cues: QuestionCues
    ) -> list[Any]:
        """Symbols whose name or qualified name is exactly a name from the question. Best
        effort: search results do not depend on it, so a failing lookup is only logged."""
        names = cues.lookup_names(self._settings.identifier_lookups)
        if not names:
            return []

        async def look_up(name: str) -> list[Any]:
            try:
                response = await self._symbols.find_symbols(
                    ast_pb2.FindSymbolsRequest(
                        project_id=project_id,
                        name=name,
                        exact=True,
                        path_prefix=path_prefix,
                        without_signatures=True,
                        page=common_pb2.PageRequest(page_size=NAME_LOOKUP_PAGE),
                    )
                )
            except ServiceError as error:
                log.info("symbol lookup of %r skipped: %s", name, error.message)
                return []
            return list(response.symbols)

        found: dict[str, Any] = {}
        for symbols in await asyncio.gather(*(look_up(name) for name in names)):
            for symbol in symbols:
                found.setdefault(symbol.node_id, symbol)
        return list(found.values())

    async def _graph_neighbors(
        self, project_id: str, ranking: Ranking, entry: OpenRequest
    ) -> list[GraphNeighbor]:
        """One hop in the code graph from the first ranking's best symbols (impact Compute):
        their members, callees, callers, bases and subclasses. Best effort, like impact."""
        seeds = [s.symbol.node_id for s in ranking.symbols if s.symbol.kind not in MODULE_KINDS][
            : self._settings.graph_seed_symbols
        ]
        if not seeds:
            return []
        # Each seed walked alone (one call, each_seed), each with its share of the neighbour
        # budget: walked together, a big class's callers would crowd out a small one's members.
        share = max(self._settings.graph_neighbor_limit // len(seeds), 10)
        try:
            with entry.timed("graph"):
                response = await self._impact.compute(
                    impact_pb2.ComputeImpactRequest(
                        project_id=project_id,
                        seed_node_ids=seeds,
                        depth=1,
                        limit=share,
                        each_seed=True,
                        # Signatures and the overrides between methods (impact's own
                        # relation) are no candidates: the ranking was trained on the graph
                        # without them, and walked they would use up each seed's share.
                        without_signatures=True,
                    )
                )
        except ServiceError as error:
            note = f"graph propagation skipped: {error.message}"
            log.warning("%s", note)
            entry.notes.append(note)
            return []
        return [
            neighbor
            for walked in response.each_seed
            for neighbor in graph_neighbors(walked.seed_node_id, walked)
        ]

    async def _symbol_vectors(
        self,
        project: Any,
        question: str,
        request: RankingInput,
        query: Any,
        entry: OpenRequest,
    ) -> dict[str, Any]:
        """The question's vector similarity to the hand ranking's best candidate symbols
        (retrieval ScoreSymbols), for a ranker that reads it and for candidate dumps, as the
        RankingInput fields to replace. Best effort: without it the learned ranking scores the
        symbols as having no vectors, as it does before the vectors lane is done."""
        wanted = query.include_candidates or getattr(self._ranker, "uses_vectors", False)
        if not wanted or not self._settings.score_symbol_vectors:
            return {}
        hand = getattr(self._ranker, "hand", self._seed_ranker)
        symbols = vector_scored_symbols(request, hand)
        if not symbols:
            return {}
        try:
            with entry.timed("vectors"):
                response = await self._search.score_symbols(
                    retrieval_pb2.ScoreSymbolsRequest(
                        project_id=project.project_id,
                        query=question,
                        symbol_node_ids=[s.node_id for s in symbols],
                        snapshot_id=project.latest_snapshot_id,
                    )
                )
        except ServiceError as error:
            note = f"vector similarity skipped: {error.message}"
            log.warning("%s", note)
            entry.notes.append(note)
            return {}
        return {"symbol_similarity": {s.node_id: s.similarity for s in response.symbols}}

    async def _history(
        self,
        project_id: str,
        question: str,
        request: RankingInput,
        query: Any,
        entry: OpenRequest,
    ) -> dict[str, Any]:
        """The candidates' change history (ingestion ScoreFileHistory), for a ranker that reads
        it and for candidate dumps, as the RankingInput fields to replace. Best effort, like the
        graph: without it the learned ranking scores the files as having no history."""
        if not (query.include_candidates or getattr(self._ranker, "uses_history", False)):
            return {}
        paths = candidate_paths(request)[: self._settings.history_paths]
        if not paths:  # no candidates, or history_paths = 0
            return {}
        try:
            with entry.timed("history"):
                response = await self._projects.score_file_history(
                    ingestion_pb2.ScoreFileHistoryRequest(
                        project_id=project_id, question=question, relative_paths=paths
                    )
                )
        except ServiceError as error:
            note = f"change history skipped: {error.message}"
            log.warning("%s", note)
            entry.notes.append(note)
            return {}
        return {
            "file_history": [file_history(item) for item in response.files],
            "history_commits": response.commits_read,
        }

    async def _outline_symbols(
        self, project_id: str, ranking: Ranking, entry: OpenRequest
    ) -> list[SymbolRef]:
        """The functions and methods of the first ranking's best files (ast ListFileSymbols,
        one call for all of them), so a function no chunk matched can still be ranked. Best
        effort, like the graph."""
        files = ranking.files[: self._settings.outline_files]
        if not files:
            return []
        try:
            with entry.timed("outline"):
                response = await self._symbols.list_file_symbols(
                    ast_pb2.ListFileSymbolsRequest(
                        project_id=project_id,
                        file_ids=[file.file_id for file in files],
                        kinds=CALLABLE_KIND_VALUES,
                        limit_per_file=self._settings.outline_symbols_per_file,
                    )
                )
        except ServiceError as error:
            note = f"file outlines skipped: {error.message}"
            log.warning("%s", note)
            entry.notes.append(note)
            return []
        return [symbol_ref(s) for listed in response.files for s in listed.symbols]

    async def _rerank(
        self,
        project_id: str,
        question: str,
        ranking: Ranking,
        chunks: dict[str, Any],
        entry: OpenRequest,
    ) -> Ranking:
        """The optional rerank stage. Best effort, like impact: when the reranker fails, the
        ranking is kept and the request notes why it was not reranked."""
        texts = {chunk_id: chunk.text for chunk_id, chunk in chunks.items() if chunk.text}
        window = ranking.symbols[: self._reranker.window]
        texts.update(await self._own_code(project_id, window, texts, entry))
        try:
            with entry.timed("rerank"):
                return await self._reranker.rerank(question, ranking, texts)
        except RerankerUnavailable as error:
            note = f"rerank skipped: {error}"
            log.warning("%s", note)
            entry.notes.append(note)
            trace.get_current_span().add_event("rerank skipped", {"reason": str(error)})
            return ranking

    async def _own_code(
        self,
        project_id: str,
        window: Sequence[RankedSymbol],
        texts: Mapping[str, str],
        entry: OpenRequest,
    ) -> dict[str, str]:
        """Node id → own first chunk, for the reranked symbols that cite no retrieved chunk
        (graph neighbours, symbols found by name, outlined functions: often half the window).
        Best effort: without it such a symbol is reranked on its path and name alone."""
        wanted = [r.symbol.node_id for r in window if not retrieved_code(r, texts)]
        if not wanted:
            return {}
        try:
            with entry.timed("symbol_texts"):
                responses = await asyncio.gather(
                    *(
                        self._symbols.get_symbol_texts(
                            ast_pb2.GetSymbolTextsRequest(
                                project_id=project_id,
                                node_ids=wanted[begin : begin + SYMBOL_TEXTS_PER_CALL],
                            )
                        )
                        for begin in range(0, len(wanted), SYMBOL_TEXTS_PER_CALL)
                    )
                )
        except ServiceError as error:
            note = f"rerank documents without code: {error.message}"
            log.warning("%s", note)
            entry.notes.append(note)
            return {}
        return {s.node_id: s.text for r in responses for s in r.symbols if s.text}

    async def _impact_of(
        self, project_id: str, ranking: Ranking, depth: int, entry: OpenRequest
    ) -> Any:
        seeds = [s.symbol.node_id for s in ranking.symbols[: self._settings.impact_seed_symbols]]
        if not seeds:
            return impact_pb2.ComputeImpactResponse()
        try:
            with entry.timed("impact"):
                return await self._impact.compute(
                    impact_pb2.ComputeImpactRequest(
                        project_id=project_id,
                        seed_node_ids=seeds,
                        depth=depth,
                        limit=self._settings.impact_limit,
                    )
                )
        except ServiceError as error:
            note = f"impact analysis skipped: {error.message}"
            log.warning("%s", note)
            entry.notes.append(note)
            trace.get_current_span().add_event("impact skipped", {"reason": error.message})
            return impact_pb2.ComputeImpactResponse()
