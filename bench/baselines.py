"""In-process baselines of the system benchmark: the same work the stack does, in one process,
with no services, no bus and no stores in between.

- `measure_indexing_baseline`: what makes a repository searchable, done directly. Walk the
  tree and sha256 every file (the ingestion scanner, `walk_source`), cut each file into chunks
  (tree-sitter `extract` for the languages the ast service parses, the ast service's own
  line windows for the others, as the stack does) and write every chunk, and each file's
  whole-file document, into the retrieval service's tantivy BM25 index, one commit per 64 files
  (the retrieval service's default batch). Symbols, relations
  and graph edges are computed by `extract` but not stored anywhere.
- `measure_embedder_rate`: the bare ONNX embedder (the model, threads and batch size the
  retrieval service uses by default) on a sample of the chunk texts the baseline cut.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from locus.ast.adapters.messages import source_root
from locus.ast.domain import Chunk, extract, extracts
from locus.ast.domain.language_spec import NO_ROOT, SourceRoot
from locus.ast.plain_text import plain_text_analysis
from locus.ast.settings import AstSettings
from locus.ingestion.adapters.proto_mapping import with_source_root
from locus.ingestion.domain import source_roots
from locus.ingestion.domain.model import ScannedFile, SkippedFile
from locus.ingestion.domain.scanner import walk_source
from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder
from locus.retrieval.adapters.tantivy_bm25 import TantivyBM25Index
from locus.retrieval.benchmark import embedding_rate
from locus.retrieval.domain.model import IndexedChunk, whole_files
from locus.v1 import events_pb2

MAX_FILE_BYTES = 1_048_576  # the ingestion service's default
FILES_PER_COMMIT = 64  # the retrieval service's default fetch batch
EDIT_COMMENT_PREFIX = {"python": "#"}


def ast_source_root(root: source_roots.SourceRoot) -> SourceRoot:
    """A root ingestion detected as ast gets it: through files.changed's own mapping, both
    ways (directory, name, entry, aliases, aliases into other packages)."""
    return source_root(with_source_root(events_pb2.ChangedFile(), root))


@dataclass(frozen=True)
class IndexingBaseline:
    files: int
    megabytes: float
    chunks: int
    seconds: float
    walk_seconds: float  # listing, reading, classifying and hashing
    chunking_seconds: float  # tree-sitter extraction and line windows
    bm25_seconds: float  # tantivy documents and commits
    # One file of median size read, hashed, chunked and re-indexed in the built index.
    one_file_seconds: float | None

    @property
    def files_per_second(self) -> float:
        return self.files / self.seconds

    @property
    def megabytes_per_second(self) -> float:
        return self.megabytes / self.seconds


@dataclass(frozen=True)
class WalkByproducts:
    """Not figures: what later steps of the benchmark take from the baseline's walk."""

    chunk_text_sample: list[str]  # distinct chunk texts, evenly spaced over the tree
    listed_paths: list[str]  # every file the walk yielded, indexed or skipped
    file_to_edit: str  # a parsed-language file of median size ("" when there is none)
    edit_comment_prefix: str  # how a comment line starts in that file


def chunks_of(
    scanned: ScannedFile, settings: AstSettings, root: SourceRoot = NO_ROOT
) -> tuple[Chunk, ...]:
    """The chunks the ast service makes of one file (``root``: the source root ingestion
    detected for it, which names its symbols); () for a file it cannot decode or whose
    extraction fails, as the service indexes none of such a file."""
    language = scanned.language or ""
    if extracts(scanned.relative_path, language):
        try:
            analysis = extract(
                scanned.relative_path, scanned.data, language, settings.chunking_policy, root
            )
        except Exception:  # as ast's indexing: one file's failure is that file's alone
            return ()
        return analysis.chunks
    try:
        text = scanned.data.decode("utf-8")
    except UnicodeDecodeError:
        return ()
    return plain_text_analysis(
        text,
        language,
        max_lines=settings.text_window_lines,
        max_chars=settings.chunk_max_chars,
    ).chunks


PROJECT = "baseline"  # the one project of the baseline index


def indexed_chunks(scanned: ScannedFile, chunks: tuple[Chunk, ...]) -> list[IndexedChunk]:
    file_id = "f_" + hashlib.sha256(scanned.relative_path.encode()).hexdigest()[:24]
    return [
        IndexedChunk(
            chunk_id=f"{file_id}:{chunk.ordinal}",
            project_id=PROJECT,
            snapshot_id="baseline",
            snapshot_seq=1,
            file_id=file_id,
            path=scanned.relative_path,
            language=scanned.language or "",
            subsystem="",
            start_line=chunk.start_line,
            end_line=chunk.end_line,
            node_id="",
            kind=chunk.kind,
            symbol_node_id="",
            symbol_qualified_name=chunk.symbol_qualified_name or "",
            text=chunk.text,
            content_sha256=chunk.content_sha256,
            ordinal=chunk.ordinal,
        )
        for chunk in chunks
    ]


def evenly_spaced(items: list[str], count: int) -> list[str]:
    if len(items) <= count:
        return list(items)
    step = len(items) / count
    return [items[int(position * step)] for position in range(count)]


def median_sized_file(sizes_by_path: dict[str, int]) -> str:
    """The path of the file whose size is the median of them all ("" when there is none)."""
    if not sizes_by_path:
        return ""
    median = statistics.median_low(sizes_by_path.values())
    return min(path for path, size in sizes_by_path.items() if size == median)


async def measure_indexing_baseline(
    root: Path, index_dir: Path, *, sample_size: int
) -> tuple[IndexingBaseline, WalkByproducts]:
    ast_settings = AstSettings()
    index = TantivyBM25Index(index_dir)
    await index.open()
    walk_seconds = chunking_seconds = bm25_seconds = 0.0
    files = size = chunk_count = 0
    distinct_texts: dict[str, str] = {}
    listed_paths: list[str] = []
    editable_sizes: dict[str, int] = {}
    languages: dict[str, str] = {}
    pending: list[IndexedChunk] = []
    pending_files = 0
    started = time.perf_counter()
    walk = walk_source(root, max_file_bytes=MAX_FILE_BYTES)
    while True:
        step = time.perf_counter()
        item = next(walk, None)
        walk_seconds += time.perf_counter() - step
        if item is None:
            break
        listed_paths.append(item.relative_path)
        if isinstance(item, SkippedFile):
            continue
        files += 1
        size += item.size_bytes
        if item.language in EDIT_COMMENT_PREFIX:
            editable_sizes[item.relative_path] = item.size_bytes
            languages[item.relative_path] = item.language
        step = time.perf_counter()
        chunks = indexed_chunks(item, chunks_of(item, ast_settings))
        chunking_seconds += time.perf_counter() - step
        chunk_count += len(chunks)
        distinct_texts.update((chunk.content_sha256, chunk.text) for chunk in chunks)
        pending.extend(chunks)
        pending_files += 1
        if pending_files == FILES_PER_COMMIT:
            step = time.perf_counter()
            await index.write(PROJECT, [], pending, whole_files(pending))
            bm25_seconds += time.perf_counter() - step
            pending, pending_files = [], 0
    step = time.perf_counter()
    if pending:
        await index.write(PROJECT, [], pending, whole_files(pending))
    await index.close()
    bm25_seconds += time.perf_counter() - step
    seconds = time.perf_counter() - started
    file_to_edit = median_sized_file(editable_sizes)
    baseline = IndexingBaseline(
        files=files,
        megabytes=size / 1e6,
        chunks=chunk_count,
        seconds=seconds,
        walk_seconds=walk_seconds,
        chunking_seconds=chunking_seconds,
        bm25_seconds=bm25_seconds,
        one_file_seconds=(
            await measure_one_file_reindex(root, file_to_edit, languages[file_to_edit], index_dir)
            if file_to_edit
            else None
        ),
    )
    byproducts = WalkByproducts(
        chunk_text_sample=evenly_spaced(list(distinct_texts.values()), sample_size),
        listed_paths=listed_paths,
        file_to_edit=file_to_edit,
        edit_comment_prefix=EDIT_COMMENT_PREFIX.get(languages.get(file_to_edit, ""), ""),
    )
    return baseline, byproducts


async def measure_one_file_reindex(
    root: Path, relative_path: str, language: str, index_dir: Path
) -> float:
    """Seconds to read, hash, chunk and re-index one file of the built index (its old
    entries removed, one commit): what an edit costs beyond finding the changed file."""
    index = TantivyBM25Index(index_dir)
    await index.open()
    started = time.perf_counter()
    data = (root / relative_path).read_bytes()
    scanned = ScannedFile(
        relative_path, hashlib.sha256(data).hexdigest(), len(data), language, data
    )
    chunks = indexed_chunks(scanned, chunks_of(scanned, AstSettings()))
    await index.write(PROJECT, [chunk.file_id for chunk in chunks[:1]], chunks, whole_files(chunks))
    seconds = time.perf_counter() - started
    await index.close()
    return seconds


@dataclass(frozen=True)
class EmbedderRate:
    texts: int
    texts_per_second: float
    texts_per_cpu_second: float
    load_average: float  # 1-minute load average of the machine when the measurement began


async def measure_embedder_rate(model_dir: Path, texts: list[str]) -> EmbedderRate:
    """The bare embedder with the retrieval service's defaults (batch 32, every core, 256
    word pieces): one warm-up batch, then every text in one call."""
    load_average = os.getloadavg()[0]
    wall_rate, cpu_rate = await embedding_rate(OnnxEmbedder(model_dir), texts)
    return EmbedderRate(len(texts), wall_rate, cpu_rate, load_average)
