"""Add the chunk list of each part of the question to candidate dumps collected before Locate
searched it.

Locate searches the question's parts (``question_parts``: its title, its opening) alone, by
BM25 over the project's chunks (``search_part_chunks`` hits each), and the learned ranking reads
each hit as evidence for the innermost candidate symbol that holds it (``PartHit``,
``features._part_chunk_features``). This script makes those lists for older dumps the way the
stack does, in one process, like ``whole_files.py``: the tree at the instance's base commit,
walked by the ingestion scanner, cut into chunks by the ast service's extraction, indexed by the
retrieval service's own tantivy adapter and searched with each part of the dumped question.
File ids are the dump's own where the dump knows the path.

Chunks are cached per (path, sha256) across the instances of a repository. Dumps that already
have the lists are skipped unless ``--force``.

Usage: python bench/ranker/part_chunks.py --candidates DIR --split FILE --mirror-root DIR
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import astuple, fields
from pathlib import Path

from locus.ast.settings import AstSettings
from locus.gateway.domain.question_parts import question_parts
from locus.gateway.domain.ranking_types import PartHit
from locus.gateway.settings import GatewaySettings
from locus.retrieval.domain.model import ChunkFilter, IndexedChunk

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "bench" / "ranker")]
from baselines import PROJECT  # noqa: E402
from dumps import arguments, write_dump  # noqa: E402
from whole_files import (  # noqa: E402
    dump_file_ids,
    file_id_of,
    replayed_dumps,
    scratch_index,
    tree_chunks,
)

PART_CHUNKS = GatewaySettings.model_fields["search_part_chunks"].default


async def part_lists(
    chunks: list[IndexedChunk], queries: dict[str, str], ids: dict[str, str], scratch: Path
) -> dict[str, list[PartHit]]:
    """Each query's chunk list over one index of ``chunks``."""
    async with scratch_index(scratch, chunks, []) as index:
        found = {
            name: await index.search(query, ChunkFilter(PROJECT), PART_CHUNKS)
            for name, query in queries.items()
        }
    return {
        name: [
            PartHit(
                file_id=file_id_of(ids, hit.chunk.path),
                relative_path=hit.chunk.path,
                start_line=hit.chunk.start_line,
                end_line=hit.chunk.end_line,
                rank=rank,
                score=hit.score,
            )
            for rank, hit in enumerate(hits, start=1)
        ]
        for name, hits in found.items()
    }


async def main() -> None:
    args = arguments(__doc__).parse_args()
    settings = AstSettings()
    for path, record, tree, cache in replayed_dumps(
        args, lambda candidates: args.force or "part_chunks" not in candidates
    ):
        chunks = [chunk for file in tree_chunks(tree, cache, settings) for chunk in file]
        candidates = record["candidates"]
        with tempfile.TemporaryDirectory(prefix="locus-part-chunks-") as scratch:
            lists = await part_lists(
                chunks,
                question_parts(candidates["question"]),
                dump_file_ids(candidates),
                Path(scratch),
            )
        candidates["part_hit_fields"] = [f.name for f in fields(PartHit)]
        candidates["part_chunks"] = {
            name: [list(astuple(hit)) for hit in hits] for name, hits in lists.items()
        }
        write_dump(path, record)


if __name__ == "__main__":
    asyncio.run(main())
