"""Add the candidate symbols' vector similarity to dumps collected without vectors.

Locate asks retrieval ``ScoreSymbols`` for the cosine similarity between the question and the
chunks of the hand ranking's first 100 candidate symbols (per symbol, its best chunk), over the
vectors the vectors lane stored (``features.vector_scored_symbols``). Dumps were collected at
the searchable level, before any vector existed; this script computes the same numbers the way
the stack would: each such symbol's file is read from the mirror at the instance's base commit
and chunked by the ast service's own code (``locus.ast.domain.extract`` with the service's
chunking policy), every chunk whose innermost symbol is one of them is embedded by retrieval's
own ``OnnxEmbedder`` (same model, same truncation), and so is the question (the dump's digested
question, as Locate searches it). Vectors are cached by model and content hash in ``--cache``
(as the vectors lane caches them), so a rerun embeds only what is new. ``collect.sh`` runs it
on every new collection, so all dumps have it.

Usage: python bench/ranker/vectors.py --candidates DIR --split FILE --mirror-root DIR
       [--cache FILE] [--force]
"""

from __future__ import annotations

import pickle
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from dumps import arguments, blobs, mirror_of, read_dump, split_rows, write_dump

from locus.ast.domain import (
    Chunk,
    ChunkingPolicy,
    UndecodableSource,
    extract,
    supported_languages,
)
from locus.ast.settings import AstSettings
from locus.gateway.domain.candidates import candidates_from_json
from locus.gateway.domain.features import vector_scored_symbols
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import SymbolRef
from locus.gateway.domain.ranking_weights import RankingWeights
from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder
from locus.retrieval.settings import RetrievalSettings

ROOT = Path(__file__).resolve().parents[2]


def symbol_chunks(
    path: str, data: bytes, language: str, policy: ChunkingPolicy
) -> dict[tuple[int, int, str], list[Chunk]]:
    """Per symbol (start line, end line, kind): the chunks whose innermost symbol it is."""
    if language not in supported_languages():
        return {}
    try:
        analysis = extract(path, data, language, policy)
    except UndecodableSource:
        return {}
    by_name = {s.qualified_name: (s.start_line, s.end_line, s.kind) for s in analysis.symbols}
    out: dict[tuple[int, int, str], list[Chunk]] = defaultdict(list)
    for chunk in analysis.chunks:
        key = by_name.get(chunk.symbol_qualified_name or "")
        if key is not None:
            out[key].append(chunk)
    return out


def symbol_similarity(
    question: str,
    symbols: list[SymbolRef],
    contents: dict[str, bytes],
    policy: ChunkingPolicy,
    embedder: OnnxEmbedder,
    cache: dict[str, np.ndarray],
) -> tuple[dict[str, float], int]:
    """What ScoreSymbols answers for ``symbols`` (node id -> the cosine of its best chunk),
    from their files' ``contents``; and how many chunks had to be embedded. ``cache`` holds
    vectors by model and content hash, as the vectors lane's cache does."""
    by_file: dict[tuple[str, str], list[SymbolRef]] = defaultdict(list)
    for symbol in symbols:
        by_file[(symbol.relative_path, symbol.language)].append(symbol)
    wanted: dict[str, list[str]] = {}  # node id -> cache keys of its chunks
    texts: dict[str, str] = {}
    for (relative_path, language), members in by_file.items():
        data = contents.get(relative_path)
        if data is None:
            continue
        chunks = symbol_chunks(relative_path, data, language, policy)
        for symbol in members:
            found = chunks.get((symbol.start_line, symbol.end_line, symbol.kind), [])
            if found:
                keys = [f"{embedder.model_id}:{c.content_sha256}" for c in found]
                wanted[symbol.node_id] = keys
                texts.update(zip(keys, (c.text for c in found), strict=True))
    missing = [key for key in texts if key not in cache]
    if missing:
        vectors = embedder.encode([texts[key] for key in missing])
        cache.update(zip(missing, vectors.astype(np.float16), strict=True))
    (query,) = embedder.encode([question.strip()])
    scored = {
        node_id: round(float(max(np.dot(cache[k].astype(np.float32), query) for k in keys)), 6)
        for node_id, keys in wanted.items()
    }
    return dict(sorted(scored.items(), key=lambda item: -item[1])), len(missing)


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--cache", type=Path, default=ROOT / ".locus/bench-vectors.pkl")
    args = parser.parse_args()
    rows = split_rows(args.split)
    retrieval = RetrievalSettings()
    embedder = OnnxEmbedder(
        ROOT / retrieval.model_dir
        if not retrieval.model_dir.is_absolute()
        else retrieval.model_dir,
        batch_size=retrieval.embed_batch_size,
        threads=1,  # one process per split, side by side
        max_tokens=retrieval.embed_max_tokens,
    )
    embedder.load()
    policy = AstSettings().chunking_policy
    hand = RankingV1(RankingWeights())
    cache: dict[str, np.ndarray] = {}
    if args.cache.exists():
        cache = pickle.loads(args.cache.read_bytes())
    started = time.perf_counter()
    embedded = 0
    for count, path in enumerate(sorted(args.candidates.glob("*.json.gz")), start=1):
        record = read_dump(path)
        row = rows.get(record["instance_id"])
        candidates = record["candidates"]
        # A dump collected through the stack with the vector lane off holds an empty one.
        if row is None or (candidates.get("symbol_vectors") and not args.force):
            continue
        question, request = candidates_from_json(candidates)
        symbols = vector_scored_symbols(request, hand)
        contents = blobs(
            mirror_of(args.mirror_root, row["repo"]),
            row["base_commit"],
            sorted({s.relative_path for s in symbols}),
        )
        scored, missing = symbol_similarity(question, symbols, contents, policy, embedder, cache)
        embedded += missing
        candidates["symbol_vectors"] = scored
        write_dump(path, record)
        if count % 20 == 0 or missing:
            args.cache.write_bytes(pickle.dumps(cache, protocol=4))
        print(
            f"{count:4d} {record['instance_id']}: {len(scored)}/{len(symbols)} symbols scored, "
            f"{missing} chunks embedded ({embedded} in all), "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
    args.cache.write_bytes(pickle.dumps(cache, protocol=4))


if __name__ == "__main__":
    main()
