"""A ranking's candidates as plain JSON: the question and everything the ranking sees (retrieval
hits with their symbols, symbols found by name, graph neighbours). Locate returns it when asked
(``include_candidates``) so the learned ranker is trained on exactly what the gateway ranks:
features are computed from it by the same code (``features.candidate_features``) at training
and at serving time.

The format is versioned (``CANDIDATES_FORMAT``); symbols are stored once and referred to by node
id, so a dump of 150 hits stays around 100 KB."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import astuple, fields
from typing import Any

from locus.gateway.domain.question_cues import extract_cues
from locus.gateway.domain.ranking_types import (
    ChunkMatch,
    FileHistory,
    FileMatch,
    GraphNeighbor,
    PartHit,
    RankingInput,
    SymbolRef,
)

CANDIDATES_FORMAT = 1

_SYMBOL_FIELDS = [f.name for f in fields(SymbolRef)]
_CHUNK_FIELDS = [f.name for f in fields(ChunkMatch) if f.name != "symbol"]
_FILE_FIELDS = [f.name for f in fields(FileMatch)]
_HISTORY_FIELDS = [f.name for f in fields(FileHistory)]
_PART_HIT_FIELDS = [f.name for f in fields(PartHit)]


class CandidatesFormatError(ValueError):
    """A dump this code cannot read (another format version, missing keys)."""


def candidates_to_json(question: str, request: RankingInput) -> dict[str, Any]:
    """Everything ``request`` holds, with the question its cues were extracted from."""
    symbols: dict[str, list[Any]] = {}

    def ref(symbol: SymbolRef | None) -> str:
        if symbol is None:
            return ""
        symbols.setdefault(symbol.node_id, list(astuple(symbol)))
        return symbol.node_id

    chunks = [
        [getattr(chunk, name) for name in _CHUNK_FIELDS] + [ref(chunk.symbol)]
        for chunk in request.chunks
    ]
    named = [ref(symbol) for symbol in request.named_symbols]
    file_symbols = [ref(symbol) for symbol in request.file_symbols]
    neighbors = [
        [ref(n.symbol), n.seed_node_id, n.relation, n.reverse] for n in request.graph_neighbors
    ]
    return {
        "format": CANDIDATES_FORMAT,
        "question": question,
        "include_tests": request.include_tests,
        "max_files": request.max_files,
        "max_symbols": request.max_symbols,
        "symbol_fields": _SYMBOL_FIELDS,
        "chunk_fields": _CHUNK_FIELDS,
        "symbols": symbols,
        "chunks": chunks,
        "named": named,
        "file_symbols": file_symbols,
        "file_fields": _FILE_FIELDS,
        "file_hits": [list(astuple(match)) for match in request.file_hits],
        "whole_file_hits": [list(astuple(match)) for match in request.whole_file_hits],
        "whole_file_parts": {
            part: [list(astuple(match)) for match in hits]
            for part, hits in request.whole_file_parts.items()
        },
        "part_hit_fields": _PART_HIT_FIELDS,
        "part_chunks": {
            part: [list(astuple(hit)) for hit in hits] for part, hits in request.part_chunks.items()
        },
        "neighbors": neighbors,
        "history_fields": _HISTORY_FIELDS,
        "file_history": [list(astuple(item)) for item in request.file_history],
        "history_commits": request.history_commits,
        "symbol_vectors": dict(request.symbol_similarity),
    }


def candidates_from_json(data: Mapping[str, Any]) -> tuple[str, RankingInput]:
    """The question and the ranking input a dump was made from (cues extracted again)."""
    if data.get("format") != CANDIDATES_FORMAT:
        raise CandidatesFormatError(
            f"candidates format {data.get('format')!r}; this code reads {CANDIDATES_FORMAT}"
        )
    try:
        symbol_fields = list(data["symbol_fields"])
        chunk_fields = list(data["chunk_fields"])
        symbols = {
            node_id: SymbolRef(**dict(zip(symbol_fields, values, strict=True)))
            for node_id, values in data["symbols"].items()
        }
        chunks = []
        for row in data["chunks"]:
            values = dict(zip(chunk_fields, row[:-1], strict=True))
            chunks.append(ChunkMatch(**values, symbol=symbols.get(row[-1]) if row[-1] else None))
        question = str(data["question"])
        request = RankingInput(
            cues=extract_cues(question),
            chunks=chunks,
            named_symbols=[symbols[node_id] for node_id in data["named"]],
            file_symbols=[symbols[node_id] for node_id in data.get("file_symbols", [])],
            file_hits=[
                FileMatch(**dict(zip(data["file_fields"], row, strict=True)))
                for row in data.get("file_hits", [])
            ],
            whole_file_hits=[
                FileMatch(**dict(zip(data["file_fields"], row, strict=True)))
                for row in data.get("whole_file_hits", [])
            ],
            # Dumps made before the question's parts were searched have none
            # (``bench/ranker/whole_files.py`` adds them).
            whole_file_parts={
                str(part): [
                    FileMatch(**dict(zip(data["file_fields"], row, strict=True))) for row in rows
                ]
                for part, rows in data.get("whole_file_parts", {}).items()
            },
            # Dumps made before the parts' chunks were searched have none
            # (``bench/ranker/part_chunks.py`` adds them).
            part_chunks={
                str(part): [
                    PartHit(**dict(zip(data["part_hit_fields"], row, strict=True))) for row in rows
                ]
                for part, rows in data.get("part_chunks", {}).items()
            },
            graph_neighbors=[
                GraphNeighbor(symbols[node_id], seed, relation, bool(reverse))
                for node_id, seed, relation, reverse in data["neighbors"]
            ],
            # Dumps made before change history had none (``bench/ranker/history.py`` adds it).
            file_history=[
                FileHistory(**dict(zip(data["history_fields"], row, strict=True)))
                for row in data.get("file_history", [])
            ],
            history_commits=int(data.get("history_commits", 0)),
            # Dumps made without vectors have none (``bench/ranker/vectors.py`` adds them).
            symbol_similarity={str(k): float(v) for k, v in data.get("symbol_vectors", {}).items()},
            include_tests=bool(data["include_tests"]),
            max_files=int(data["max_files"]),
            max_symbols=int(data["max_symbols"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise CandidatesFormatError(f"malformed candidates dump: {error}") from error
    return question, request
