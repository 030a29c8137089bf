"""Service layer of ast: one ``files.changed`` batch from event to ``index.updated``.

For each file of the batch, in order:
- DELETED: retract everything of the file (one transaction, a tombstone keeps its
  snapshot_seq) and publish a ``files.parsed`` with change type DELETED and no items;
- otherwise: fetch its text from ingestion by sha256, extract symbols, relations, dependencies
  and chunks in a worker process, module names taken from the source root the event gives
  (documents become sections, ``domain.documents``; files the extractor has no language for
  become line windows, ``unsupported_language``), replace the file's rows in one transaction
  and publish ``files.parsed`` in parts (message id
  ``files.parsed:<job>:<file>:<sha256>:<part>``) with relation targets and dependencies
  resolved against the project as stored at that moment.
An event older than what the store holds for a file (snapshot_seq) changes nothing: SKIPPED.
Up to ``parse_workers`` files are fetched and parsed ahead while earlier ones are stored.
Then ONE ``index.updated`` (stage "ast", ``index.updated:ast:<job>:<batch>``) reports every file.
Everything is keyed by file and content, so a redelivered batch converges to the same state.
A batch of a deleted project (a late event of a finished scan) is dropped: nothing fetched,
stored or published; the store refuses its writes too, should the deletion land meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from opentelemetry import trace

from locus.ast.adapters.messages import files_parsed_parts, source_root
from locus.ast.adapters.parser_pool import ParserPool
from locus.ast.adapters.store import AstStore, FileVersion, FileWrite
from locus.ast.domain import FileAnalysis, UndecodableSource, extracts
from locus.ast.domain.language_spec import SourceRoot
from locus.ast.plain_text import plain_text_analysis
from locus.ast.ports import FetchedContents, FileContentSource
from locus.ast.settings import AstSettings
from locus.messaging import EventBus
from locus.telemetry import safe_message
from locus.v1 import common_pb2, events_pb2

log = logging.getLogger(__name__)

STAGE = "ast"
# A failed file's error, as stored and shown by GetScan (redacted and cut to this many bytes).
_GIVEN_UP_ERROR_LIMIT = 500
_GROUP_LIMIT = 64  # files per store transaction


@dataclass(frozen=True)
class _Prepared:
    """What to do with one file once its turn to be stored comes."""

    analysis: FileAnalysis | None = None
    unsupported_language: bool = False
    retract: bool = False
    skipped: bool = False
    error: str = ""


class AstIndexer:
    def __init__(
        self,
        settings: AstSettings,
        store: AstStore,
        content: FileContentSource,
        bus: EventBus,
        tracer: trace.Tracer,
        parser: ParserPool,
    ) -> None:
        self._settings = settings
        self._parser = parser
        self._store = store
        self._content = content
        self._bus = bus
        self._tracer = tracer
        self._policy = settings.chunking_policy

    async def delete_project(self, event: events_pb2.ProjectDeleted) -> None:
        """``project.deleted``: delete everything stored of the project and keep its tombstone
        (idempotent)."""
        files = await self._store.delete_project(event.project_id)
        log.info("deleted project %s: %d files retracted", event.project_id, files)

    async def report_given_up(self, event: events_pb2.FilesChanged, reason: str) -> None:
        """A batch dead-lettered after its last delivery (ingestion could not serve its
        contents, say): its ``index.updated`` reports every file FAILED with the reason, so the
        scan job completes with those files failed instead of waiting an hour for them. The
        message id is the one a processed batch publishes under: one of the two counts."""
        files = [
            events_pb2.IndexedFile(
                file_id=changed.file_id,
                sha256=changed.sha256,
                change_type=changed.change_type,
                status=events_pb2.INDEX_STATUS_FAILED,
                error=safe_message(f"ast gave up on the batch: {reason}", _GIVEN_UP_ERROR_LIMIT),
            )
            for changed in event.files
            if changed.file_id
        ]
        if not event.job_id or not event.project_id or not files:
            return  # nothing a job could wait for
        await self._publish_update(event, files)
        log.warning(
            "job %s batch %d: %d files failed, the batch was dead-lettered",
            event.job_id,
            event.batch_index,
            len(files),
        )

    async def _publish_update(
        self, event: events_pb2.FilesChanged, files: Sequence[events_pb2.IndexedFile]
    ) -> events_pb2.IndexUpdated:
        """The batch's ``index.updated`` (one id per batch: a repeat is deduplicated)."""
        update = events_pb2.IndexUpdated(
            job_id=event.job_id,
            project_id=event.project_id,
            snapshot_id=event.snapshot_id,
            stage=STAGE,
            files=files,
        )
        await self._bus.publish(
            self._bus.subjects.index_updated,
            update,
            message_id=f"index.updated:{STAGE}:{event.job_id}:{event.batch_index}",
        )
        return update

    async def index_batch(
        self,
        event: events_pb2.FilesChanged,
        *,
        progress: Callable[[], Awaitable[None]],
        final_attempt: bool = False,
    ) -> events_pb2.IndexUpdated | None:
        """Index every file of the batch, then publish and return its ``index.updated``; None
        for a batch of a deleted project, which is dropped. Raises when a file's content cannot
        be fetched now (the batch is retried)."""
        if await self._store.deleted_projects([event.project_id]):
            log.info(
                "dropping files.changed of deleted project %s (job %s, batch %d, %d files)",
                event.project_id,
                event.job_id,
                event.batch_index,
                len(event.files),
            )
            return None
        with self._tracer.start_as_current_span(
            "ast.index_batch",
            attributes={
                "locus.job_id": event.job_id,
                "locus.batch_index": event.batch_index,
                "locus.files": len(event.files),
            },
        ):
            reports = await self._index_files(event, progress, final_attempt)
            update = await self._publish_update(event, reports)
        counts: dict[int, int] = {}
        for report in reports:
            counts[report.status] = counts.get(report.status, 0) + 1
        log.info(
            "job %s batch %d: %d indexed, %d skipped, %d failed",
            event.job_id,
            event.batch_index,
            counts.get(events_pb2.INDEX_STATUS_INDEXED, 0),
            counts.get(events_pb2.INDEX_STATUS_SKIPPED, 0),
            counts.get(events_pb2.INDEX_STATUS_FAILED, 0),
        )
        return update

    async def _index_files(
        self,
        event: events_pb2.FilesChanged,
        progress: Callable[[], Awaitable[None]],
        final_attempt: bool,
    ) -> list[events_pb2.IndexedFile]:
        files = [(changed, _version(event, changed)) for changed in event.files]
        stored = await self._store.stored_snapshot_seqs([v.file_id for _, v in files])
        decided = [
            _decided_without_content(changed, version, stored.get(version.file_id))
            for changed, version in files
        ]
        wanted = [
            version.sha256 for (_, version), early in zip(files, decided, strict=True) if not early
        ]
        # Every content of the batch in one call (or a few), not one call per file.
        with self._tracer.start_as_current_span(
            "ast.fetch_contents", attributes={"locus.files": len(wanted)}
        ):
            contents = await self._content.texts(wanted, final_attempt=final_attempt)
        workers = asyncio.Semaphore(self._settings.parse_workers)

        async def prepare(
            changed: events_pb2.ChangedFile, version: FileVersion, early: _Prepared | None
        ) -> _Prepared:
            if early is not None:
                return early
            async with workers:
                return await self._prepare(changed, version, contents)

        tasks = [
            asyncio.create_task(prepare(changed, version, early))
            for (changed, version), early in zip(files, decided, strict=True)
        ]
        reports: list[events_pb2.IndexedFile] = []
        try:
            file_ids = [version.file_id for _, version in files]
            start = 0
            while start < len(files):
                await tasks[start]
                end = group_end(
                    file_ids,
                    [task.done() for task in tasks],
                    start,
                    _GROUP_LIMIT,
                )
                group = [(*files[i], tasks[i].result()) for i in range(start, end)]
                for (changed, _, _), (status, error) in zip(
                    group, await self._commit(event, group), strict=True
                ):
                    reports.append(
                        events_pb2.IndexedFile(
                            file_id=changed.file_id,
                            sha256=changed.sha256,
                            change_type=changed.change_type,
                            status=status,
                            error=error,
                        )
                    )
                await progress()  # extends the ack deadline of a long batch
                start = end
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return reports

    async def _prepare(
        self,
        changed: events_pb2.ChangedFile,
        version: FileVersion,
        contents: FetchedContents,
    ) -> _Prepared:
        """A file whose content was fetched: parsed (or why it cannot be)."""
        if version.sha256 in contents.rejected:
            return _Prepared(error=contents.rejected[version.sha256])
        text = contents.texts.get(version.sha256)
        if text is None:
            return _Prepared(error=f"ingestion returned no content for sha256 {version.sha256}")
        with self._tracer.start_as_current_span(
            "ast.parse_file",
            attributes={"locus.file_id": version.file_id, "locus.language": version.language},
        ):
            if extracts(version.relative_path, version.language):
                return await self._parse(version, text, source_root(changed))
            analysis = await asyncio.to_thread(
                plain_text_analysis,
                text,
                version.language,
                max_lines=self._settings.text_window_lines,
                max_chars=self._settings.chunk_max_chars,
            )
            return _Prepared(analysis=analysis, unsupported_language=True)

    async def _parse(self, version: FileVersion, text: str, root: SourceRoot) -> _Prepared:
        try:
            analysis = await self._parser.extract(
                version.relative_path, text.encode("utf-8"), version.language, self._policy, root
            )
        except UndecodableSource as error:
            return _Prepared(error=str(error))
        except Exception as error:  # a parser bug on one file must not block the batch
            log.exception("extracting %s failed", version.relative_path)
            return _Prepared(error=f"extraction failed: {type(error).__name__}: {error}")
        return _Prepared(analysis=analysis)

    async def _commit(
        self,
        event: events_pb2.FilesChanged,
        group: list[tuple[events_pb2.ChangedFile, FileVersion, _Prepared]],
    ) -> list[tuple[events_pb2.IndexStatus, str]]:
        """Store the group's files in one transaction, then publish each one's files.parsed;
        the status of each file, in order."""
        writes = [
            FileWrite(version, prepared.analysis, prepared.unsupported_language)
            for _, version, prepared in group
            if not prepared.error and not prepared.skipped
        ]
        stored = iter(await self._store.write_files(writes) if writes else [])
        outcomes: list[tuple[events_pb2.IndexStatus, str]] = []
        for changed, version, prepared in group:
            if prepared.error:
                log.warning("%s: %s", version.relative_path, prepared.error)
                outcomes.append((events_pb2.INDEX_STATUS_FAILED, prepared.error))
                continue
            if prepared.skipped:
                outcomes.append((events_pb2.INDEX_STATUS_SKIPPED, ""))
                continue
            index = next(stored)
            if index is None:  # the store holds a newer snapshot of the file
                outcomes.append((events_pb2.INDEX_STATUS_SKIPPED, ""))
                continue
            header = events_pb2.FilesParsed(
                job_id=event.job_id,
                project_id=event.project_id,
                snapshot_id=event.snapshot_id,
                snapshot_seq=event.snapshot_seq,
                file=changed,
            )
            if prepared.retract:
                header.part_count = 1
                await self._publish_parts(event, changed, [header])
                outcomes.append((events_pb2.INDEX_STATUS_INDEXED, ""))
                continue
            analysis = prepared.analysis
            assert analysis is not None
            header.module_name = analysis.module_name
            header.parse_errors = analysis.parse_errors
            header.unsupported_language = prepared.unsupported_language
            parts = files_parsed_parts(
                header,
                index,
                max_items=self._settings.max_items_per_part,
                max_bytes=self._settings.max_part_bytes,
            )
            await self._publish_parts(event, changed, parts)
            if analysis.omitted:  # indexed, with the reason part of it is not
                log.warning("%s: %s", version.relative_path, analysis.omitted)
            outcomes.append((events_pb2.INDEX_STATUS_INDEXED, analysis.omitted or ""))
        return outcomes

    async def _publish_parts(
        self,
        event: events_pb2.FilesChanged,
        changed: events_pb2.ChangedFile,
        parts: list[events_pb2.FilesParsed],
    ) -> None:
        for part in parts:
            await self._bus.publish(
                self._bus.subjects.files_parsed,
                part,
                message_id=(
                    f"files.parsed:{event.job_id}:{changed.file_id}:{changed.sha256}:"
                    f"{part.part_index}"
                ),
            )


def group_end(file_ids: Sequence[str], ready: Sequence[bool], start: int, limit: int) -> int:
    """Where the store transaction that begins at ``start`` (a ready file) ends: after the
    run of ready files that follows it, before a file it already holds, at most ``limit``."""
    end, seen = start + 1, {file_ids[start]}
    while end < len(file_ids) and ready[end] and file_ids[end] not in seen and end - start < limit:
        seen.add(file_ids[end])
        end += 1
    return end


def _decided_without_content(
    changed: events_pb2.ChangedFile, version: FileVersion, stored_seq: int | None
) -> _Prepared | None:
    """What happens to a file that needs no content (deleted, older than what is stored, or
    without a hash to fetch); None when its content is to be fetched and parsed."""
    if changed.change_type == common_pb2.CHANGE_TYPE_DELETED:
        return _Prepared(retract=True)
    if stored_seq is not None and stored_seq > version.snapshot_seq:
        return _Prepared(skipped=True)
    if not version.sha256:
        return _Prepared(error="files.changed gave no sha256 for a file that was not deleted")
    return None


def _version(event: events_pb2.FilesChanged, changed: events_pb2.ChangedFile) -> FileVersion:
    return FileVersion(
        file_id=changed.file_id,
        project_id=event.project_id,
        source_id=changed.source_id,
        relative_path=changed.relative_path,
        sha256=changed.sha256,
        language=changed.language,
        snapshot_id=event.snapshot_id,
        snapshot_seq=event.snapshot_seq,
        job_id=event.job_id,
    )
