"""Memory and time of a BM25 compaction (tantivy), beside the same project's scan-like writes.

A synthetic project of FILES files of 10 chunks (15 lines of 12 words each) is written the way a
scan writes it (64 files a call), then one file is rewritten with the compaction threshold
lowered so that this write compacts the project (every live chunk read back and written
again). Printed: the process's peak RSS after the scan-like writes (the baseline, same run) and
after the compacting write, and each phase's seconds. The peak is the kernel's high-water mark
(``ru_maxrss``): tantivy's own buffers count, not only Python's.

Usage: python bench/compaction_memory.py [FILES ...]   (default 5000 20000; one process each)
"""

from __future__ import annotations

import asyncio
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from locus.retrieval.adapters.tantivy_bm25 import TantivyBM25Index
from locus.retrieval.domain.model import IndexedChunk, whole_files

CHUNKS_PER_FILE = 10
FILES_PER_WRITE = 64
WORDS = [f"word{i}" for i in range(20_000)]


def chunk(rng: random.Random, file: int, ordinal: int, version: int) -> IndexedChunk:
    lines = (" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(15))
    return IndexedChunk(
        chunk_id=f"c{file}-{ordinal}-{version}",
        project_id="p1",
        snapshot_id=f"s{version}",
        snapshot_seq=version,
        file_id=f"f{file}",
        path=f"src/module_{file}.py",
        language="python",
        subsystem="",
        start_line=ordinal * 15 + 1,
        end_line=ordinal * 15 + 15,
        node_id=f"n{file}-{ordinal}",
        kind="function",
        symbol_node_id=f"n{file}-{ordinal}",
        symbol_qualified_name=f"module_{file}.function_{ordinal}",
        text="\n".join(lines),
        content_sha256=f"{file}-{ordinal}-{version}",
        ordinal=ordinal,
    )


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def measure(files: int) -> str:
    rng = random.Random(files)
    with tempfile.TemporaryDirectory() as directory:
        index = TantivyBM25Index(Path(directory), compact_deleted_share=1.0)  # never compacts
        await index.open()
        try:
            started = time.perf_counter()
            for first in range(0, files, FILES_PER_WRITE):
                batch = range(first, min(files, first + FILES_PER_WRITE))
                chunks = [chunk(rng, f, k, 0) for f in batch for k in range(CHUNKS_PER_FILE)]
                await index.write("p1", [], chunks, whole_files(chunks))
            scan_seconds, scan_peak = time.perf_counter() - started, peak_mib()
        finally:
            await index.close()
        # Reopened so that any deleted document passes the threshold: the next write compacts.
        index = TantivyBM25Index(Path(directory), compact_deleted_share=1e-9)
        await index.open()
        try:
            started = time.perf_counter()
            chunks = [chunk(rng, 0, k, 1) for k in range(CHUNKS_PER_FILE)]
            await index.write("p1", ["f0"], chunks, whole_files(chunks))
            compact_seconds = time.perf_counter() - started
            assert await index.count("p1") == files * CHUNKS_PER_FILE
        finally:
            await index.close()
    return (
        f"| {files} | {files * CHUNKS_PER_FILE} | {scan_seconds:.1f} | {scan_peak:.0f} "
        f"| {compact_seconds:.1f} | {peak_mib():.0f} |"
    )


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(asyncio.run(measure(int(sys.argv[2]))), flush=True)
        return
    sizes = [int(a) for a in sys.argv[1:]] or [5_000, 20_000]
    print(
        "| files | chunks | scan-like writes s | peak RSS after them MiB | compacting write s "
        "| peak RSS after it MiB |"
    )
    print("|---|---|---|---|---|---|")
    for files in sizes:  # one process each: a peak RSS never comes down
        subprocess.run([sys.executable, __file__, "--one", str(files)], check=True)


if __name__ == "__main__":
    main()
