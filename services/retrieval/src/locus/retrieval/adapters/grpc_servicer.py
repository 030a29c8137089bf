"""RetrievalService over gRPC: validates requests, maps domain errors to status codes."""

from __future__ import annotations

from locus.retrieval.adapters.proto_mapping import SEARCH_MODES, search_hit, search_mode_value
from locus.retrieval.domain.errors import (
    EmbedderUnavailable,
    IndexIncompatible,
    InvalidSearch,
    NothingIndexed,
)
from locus.retrieval.domain.model import FileHit
from locus.retrieval.domain.search_request import SearchLimits, plan_search, plan_symbol_scores
from locus.retrieval.foreground import ForegroundActivity
from locus.retrieval.searching import Searcher
from locus.rpc import FailedPrecondition, InvalidArgument, RpcContext, Unavailable
from locus.v1 import retrieval_pb2, retrieval_pb2_grpc


class RetrievalServicer(retrieval_pb2_grpc.RetrievalServiceServicer):
    def __init__(
        self, searcher: Searcher, limits: SearchLimits, activity: ForegroundActivity | None = None
    ) -> None:
        self._searcher = searcher
        self._limits = limits
        self._activity = activity or ForegroundActivity(quiet_seconds=0)

    async def Search(
        self, request: retrieval_pb2.SearchRequest, context: RpcContext
    ) -> retrieval_pb2.SearchResponse:
        with self._activity.working():  # the vectors lane waits while searches come
            return await self._search(request)

    async def _search(self, request: retrieval_pb2.SearchRequest) -> retrieval_pb2.SearchResponse:
        mode = SEARCH_MODES.get(request.mode)
        if mode is None:
            raise InvalidArgument(
                f"unknown search mode {request.mode}; use SEARCH_MODE_BM25, SEARCH_MODE_VECTOR "
                "or SEARCH_MODE_HYBRID"
            )
        filters = request.filters
        try:
            plan = plan_search(
                query=request.query,
                mode=mode,
                project_id=filters.project_id,
                subsystem=filters.subsystem,
                languages=list(filters.languages),
                path_prefix=filters.path_prefix,
                snapshot_id=filters.snapshot_id,
                top_k=request.top_k,
                top_k_lexical=request.top_k_lexical,
                top_k_vector=request.top_k_vector,
                rrf_k=request.rrf_k,
                top_files=request.top_files,
                top_whole_files=request.top_whole_files,
                whole_file_queries=list(request.whole_file_queries),
                limits=self._limits,
            )
            result = await self._searcher.search(plan)
        except InvalidSearch as error:
            raise InvalidArgument(str(error)) from error
        except (NothingIndexed, IndexIncompatible) as error:
            raise FailedPrecondition(str(error)) from error
        except EmbedderUnavailable as error:
            raise Unavailable(str(error)) from error
        return retrieval_pb2.SearchResponse(
            hits=[search_hit(hit) for hit in result.hits],
            mode=search_mode_value(result.mode),  # type: ignore[arg-type]
            files=[_file_hit(f) for f in result.files],
            whole_files=[_file_hit(f) for f in result.whole_files],
            whole_file_lists=[
                retrieval_pb2.WholeFileList(query=query, files=[_file_hit(f) for f in files])
                for query, files in result.whole_file_lists
            ],
        )

    async def ScoreSymbols(
        self, request: retrieval_pb2.ScoreSymbolsRequest, context: RpcContext
    ) -> retrieval_pb2.ScoreSymbolsResponse:
        with self._activity.working():
            try:
                plan = plan_symbol_scores(
                    query=request.query,
                    project_id=request.project_id,
                    symbol_node_ids=list(request.symbol_node_ids),
                    snapshot_id=request.snapshot_id,
                    limits=self._limits,
                )
                scores = await self._searcher.score_symbols(plan)
            except InvalidSearch as error:
                raise InvalidArgument(str(error)) from error
            except EmbedderUnavailable as error:
                raise Unavailable(str(error)) from error
        return retrieval_pb2.ScoreSymbolsResponse(
            symbols=[
                retrieval_pb2.SymbolSimilarity(node_id=node_id, similarity=similarity)
                for node_id, similarity in scores.similarity.items()
            ],
            chunks_scored=scores.chunks_scored,
        )


def _file_hit(f: FileHit) -> retrieval_pb2.FileHit:
    return retrieval_pb2.FileHit(
        file_id=f.file_id,
        relative_path=f.path,
        language=f.language,
        rank=f.rank,
        score=f.score,
        best_score=f.best_score,
        chunks=f.chunks,
    )
