"""Validation of a search request into a ``SearchPlan`` the service can run as is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from locus.retrieval.domain.errors import InvalidSearch
from locus.retrieval.domain.model import SearchMode

MAX_FILTER_VALUE_CHARS = 1000
MAX_LANGUAGES = 50
MAX_WHOLE_FILE_QUERIES = 8


@dataclass(frozen=True, slots=True)
class SearchLimits:
    default_top_k: int = 10
    max_top_k: int = 100
    default_candidates: int = 50
    max_candidates: int = 500
    default_rrf_k: int = 60
    max_query_chars: int = 16000
    max_top_files: int = 1000
    file_pool: int = 2000  # lexical chunks aggregated into the file list


@dataclass(frozen=True, slots=True)
class SearchPlan:
    query: str
    mode: SearchMode
    project_id: str
    subsystem: str
    languages: tuple[str, ...]
    path_prefix: str
    snapshot_id: str
    top_k: int
    top_k_lexical: int
    top_k_vector: int
    rrf_k: int
    top_files: int = 0
    file_pool: int = 0
    top_whole_files: int = 0
    whole_file_queries: tuple[str, ...] = ()  # more whole-file lists, one per query


def plan_search(
    *,
    query: str,
    mode: SearchMode | None,
    project_id: str,
    subsystem: str = "",
    languages: Sequence[str] = (),
    path_prefix: str = "",
    snapshot_id: str = "",
    top_k: int = 0,
    top_k_lexical: int = 0,
    top_k_vector: int = 0,
    rrf_k: int = 0,
    top_files: int = 0,
    top_whole_files: int = 0,
    whole_file_queries: Sequence[str] = (),
    limits: SearchLimits = SearchLimits(),
) -> SearchPlan:
    """Check every value and fill defaults (0 / empty = default). ``mode=None`` = hybrid."""
    text = _checked_query(query, limits)
    if len(whole_file_queries) > MAX_WHOLE_FILE_QUERIES:
        raise InvalidSearch(
            f"{len(whole_file_queries)} whole_file_queries given; at most "
            f"{MAX_WHOLE_FILE_QUERIES} can be searched at once"
        )
    if whole_file_queries and top_whole_files <= 0:
        raise InvalidSearch(
            "whole_file_queries needs top_whole_files (how many files each of their lists holds)"
        )
    part_queries = tuple(
        _checked_query(part, limits, f"whole_file_queries[{index}]")
        for index, part in enumerate(whole_file_queries)
    )
    project = project_id.strip()
    if not project:
        raise InvalidSearch("filters.project_id is required (the project to search in)")
    for name, value in (
        ("project_id", project),
        ("subsystem", subsystem),
        ("path_prefix", path_prefix),
        ("snapshot_id", snapshot_id),
    ):
        if len(value) > MAX_FILTER_VALUE_CHARS:
            raise InvalidSearch(f"filters.{name} is longer than {MAX_FILTER_VALUE_CHARS} chars")
    wanted_languages = tuple(dict.fromkeys(lang.strip().lower() for lang in languages if lang))
    if len(wanted_languages) > MAX_LANGUAGES:
        raise InvalidSearch(f"at most {MAX_LANGUAGES} languages may be given")
    return SearchPlan(
        query=text,
        mode=mode or SearchMode.HYBRID,
        project_id=project,
        subsystem=subsystem.strip(),
        languages=wanted_languages,
        path_prefix=path_prefix.strip().removeprefix("./"),
        snapshot_id=snapshot_id.strip(),
        top_k=_bounded("top_k", top_k, limits.default_top_k, limits.max_top_k),
        top_k_lexical=_bounded(
            "top_k_lexical", top_k_lexical, limits.default_candidates, limits.max_candidates
        ),
        top_k_vector=_bounded(
            "top_k_vector", top_k_vector, limits.default_candidates, limits.max_candidates
        ),
        rrf_k=_bounded("rrf_k", rrf_k, limits.default_rrf_k, 100_000),
        top_files=_bounded("top_files", top_files, 0, limits.max_top_files),
        file_pool=limits.file_pool if top_files else 0,
        top_whole_files=_bounded("top_whole_files", top_whole_files, 0, limits.max_top_files),
        whole_file_queries=part_queries,
    )


def _checked_query(query: str, limits: SearchLimits, name: str = "query") -> str:
    text = query.strip()
    if not text:
        raise InvalidSearch(f"{name} must not be empty")
    if len(text) > limits.max_query_chars:
        raise InvalidSearch(
            f"{name} is {len(text)} characters long; the limit is {limits.max_query_chars}"
        )
    return text


def _bounded(name: str, value: int, default: int, maximum: int) -> int:
    if value < 0:
        raise InvalidSearch(f"{name} must not be negative (0 = default {default})")
    if value > maximum:
        raise InvalidSearch(f"{name} {value} is above the maximum {maximum}")
    return value or default


MAX_SCORED_SYMBOLS = 1000


@dataclass(frozen=True, slots=True)
class SymbolScorePlan:
    query: str
    project_id: str
    symbol_node_ids: tuple[str, ...]
    snapshot_id: str


def plan_symbol_scores(
    *,
    query: str,
    project_id: str,
    symbol_node_ids: Sequence[str],
    snapshot_id: str = "",
    limits: SearchLimits = SearchLimits(),
) -> SymbolScorePlan:
    """Check a ScoreSymbols request: the same query and project rules as a search, and at most
    ``MAX_SCORED_SYMBOLS`` node ids (duplicates and blanks dropped)."""
    text = _checked_query(query, limits)
    project = project_id.strip()
    if not project:
        raise InvalidSearch("project_id is required (the project whose vectors to score)")
    ids = tuple(dict.fromkeys(i.strip() for i in symbol_node_ids if i.strip()))
    if len(ids) > MAX_SCORED_SYMBOLS:
        raise InvalidSearch(
            f"{len(ids)} symbol_node_ids given; at most {MAX_SCORED_SYMBOLS} can be scored at once"
        )
    for name, value in (
        ("project_id", project),
        ("snapshot_id", snapshot_id),
        *(("symbol_node_ids", i) for i in ids),
    ):
        if len(value) > MAX_FILTER_VALUE_CHARS:
            raise InvalidSearch(f"{name} has a value longer than {MAX_FILTER_VALUE_CHARS} chars")
    return SymbolScorePlan(
        query=text, project_id=project, symbol_node_ids=ids, snapshot_id=snapshot_id.strip()
    )
