"""BM25Index on tantivy (embedded, on disk): one index per project, so every project's BM25
statistics (document frequencies, average field lengths) are its own and one repository's
vocabulary never moves another's scores (a scope wider than one project merges per-project
results that were scored alike). The directory holds ``projects/<key>`` and
``projects/<key>-files`` per project (``key``: a digest of the project id) and a layout marker.

Text is analysed in Python by the code-aware analyzer and indexed as its terms joined by spaces,
which tantivy's built-in ``whitespace`` tokenizer cuts again, so no custom tokenizer has to be
registered after ``Index.open`` and queries use exactly the same tokens (as term queries). The
analysed fields keep term frequencies only (BM25 needs no positions).

Search's file list sums the scores of a pool of 2,000 chunks per file: each chunk keeps a 64-bit
key of its file as a fast field (a column read for the whole pool at once), and only the chunks
of the files that can make the list are read from the store.

Whole files live in a second tantivy index beside each project's (``<key>-files``): one document
per file, its path and the text of all its chunks cut by the same analyzer. A project index
without it is filled from the chunks' payloads when it is opened.

A project's indexes are opened on first use; writers (a memory budget and threads each) are
kept for the ``max_open_writers`` projects written last. The single index of every project that
layouts 1 to 3 wrote is split into per-project indexes from its payloads when it is opened.

Compaction: tantivy counts a replaced or removed document in the BM25 statistics (document
frequencies, document count, average field length) until a merge drops it, and its merge policy
rarely merges the large segment of a project's first scan again. A project rescanned often would
score its most-changed files (their terms counted once per old version) ever lower. So when
deleted documents pass ``compact_deleted_share`` (20 %, the share Lucene's TieredMergePolicy
allows) of either index of a project after a write, the project's indexes are rewritten from
their live documents in one commit (every old document deleted by term, the live ones added
again, a batch of files at a time), after which tantivy drops the wholly deleted segments.

The analyzer's version is kept in each project's markers. A project indexed by an older analyzer
(before 2: no CJK bigrams) is rewritten from its payloads the same way when it is opened, so a
query analysed today meets the terms it would have met in a fresh index, without a rescan (the
files did not change)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import tantivy

from locus.retrieval.domain.analyzer import indexed_terms, query_terms
from locus.retrieval.domain.errors import IndexIncompatible
from locus.retrieval.domain.model import (
    ChunkFilter,
    FileHit,
    IndexedChunk,
    ScoredChunk,
    WholeFile,
    best_files,
    ranked_whole_files,
    require_one_project,
    whole_files,
)

log = logging.getLogger(__name__)

# The schema of each project's chunk index. 2: analysed fields cut by the whitespace tokenizer
# (were pre-tokenized); 3: file_key.
SCHEMA_VERSION = 3
# The directory's layout. 1 to 3: one index for every project (its schema version); 4: per project.
LAYOUT_VERSION = 4
_SHARED_LAYOUTS = frozenset({1, 2, 3})  # split into per-project indexes from their payloads
_MARKER = "locus-schema.json"
# The analyzer the terms come from (locus.retrieval.domain.analyzer). 1: before CJK bigrams;
# 2: runs of Chinese, Japanese and Korean cut into bigrams.
ANALYZER_VERSION = 2
# Analysed fields and their weight in a query: the name a chunk defines says most, then its
# qualified name and path, then one occurrence somewhere in a body.
ANALYSED_FIELDS = {"text": 1.0, "symbol": 1.5, "name": 3.0, "path_tokens": 1.5}
KEYWORD_FIELDS = ("chunk_id", "file_id", "project_id", "subsystem", "language", "path")
COMPACT_DELETED_SHARE = 0.2  # see the module's docstring
# Compaction reads back and rewrites this many files' chunks at a time: its memory is one batch
# of payloads and documents (the writers flush their own buffers at their heap size), never the
# whole project.
COMPACT_BATCH_FILES = 256


def build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in KEYWORD_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("snapshot_id", tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("snapshot_seq", indexed=True, fast=True)
    builder.add_unsigned_field("file_key", fast=True)
    for name in ANALYSED_FIELDS:
        builder.add_text_field(name, tokenizer_name="whitespace", index_option="freq")
    builder.add_bytes_field("payload", stored=True)
    return builder.build()


FILES_SCHEMA_VERSION = 1
FILE_KEYWORD_FIELDS = ("file_id", "project_id", "subsystem", "language", "path")


def build_files_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in FILE_KEYWORD_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("snapshot_seq", indexed=True, fast=True)
    builder.add_text_field("text", tokenizer_name="whitespace", index_option="freq")
    builder.add_bytes_field("payload", stored=True)
    return builder.build()


def _sibling(directory: Path, suffix: str) -> Path:
    """``directory`` with ``suffix`` on its name, beside it (staging, retired and whole-file
    directories)."""
    return directory.with_name(directory.name + suffix)


def _swap_in(directory: Path, suffix: str) -> bool:
    """Swap a completely written rewrite of ``directory`` (its marker is written last) into
    place; an unfinished one is removed (it is started again). True when one was swapped in."""
    staged = _sibling(directory, suffix)
    if not (staged / _MARKER).exists():
        shutil.rmtree(staged, ignore_errors=True)
        return False
    retired = _sibling(directory, ".retired")
    shutil.rmtree(retired, ignore_errors=True)
    if directory.exists():
        os.replace(directory, retired)
    os.replace(staged, directory)
    shutil.rmtree(retired, ignore_errors=True)
    return True


def project_key(project_id: str) -> str:
    """The directory name of a project's index (any project id is a safe, fixed-length name)."""
    return hashlib.sha256(project_id.encode()).hexdigest()[:32]


def file_key(file_id: str) -> int:
    """A 64-bit key of the file. Two of the (at most 2,000) files of a pool share one with a
    chance below 2**-42; their chunks would then be summed as one file's."""
    return int.from_bytes(hashlib.blake2b(file_id.encode(), digest_size=8).digest(), "big")


def _regex_literal(text: str) -> str:
    """Escape for tantivy's (Rust) regex: every non-alphanumeric as a \\x{..} code point."""
    return "".join(c if c.isalnum() else f"\\x{{{ord(c):X}}}" for c in text)


class TantivyBM25Index:
    def __init__(
        self,
        directory: Path,
        *,
        writer_heap_bytes: int = 64_000_000,
        max_open_writers: int = 8,
        compact_deleted_share: float = COMPACT_DELETED_SHARE,
    ) -> None:
        if max_open_writers < 1:
            raise ValueError("max_open_writers must be at least 1")
        if not 0 < compact_deleted_share <= 1:
            raise ValueError("compact_deleted_share must be in (0, 1]")
        self._compact_share = compact_deleted_share
        self._directory = directory
        self._projects = directory / "projects"
        self._heap = writer_heap_bytes
        self._max_writers = max_open_writers
        self._open_projects: dict[str, _ProjectIndex] = {}
        self._writing: OrderedDict[str, None] = OrderedDict()  # projects with writers, LRU
        self._lock = threading.Lock()  # the maps; taken before a project's own lock
        # One gate per project, for its opening and its deletion: opening can rewrite the
        # project (an older analyzer's terms), which must not hold the router's lock
        # meanwhile. Taken before the router's lock, never while holding it. Never dropped
        # (one small lock per project id): a caller may hold a gate it read, and a second gate
        # for the same project would let two openers run at once.
        self._gates: dict[str, threading.Lock] = {}
        self._opened = False

    async def open(self) -> None:
        await asyncio.to_thread(self._open)

    def _open(self) -> None:
        directory = self._directory
        directory.mkdir(parents=True, exist_ok=True)
        _swap_in(directory, ".migrating")  # a rewrite by an older version, finished
        _swap_in(directory, ".splitting")
        marker = directory / _MARKER
        version = json.loads(marker.read_text()).get("version") if marker.exists() else None
        if version in _SHARED_LAYOUTS:
            self._split(int(version))
        elif version is None and tantivy.Index.exists(str(directory)):
            raise IndexIncompatible(
                f"the BM25 index in {directory} has no schema marker: delete the service's "
                "data directory and scan every project again"
            )
        elif version is not None and version != LAYOUT_VERSION:
            raise IndexIncompatible(
                f"the BM25 index in {directory} has layout version {version}, this service "
                f"writes {LAYOUT_VERSION}: delete the service's data directory and scan every "
                "project again"
            )
        self._projects.mkdir(parents=True, exist_ok=True)
        if version is None:
            marker.write_text(json.dumps({"version": LAYOUT_VERSION}))
        self._opened = True

    def _split(self, version: int) -> None:
        """Rewrite the one index of every project (layouts 1 to 3) as an index per project, from
        the chunks its payloads keep (a rescan would not help: the files did not change).
        Written beside it and swapped in; a crash in between is finished by the next open."""
        directory = self._directory
        shared = tantivy.Index.open(str(directory))
        chunks = _stored_chunks(shared.searcher(), tantivy.Query.all_query())
        del shared
        by_project: dict[str, list[IndexedChunk]] = {}
        for chunk in chunks:
            by_project.setdefault(chunk.project_id, []).append(chunk)
        staged = _sibling(directory, ".splitting")
        shutil.rmtree(staged, ignore_errors=True)
        (staged / "projects").mkdir(parents=True)
        for project_id, found in by_project.items():
            project = _ProjectIndex(
                staged / "projects" / project_key(project_id), self._heap, project_id
            )
            project.open()
            project.write([], found, whole_files(found))
            project.close()
        (staged / _MARKER).write_text(json.dumps({"version": LAYOUT_VERSION}))
        _swap_in(directory, ".splitting")
        shutil.rmtree(_sibling(directory, "-files"), ignore_errors=True)  # the shared file index
        log.info(
            "BM25 index in %s (layout %d, one index) split into %d project indexes (%d chunks)",
            directory,
            version,
            len(by_project),
            len(chunks),
        )

    async def close(self) -> None:
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._lock:
            for project in self._open_projects.values():
                project.close()
            self._open_projects.clear()
            self._writing.clear()
            self._opened = False

    def _project(self, project_id: str, *, create: bool) -> _ProjectIndex | None:
        """The project's index, opened on first use; None when it has none and ``create`` is
        False (nothing of it was ever written). Opening (a rewrite, after an analyzer change)
        holds only the project's gate: other projects' searches and writes go on meanwhile,
        and this project's wait for the one opening."""
        with self._lock:
            found = self._open_project(project_id)
            if found is not None:
                return found
            gate = self._gates.setdefault(project_id, threading.Lock())
        with gate:
            with self._lock:
                found = self._open_project(project_id)
                if found is not None:  # opened by the caller this one waited for
                    return found
            directory = self._projects / project_key(project_id)
            if not create and not directory.exists():
                return None
            project = _ProjectIndex(directory, self._heap, project_id, self._compact_share)
            project.open()
            with self._lock:
                if not self._opened:  # closed while this one was opening
                    project.close()
                    raise RuntimeError("TantivyBM25Index is not open")
                self._open_projects[project_id] = project
            return project

    def _open_project(self, project_id: str) -> _ProjectIndex | None:
        """The project's index if it is open (the caller holds the router's lock)."""
        if not self._opened:
            raise RuntimeError("TantivyBM25Index is not open")
        return self._open_projects.get(project_id)

    def _wrote(self, project_id: str) -> None:
        """``project_id`` holds writers now: keep the ``max_open_writers`` written last. The
        others' writers are dropped outside the router's lock (waiting for their merges must
        not hold up every other project's searches and writes); one written again meanwhile
        just makes its writers again."""
        evicted = []
        with self._lock:
            self._writing[project_id] = None
            self._writing.move_to_end(project_id)
            while len(self._writing) > self._max_writers:
                oldest, _ = self._writing.popitem(last=False)
                project = self._open_projects.get(oldest)
                if project is not None:
                    evicted.append(project)
        for project in evicted:
            project.close()

    async def write(
        self,
        project_id: str,
        remove_files: Sequence[str],
        chunks: Sequence[IndexedChunk],
        files: Sequence[WholeFile] = (),
    ) -> None:
        require_one_project(project_id, chunks, files)
        if remove_files or chunks or files:
            await asyncio.to_thread(
                self._write, project_id, list(remove_files), list(chunks), list(files)
            )

    def _write(
        self,
        project_id: str,
        remove_files: list[str],
        chunks: list[IndexedChunk],
        files: list[WholeFile],
    ) -> None:
        project = self._project(project_id, create=bool(chunks or files))
        if project is None:
            return  # removals from a project with no index remove nothing
        project.write(remove_files, chunks, files)
        self._wrote(project_id)

    async def search(self, query: str, filters: ChunkFilter, limit: int) -> list[ScoredChunk]:
        return (await self.search_with_files(query, filters, limit, 0, 0))[0]

    async def search_with_files(
        self, query: str, filters: ChunkFilter, limit: int, pool: int, top_files: int
    ) -> tuple[list[ScoredChunk], list[FileHit]]:
        return await asyncio.to_thread(
            self._search_with_files, query, filters, limit, pool, top_files
        )

    def _search_with_files(
        self, query: str, filters: ChunkFilter, limit: int, pool: int, top_files: int
    ) -> tuple[list[ScoredChunk], list[FileHit]]:
        project = self._project(filters.project_id, create=False)
        if project is None:
            return [], []
        return project.search_with_files(query, filters, limit, pool, top_files)

    async def search_whole_files(
        self, query: str, filters: ChunkFilter, limit: int
    ) -> list[FileHit]:
        return await asyncio.to_thread(self._search_whole_files, query, filters, limit)

    def _search_whole_files(self, query: str, filters: ChunkFilter, limit: int) -> list[FileHit]:
        project = self._project(filters.project_id, create=False)
        return [] if project is None else project.search_whole_files(query, filters, limit)

    async def delete_project(self, project_id: str) -> None:
        await asyncio.to_thread(self._delete_project, project_id)

    def _delete_project(self, project_id: str) -> None:
        """Both of the project's indexes go, with their directories: durable at once (after
        an opening of the project under way, which would read them)."""
        with self._lock:
            self._open_project(project_id)  # raises when closed
            gate = self._gates.setdefault(project_id, threading.Lock())
        with gate, self._lock:
            self._open_project(project_id)  # closed meanwhile: raises, deletes nothing
            project = self._open_projects.pop(project_id, None)
            self._writing.pop(project_id, None)
            if project is not None:
                project.close()
            directory = self._projects / project_key(project_id)
            shutil.rmtree(directory, ignore_errors=True)
            shutil.rmtree(_sibling(directory, "-files"), ignore_errors=True)

    async def file_chunks(self, project_id: str, file_id: str) -> list[IndexedChunk]:
        return await asyncio.to_thread(self._file_chunks, project_id, file_id)

    def _file_chunks(self, project_id: str, file_id: str) -> list[IndexedChunk]:
        project = self._project(project_id, create=False)
        return [] if project is None else project.file_chunks(file_id)

    async def count(self, project_id: str) -> int:
        return await asyncio.to_thread(self._count, project_id)

    def _count(self, project_id: str) -> int:
        project = self._project(project_id, create=False)
        return 0 if project is None else project.count(project_id)


class _ProjectIndex:
    """One project's chunk index and whole-file index. Its methods block (the router calls
    them in a worker thread). Writers are made on the first write and dropped by ``close``;
    the readers stay usable after it (a search racing a deletion reads what it had)."""

    def __init__(
        self,
        directory: Path,
        writer_heap_bytes: int,
        project_id: str,
        compact_deleted_share: float = COMPACT_DELETED_SHARE,
    ) -> None:
        self._directory = directory
        self._project_id = project_id
        self._compact_share = compact_deleted_share
        self._files_directory = _sibling(directory, "-files")
        self._heap = writer_heap_bytes
        self._schema = build_schema()
        self._files_schema = build_files_schema()
        self._index: tantivy.Index | None = None
        self._files: tantivy.Index | None = None
        self._writer: tantivy.IndexWriter | None = None
        self._files_writer: tantivy.IndexWriter | None = None
        self._lock = threading.Lock()  # one writer; commits and reloads one at a time

    def open(self) -> None:
        self._directory.mkdir(parents=True, exist_ok=True)
        marker = self._directory / _MARKER
        if tantivy.Index.exists(str(self._directory)):
            written = json.loads(marker.read_text()) if marker.exists() else {}
            version = written.get("version")
            analyzer = written.get("analyzer", 1)
            if version != SCHEMA_VERSION:
                raise IndexIncompatible(
                    f"the BM25 index in {self._directory} has schema version {version}, this "
                    f"service writes {SCHEMA_VERSION}: delete the service's data directory "
                    "and scan every project again"
                )
            index = tantivy.Index.open(str(self._directory))
        else:
            index = tantivy.Index(self._schema, path=str(self._directory), reuse=False)
            analyzer = ANALYZER_VERSION
            self._write_marker()
        index.config_reader(reload_policy="manual")
        self._index = index
        self._files = self._open_files(index)
        if analyzer != ANALYZER_VERSION:
            with self._lock:
                try:
                    self._rewrite(index, self._files, f"analyzer {analyzer} → {ANALYZER_VERSION}")
                finally:  # a failed rewrite must not keep the directory's writer lock
                    self.close_writers()
            self._write_marker()

    def _write_marker(self) -> None:
        """Write the marker whole or not at all (a crash must not leave an empty one behind)."""
        staged = self._directory / f"{_MARKER}.tmp"
        with staged.open("w") as file:
            file.write(json.dumps({"version": SCHEMA_VERSION, "analyzer": ANALYZER_VERSION}))
            file.flush()
            os.fsync(file.fileno())
        os.replace(staged, self._directory / _MARKER)

    def _open_files(self, chunks: tantivy.Index) -> tantivy.Index:
        """The whole-file index; created (and filled from the chunks' payloads) when missing."""
        directory = self._files_directory
        marker = directory / _MARKER
        if marker.exists():
            version = json.loads(marker.read_text()).get("version")
            if version != FILES_SCHEMA_VERSION:
                raise IndexIncompatible(
                    f"the whole-file index in {directory} has schema version {version}, this "
                    f"service writes {FILES_SCHEMA_VERSION}: delete it and restart (it is "
                    "rebuilt from the chunk index)"
                )
            files = tantivy.Index.open(str(directory))
        else:
            shutil.rmtree(directory, ignore_errors=True)  # an unfinished build: start again
            directory.mkdir(parents=True)
            files = tantivy.Index(self._files_schema, path=str(directory), reuse=False)
            documents = whole_files(_stored_chunks(chunks.searcher(), tantivy.Query.all_query()))
            if documents:
                writer = files.writer(heap_size=self._heap, num_threads=1)
                for document in documents:
                    writer.add_document(self._file_document(document))
                writer.commit()
                writer.wait_merging_threads()
                del writer
                log.info("whole-file index in %s built from %d files", directory, len(documents))
            marker.write_text(json.dumps({"version": FILES_SCHEMA_VERSION}))
        files.config_reader(reload_policy="manual")
        return files

    def close(self) -> None:
        """Drop the writers (every write was committed when it returned)."""
        with self._lock:
            self.close_writers()

    def close_writers(self) -> None:
        """Wait for the writers' merges and drop them (the caller holds the lock)."""
        for writer in (self._writer, self._files_writer):
            if writer is not None:
                writer.wait_merging_threads()
        self._writer = self._files_writer = None

    def _readers(self) -> tuple[tantivy.Index, tantivy.Index]:
        if self._index is None or self._files is None:
            raise RuntimeError("the project's BM25 index is not open")
        return self._index, self._files

    def write(
        self, remove_files: list[str], chunks: list[IndexedChunk], files: list[WholeFile]
    ) -> None:
        documents, file_documents = self._documents(chunks, files)  # analysis outside the lock
        with self._lock:
            index, files_index = self._readers()
            if self._writer is None:
                self._writer = index.writer(heap_size=self._heap, num_threads=1)
            writer = self._writer
            for file_id in dict.fromkeys(remove_files):
                writer.delete_documents_by_term("file_id", file_id)
            for chunk, document in zip(chunks, documents, strict=True):
                writer.delete_documents_by_term("chunk_id", chunk.chunk_id)
                writer.add_document(document)
            writer.commit()
            index.reload()
            if remove_files or files:
                if self._files_writer is None:
                    self._files_writer = files_index.writer(heap_size=self._heap, num_threads=1)
                files_writer = self._files_writer
                for file_id in dict.fromkeys([*remove_files, *(f.file_id for f in files)]):
                    files_writer.delete_documents_by_term("file_id", file_id)
                for file_document in file_documents:
                    files_writer.add_document(file_document)
                files_writer.commit()
                files_index.reload()
            if remove_files or chunks or files:
                self._compact_if_needed(index, files_index)

    def _documents(
        self, chunks: list[IndexedChunk], files: list[WholeFile]
    ) -> tuple[list[tantivy.Document], list[tantivy.Document]]:
        """The chunks' documents and the whole files'. A whole file whose text is the texts of
        these chunks joined by newlines (which no word spans) reuses their analysed text."""
        text_terms = [indexed_terms(chunk.text) for chunk in chunks]
        documents = [
            self._document(chunk, terms) for chunk, terms in zip(chunks, text_terms, strict=True)
        ]
        of_file: dict[str, list[tuple[int, int, str, str]]] = {}
        for chunk, terms in zip(chunks, text_terms, strict=True):
            of_file.setdefault(chunk.file_id, []).append(
                (chunk.ordinal, chunk.start_line, chunk.text, terms)
            )
        file_documents = [
            self._file_document(file, _terms_of_whole_file(file, of_file.get(file.file_id, [])))
            for file in files
        ]
        return documents, file_documents

    def _compact_if_needed(self, index: tantivy.Index, files_index: tantivy.Index) -> None:
        """Rewrite both indexes from the live chunks when deleted documents are more than the
        allowed share of either (the caller holds the lock and has reloaded both). The live
        chunks are read back from one searcher, COMPACT_BATCH_FILES files at a time."""
        shares = [self.deleted_share(index), self.deleted_share(files_index)]
        if max(shares) <= self._compact_share:
            return
        self._rewrite(
            index,
            files_index,
            f"deleted documents: {100 * shares[0]:.0f} % of the chunk index, "
            f"{100 * shares[1]:.0f} % of the whole-file index",
        )

    def _rewrite(self, index: tantivy.Index, files_index: tantivy.Index, reason: str) -> None:
        """Rewrite both indexes from their live chunks, analysed again, in one commit each (the
        caller holds the lock): compaction, and a project indexed by an older analyzer."""
        started = time.perf_counter()
        searcher = index.searcher()  # the live chunks as of now: the deletes below commit later
        by_file = _addresses_by_file(searcher)
        writer = self._writer or index.writer(heap_size=self._heap, num_threads=1)
        files_writer = self._files_writer or files_index.writer(heap_size=self._heap, num_threads=1)
        self._writer, self._files_writer = writer, files_writer
        # Deleted by term, not delete_all_documents: that drops the segments at once, and a merge
        # of them still running would bring their documents back when it ends; a delete goes
        # through the queue every merge applies. Fully deleted segments are dropped at commit.
        try:
            writer.delete_documents_by_term("project_id", self._project_id)
            files_writer.delete_documents_by_term("project_id", self._project_id)
            keys = list(by_file)
            chunk_count = file_count = 0
            for start in range(0, len(keys), COMPACT_BATCH_FILES):
                chunks = [
                    _chunk_at(searcher, address)
                    for key in keys[start : start + COMPACT_BATCH_FILES]
                    for address in by_file[key]
                ]
                documents, file_documents = self._documents(chunks, whole_files(chunks))
                for document in documents:
                    writer.add_document(document)
                for file_document in file_documents:
                    files_writer.add_document(file_document)
                chunk_count += len(chunks)
                file_count += len(file_documents)
            writer.commit()
            files_writer.commit()
        except BaseException:
            # Nothing of a rewrite that failed may reach the next commit (a write's): its
            # queued deletion of every document and the part it added would leave the project
            # holding that part alone.
            writer.rollback()
            files_writer.rollback()
            raise
        index.reload()
        files_index.reload()
        log.info(
            "rewrote the BM25 indexes of project %s (%s): %d chunks and %d files in %.1fs",
            self._project_id,
            reason,
            chunk_count,
            file_count,
            time.perf_counter() - started,
        )

    def deleted_share(self, index: tantivy.Index) -> float:
        """The share of ``index``'s documents that are deleted but still counted: every
        document holds the project's id, so its document frequency counts them all."""
        searcher = index.searcher()
        total = searcher.doc_freq("project_id", self._project_id)
        return 0.0 if total <= 0 else max(0.0, 1.0 - searcher.num_docs / total)

    def _file_document(self, file: WholeFile, text_terms: str | None = None) -> tantivy.Document:
        document = tantivy.Document()
        for name in FILE_KEYWORD_FIELDS:
            document.add_text(name, getattr(file, name))
        document.add_integer("snapshot_seq", file.snapshot_seq)
        text = indexed_terms(file.text) if text_terms is None else text_terms
        document.add_text("text", indexed_terms(file.path) + " " + text)
        payload = {"file_id": file.file_id, "path": file.path, "language": file.language}
        document.add_bytes("payload", json.dumps({**payload, "chunks": file.chunks}).encode())
        return document

    def _document(self, chunk: IndexedChunk, text_terms: str | None = None) -> tantivy.Document:
        document = tantivy.Document()
        for name in KEYWORD_FIELDS:
            document.add_text(name, getattr(chunk, name))
        document.add_text("snapshot_id", chunk.snapshot_id)
        document.add_integer("snapshot_seq", chunk.snapshot_seq)
        document.add_unsigned("file_key", file_key(chunk.file_id))
        document.add_text("text", indexed_terms(chunk.text) if text_terms is None else text_terms)
        document.add_text("symbol", indexed_terms(chunk.symbol_qualified_name))
        document.add_text("name", indexed_terms(chunk.symbol_name))
        document.add_text("path_tokens", indexed_terms(chunk.path))
        document.add_bytes("payload", json.dumps(chunk.to_payload()).encode())
        return document

    def search_with_files(
        self, query: str, filters: ChunkFilter, limit: int, pool: int, top_files: int
    ) -> tuple[list[ScoredChunk], list[FileHit]]:
        index, _ = self._readers()
        searcher = index.searcher()
        hits = self._hits(searcher, query, filters, max(limit, pool))
        head = [
            ScoredChunk(_chunk_at(searcher, address), float(score))
            for score, address in hits[:limit]
        ]
        if top_files <= 0 or not hits:
            return head, []
        keys = cast(
            list[int], searcher.fast_field_values("file_key", [address for _, address in hits])
        )
        first: dict[int, tantivy.DocAddress] = {}
        for key, (_, address) in zip(keys, hits, strict=True):
            first.setdefault(key, address)
        known = dict(zip(keys, (scored.chunk for scored in head), strict=False))  # head's files

        def describe(wanted: Sequence[int]) -> dict[int, IndexedChunk]:
            return {
                key: known[key] if key in known else _chunk_at(searcher, first[key])
                for key in wanted
            }

        scores = [float(score) for score, _ in hits]
        return head, best_files(zip(keys, scores, strict=True), top_files, describe)

    def _hits(
        self, searcher: tantivy.Searcher, query: str, filters: ChunkFilter, limit: int
    ) -> list[tuple[float, tantivy.DocAddress]]:
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        should = [
            (
                tantivy.Occur.Should,
                tantivy.Query.boost_query(tantivy.Query.term_query(self._schema, field, term), w),
            )
            for term in terms
            for field, w in ANALYSED_FIELDS.items()
        ]
        return _filtered_hits(searcher, self._schema, should, filters, limit)

    def search_whole_files(self, query: str, filters: ChunkFilter, limit: int) -> list[FileHit]:
        _, files = self._readers()
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        schema = self._files_schema
        should = [
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", term)) for term in terms
        ]
        searcher = files.searcher()
        found = []
        for score, address in _filtered_hits(searcher, schema, should, filters, limit):
            payload = json.loads(bytes(searcher.doc(address)["payload"][0]))
            found.append((float(score), payload))
        return ranked_whole_files(found)

    def file_chunks(self, file_id: str) -> list[IndexedChunk]:
        index, _ = self._readers()
        query = tantivy.Query.term_query(self._schema, "file_id", file_id)
        return _stored_chunks(index.searcher(), query)

    def count(self, project_id: str) -> int:
        index, _ = self._readers()
        query = tantivy.Query.term_query(self._schema, "project_id", project_id)
        result = index.searcher().search(query, 1, count=True)
        return int(getattr(result, "count", 0) or 0)


def _filtered_hits(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    should: list[tuple[tantivy.Occur, tantivy.Query]],
    filters: ChunkFilter,
    limit: int,
) -> list[tuple[float, tantivy.DocAddress]]:
    clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
    clauses += [
        (tantivy.Occur.Must, tantivy.Query.const_score_query(condition, 0.0))
        for condition in _filter_queries(schema, filters)
    ]
    result = searcher.search(tantivy.Query.boolean_query(clauses), limit, count=False)
    return list(result.hits)


def _filter_queries(schema: tantivy.Schema, filters: ChunkFilter) -> list[tantivy.Query]:
    """The same conditions on either index (both have these fields)."""
    conditions = [tantivy.Query.term_query(schema, "project_id", filters.project_id)]
    if filters.subsystem:
        conditions.append(tantivy.Query.term_query(schema, "subsystem", filters.subsystem))
    if filters.languages:
        conditions.append(tantivy.Query.term_set_query(schema, "language", list(filters.languages)))
    if filters.path_prefix:
        conditions.append(
            tantivy.Query.regex_query(
                schema, "path", _regex_literal(filters.path_prefix) + "(?s:.*)"
            )
        )
    if filters.max_snapshot_seq is not None:
        conditions.append(
            tantivy.Query.range_query(
                schema,
                "snapshot_seq",
                tantivy.FieldType.Integer,
                upper_bound=filters.max_snapshot_seq,
            )
        )
    return conditions


def _addresses(searcher: tantivy.Searcher, query: tantivy.Query) -> list[tantivy.DocAddress]:
    """Where every document ``query`` matches is (in index order)."""
    count = int(getattr(searcher.search(query, 1, count=True), "count", 0) or 0)
    if not count:
        return []
    return [address for _, address in searcher.search(query, count).hits]


def _stored_chunks(searcher: tantivy.Searcher, query: tantivy.Query) -> list[IndexedChunk]:
    """Every chunk ``query`` matches, read back from its stored payload (in index order)."""
    return [_chunk_at(searcher, address) for address in _addresses(searcher, query)]


def _addresses_by_file(searcher: tantivy.Searcher) -> dict[int, list[tantivy.DocAddress]]:
    """Where each file's live chunks are in ``searcher``'s index, by ``file_key`` (read from
    the fast field: no payload is read until its batch is rewritten)."""
    addresses = _addresses(searcher, tantivy.Query.all_query())
    if not addresses:
        return {}
    keys = cast(list[int], searcher.fast_field_values("file_key", addresses))
    found: dict[int, list[tantivy.DocAddress]] = {}
    for key, address in zip(keys, addresses, strict=True):
        found.setdefault(key, []).append(address)
    return found


def _chunk_at(searcher: tantivy.Searcher, address: tantivy.DocAddress) -> IndexedChunk:
    return IndexedChunk.from_payload(json.loads(bytes(searcher.doc(address)["payload"][0])))


def _terms_of_whole_file(file: WholeFile, chunks: list[tuple[int, int, str, str]]) -> str | None:
    """The analysed text of ``file`` from its chunks' (ordinal, start line, text, analysed
    text) when their texts in order are exactly the file's; None when they are not."""
    if len(chunks) != file.chunks:
        return None
    chunks.sort(key=lambda chunk: (chunk[0], chunk[1]))
    if "\n".join(chunk[2] for chunk in chunks) != file.text:
        return None
    return " ".join(chunk[3] for chunk in chunks)
