"""Widen the outline candidates of dumps collected with fewer outlined files.

Locate adds the functions and methods of the first ranking's best ``outline_files`` files to the
candidates (ast ListFileSymbols). A dump collected when that setting was smaller holds fewer;
this script adds the rest the way the stack would: the first ranking is recomputed from the
dump (the hand ranking ``RankingV1`` over the chunks, names and file list — the same input the
gateway's seed ranking gets; checked: the files it outlined are the dump's), and each newly
outlined file is read from the mirror at the instance's base commit and extracted by the ast
service's own code (``locus.ast.domain.extract``); its callables, in source order and at most
``outline_symbols_per_file``, get the ids the ast store gives them (``node_id_for``). Files the
dump outlined keep the stack's symbols, except those it outlined up to the cap it was collected
with (``--collected-limit``, 200 before session 16): those are outlined again with
``--symbols-per-file`` (the gateway's default; 0 = all).

Usage: python bench/ranker/outlines.py --candidates DIR --split FILE --mirror-root DIR
       [--outline-files N] [--symbols-per-file N] [--collected-limit N] [--out DIR]
"""

from __future__ import annotations

import time
from dataclasses import astuple
from pathlib import Path

from dumps import arguments, blobs, mirror_of, split_dumps, split_rows, write_dump

from locus.ast.domain import UndecodableSource, extract, supported_languages
from locus.ast.identifiers import node_id_for
from locus.gateway.domain.candidates import candidates_from_json
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import RankingInput, SymbolRef
from locus.gateway.domain.ranking_weights import RankingWeights
from locus.gateway.domain.symbol_kinds import CALLABLE_KINDS
from locus.gateway.settings import GatewaySettings

DEFAULTS = GatewaySettings()


def callables(path: str, data: bytes, language: str, file_id: str, limit: int) -> list[SymbolRef]:
    if language not in supported_languages():
        return []
    try:
        analysis = extract(path, data, language)
    except UndecodableSource:
        return []
    found = sorted(
        (
            (symbol.start_line, ordinal, symbol)
            for ordinal, symbol in enumerate(analysis.symbols)
            if symbol.kind in CALLABLE_KINDS
        ),
        key=lambda item: item[:2],
    )[: limit or None]
    return [
        SymbolRef(
            node_id=node_id_for(file_id, s.qualified_name, s.kind),
            name=s.name,
            qualified_name=s.qualified_name,
            scope_name=s.scope_name,
            kind=s.kind,
            file_id=file_id,
            relative_path=path,
            language=language,
            start_line=s.start_line,
            end_line=s.end_line,
        )
        for _, _, s in found
    ]


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--outline-files", type=int, default=DEFAULTS.outline_files)
    parser.add_argument(
        "--symbols-per-file",
        type=int,
        default=DEFAULTS.outline_symbols_per_file,
        help="callables per outlined file (0 = all); a file the dump outlined up to "
        "--collected-limit is outlined again with this limit",
    )
    parser.add_argument("--collected-limit", type=int, default=200)
    parser.add_argument("--out", type=Path, help="write here (default: in place)")
    args = parser.parse_args()
    rows = split_rows(args.split)
    out_dir = args.out or args.candidates
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for count, path, record, row in split_dumps(args.candidates, rows):
        candidates = record["candidates"]
        _, request = candidates_from_json(candidates)
        seed = RankingV1(RankingWeights()).rank(
            RankingInput(
                cues=request.cues,
                chunks=request.chunks,
                named_symbols=request.named_symbols,
                file_hits=request.file_hits,
                include_tests=request.include_tests,
                max_files=request.max_files,
                max_symbols=max(request.max_symbols, DEFAULTS.graph_seed_symbols),
            )
        )
        outlined: dict[str, list[SymbolRef]] = {}
        for symbol in request.file_symbols:
            outlined.setdefault(symbol.file_id, []).append(symbol)
        wanted = seed.files[: args.outline_files]
        widen = args.symbols_per_file == 0 or args.symbols_per_file > args.collected_limit
        missing = [
            f
            for f in wanted
            if f.file_id not in outlined
            or (widen and len(outlined[f.file_id]) >= args.collected_limit)
        ]
        mirror = mirror_of(args.mirror_root, row["repo"])
        contents = blobs(mirror, row["base_commit"], [f.relative_path for f in missing])
        for ranked in missing:
            data = contents.get(ranked.relative_path)
            if data is not None:
                outlined[ranked.file_id] = callables(
                    ranked.relative_path,
                    data,
                    ranked.language,
                    ranked.file_id,
                    args.symbols_per_file,
                )
        symbols = [s for f in wanted for s in outlined.get(f.file_id, [])]
        table = candidates["symbols"]
        for symbol in symbols:
            table.setdefault(symbol.node_id, list(astuple(symbol)))
        candidates["file_symbols"] = [s.node_id for s in symbols]
        write_dump(out_dir / path.name, record)
        print(
            f"{count:4d} {record['instance_id']}: {len(request.file_symbols)} → {len(symbols)} "
            f"outline symbols, {time.perf_counter() - started:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
