"""Measure embedding throughput (ONNX and torch) and cold indexing throughput on this machine.

``python -m locus.retrieval.benchmark --source DIR [--texts 512] [--lines 20] [--index]`` cuts
the Python files under DIR into chunks of 20 lines (~150-250 word pieces, like the ast
service's function chunks), embeds
them with each available embedder and, with ``--index``, runs them through the real indexer
and vectors lane (tantivy + the store, then embedding + qdrant-edge) in batches of 32 files.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder, onnx_model_ready
from locus.retrieval.domain.model import (
    ChunkDraft,
    FileChange,
    FileReport,
    ParsedPart,
    VectorWork,
)
from locus.retrieval.domain.ports import Embedder


def code_chunks(source: Path, limit: int, lines_per_chunk: int) -> list[tuple[str, str]]:
    """(relative path, text) of up to ``limit`` chunks, in a stable order."""
    chunks: list[tuple[str, str]] = []
    for path in sorted(source.rglob("*.py")):
        lines = path.read_text(errors="replace").splitlines()
        for start in range(0, len(lines), lines_per_chunk):
            text = "\n".join(lines[start : start + lines_per_chunk]).strip()
            if len(text) > 80:
                chunks.append((str(path.relative_to(source)), text))
            if len(chunks) >= limit:
                return chunks
    return chunks


async def embedding_rate(embedder: Embedder, texts: list[str]) -> tuple[float, float]:
    """Texts per wall-clock second, and per CPU-second of this process (a figure other load
    on the machine barely changes: times the core count, it is the rate on a quiet machine)."""
    await embedder.open()
    await embedder.embed(texts[:8])  # warm-up
    started, cpu_started = time.perf_counter(), time.process_time()
    await embedder.embed(texts)
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    await embedder.close()
    return len(texts) / wall, len(texts) / cpu


class _NoCatalog:
    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def subsystem_of(self, project_id: str) -> str:
        return ""

    def forget(self, project_id: str) -> None:
        return None


class _NoReports:
    async def report(self, reports: Sequence[FileReport]) -> None:
        return None


class _CollectedWork:
    """The vectors lane's queue, in memory: the benchmark hands the work on itself."""

    def __init__(self) -> None:
        self.works: list[VectorWork] = []

    async def enqueue(self, works: Sequence[VectorWork]) -> None:
        self.works.extend(works)


async def indexing_rate(embedder: Embedder, chunks: list[tuple[str, str]]) -> float:
    from locus.database import Database
    from locus.retrieval.adapters.edge_vectors import EdgeVectorIndex
    from locus.retrieval.adapters.store import RetrievalStore
    from locus.retrieval.adapters.tantivy_bm25 import TantivyBM25Index
    from locus.retrieval.indexing import Indexer
    from locus.retrieval.vectors_lane import VectorsLane

    by_file: dict[str, list[str]] = {}
    for path, text in chunks:
        by_file.setdefault(path, []).append(text)
    parts = []
    for path, texts in by_file.items():
        drafts = tuple(
            ChunkDraft(
                chunk_id=hashlib.sha256(f"{path}:{i}".encode()).hexdigest()[:32],
                start_line=i + 1,
                end_line=i + 1,
                node_id="",
                kind="fragment",
                symbol_node_id="",
                symbol_qualified_name="",
                text=text,
                content_sha256=hashlib.sha256(text.encode()).hexdigest(),
                ordinal=i,
            )
            for i, text in enumerate(texts)
        )
        parts.append(
            ParsedPart(
                "job",
                "bench",
                "snap",
                1,
                "f_" + path,
                path,
                "python",
                "0" * 64,
                FileChange.ADDED,
                0,
                1,
                drafts,
            )
        )
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        store = RetrievalStore(Database(f"sqlite+aiosqlite:///{root / 'retrieval.db'}"))
        bm25 = TantivyBM25Index(root / "bm25")
        vectors = EdgeVectorIndex(root / "vectors", embedder.dimension)
        await store.initialize()
        for part in (embedder, bm25, vectors):
            await part.open()
        queue = _CollectedWork()
        writes = asyncio.Lock()
        indexer = Indexer(store, bm25, vectors, _NoCatalog(), _NoReports(), queue, writes)
        lane = VectorsLane(store, vectors, embedder, _NoReports(), writes)
        started = time.perf_counter()
        for start in range(0, len(parts), 32):
            await indexer.index(parts[start : start + 32])
        for start in range(0, len(queue.works), 64):
            await lane.embed(queue.works[start : start + 64])
        elapsed = time.perf_counter() - started
        for part in (vectors, bm25, embedder):
            await part.close()
        await store.close()
    return len(chunks) / elapsed


async def run(args: argparse.Namespace) -> None:
    chunks = code_chunks(args.source, args.texts, args.lines)
    texts = [text for _, text in chunks]
    print(
        f"{len(texts)} chunks, {sum(map(len, texts)) / len(texts):.0f} chars on average, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"
    )
    embedders: list[tuple[str, Embedder]] = []
    if onnx_model_ready(args.model_dir):
        embedders.append(("onnx", OnnxEmbedder(args.model_dir)))
    else:
        print(f"onnx: no exported model in {args.model_dir}")
    if not args.skip_torch:
        from locus.retrieval.adapters.torch_embedder import SentenceTransformerEmbedder

        embedders.append(("torch", SentenceTransformerEmbedder()))
    cores = os.cpu_count() or 1
    for name, embedder in embedders:
        wall, per_cpu = await embedding_rate(embedder, texts)
        print(
            f"{name}: {wall:.1f} texts/s wall, {per_cpu:.1f} texts per CPU-second "
            f"(≈ {per_cpu * cores:.1f} texts/s on {cores} idle cores), batch 32"
        )
    if args.index and embedders:
        name, embedder = embedders[0]
        cpu_started = time.process_time()
        rate = await indexing_rate(embedder, chunks)
        per_cpu = len(chunks) / (time.process_time() - cpu_started)
        print(
            f"cold indexing with {name} (embed + tantivy + qdrant-edge + store): {rate:.1f} "
            f"chunks/s wall, {per_cpu:.1f} per CPU-second (≈ {per_cpu * cores:.1f}/s idle)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m locus.retrieval.benchmark")
    parser.add_argument("--source", type=Path, required=True, help="a directory of Python code")
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--lines", type=int, default=20, help="lines per chunk")
    parser.add_argument("--model-dir", type=Path, default=Path(".locus/models/all-minilm-l6-v2"))
    parser.add_argument("--skip-torch", action="store_true")
    parser.add_argument("--index", action="store_true", help="also measure cold indexing")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
