"""Service layer of knowledge documents from outside a repository: upsert, delete, CHM import.

A project's external documents are the files of its documents source (kind ``documents``, made
with the first document). A change stores the new contents by hash, writes the document rows in
one transaction and starts a scan job of that source alone; the scan walks the rows as it walks a
directory, so the change reaches ast, retrieval and impact as ``files.changed`` with the same
message ids, snapshots and completion as any scan, and a scan of the other sources leaves the
documents alone. Every check (format, size, the whole CHM extraction) runs before anything is
written; if the scan cannot start (another began meanwhile) the rows are put back as they were.
"""

from __future__ import annotations

import asyncio
import hashlib
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from locus.ingestion.adapters.blob_store import FileBlobStore
from locus.ingestion.adapters.chm_extractor import ChmExtractor
from locus.ingestion.adapters.store import IngestionStore
from locus.ingestion.adapters.tables import JobRow, KnowledgeDocumentRow, ProjectRow, SourceRow
from locus.ingestion.domain.chm_contents import chm_pages
from locus.ingestion.domain.errors import InvalidRequest, ScanInProgress
from locus.ingestion.domain.knowledge import (
    DocumentDraft,
    document_path,
    draft_document,
)
from locus.ingestion.scanning import Ingestion, file_id_for
from locus.ingestion.settings import IngestionSettings

CHM_URL_SCHEME = "chm:"
MAX_CHM_FILENAME_CHARS = 255


@dataclass(frozen=True)
class DocumentChange:
    """What an upsert or delete did: the document and the job indexing it (None: unchanged)."""

    document: KnowledgeDocumentRow
    job: JobRow | None


@dataclass(frozen=True)
class ChmImport:
    documents: list[KnowledgeDocumentRow]  # the package's pages, in table-of-contents order
    changed: int
    removed: int
    job: JobRow | None


def document_file_id(row: KnowledgeDocumentRow) -> str:
    return file_id_for(row.project_id, row.source_id, row.relative_path)


class KnowledgeDocuments:
    def __init__(
        self,
        settings: IngestionSettings,
        ingestion: Ingestion,
        store: IngestionStore,
        blobs: FileBlobStore,
        chm: ChmExtractor,
    ) -> None:
        self._settings = settings
        self._ingestion = ingestion
        self._store = store
        self._blobs = blobs
        self._chm = chm

    async def upsert(
        self, project_ref: str, title: str, url: str, body: str, format_name: str
    ) -> DocumentChange:
        project = await self._ingestion.get_project(project_ref)
        draft = draft_document(
            project.project_id, title, url, body, format_name, self._settings.document_max_bytes
        )
        await self._ingestion.refuse_while_scanning(project, "changing its documents")
        existing = {
            row.document_id: row
            for row in await self._store.knowledge_documents(project.project_id)
        }
        current = existing.get(draft.document_id)
        if current is not None and _same(current, draft):
            return DocumentChange(current, None)
        source = await self._documents_source(project)
        row = self._row(project, source, draft, existing)
        job = await self._apply(project, source, existing, [row], [], [draft])
        return DocumentChange(row, job)

    async def delete(self, project_ref: str, document_id: str, url: str) -> DocumentChange:
        project = await self._ingestion.get_project(project_ref)
        document_id, url = document_id.strip(), url.strip()
        if bool(document_id) == bool(url):
            raise InvalidRequest("give the document to delete by its document_id or its url")
        existing = {
            row.document_id: row
            for row in await self._store.knowledge_documents(project.project_id)
        }
        found = next(
            (
                row
                for row in existing.values()
                if (document_id and row.document_id == document_id) or (url and row.url == url)
            ),
            None,
        )
        if found is None:
            raise InvalidRequest(
                f"project {project.name!r} has no knowledge document "
                f"{document_id or url!r}; see its files under knowledge/ (locus files)"
            )
        await self._ingestion.refuse_while_scanning(project, "changing its documents")
        source = await self._documents_source(project)
        job = await self._apply(project, source, existing, [], [found.document_id], [])
        return DocumentChange(found, job)

    async def import_chm(self, project_ref: str, filename: str, content: bytes) -> ChmImport:
        project = await self._ingestion.get_project(project_ref)
        name = posixpath.basename(filename.replace("\\", "/").strip())
        if not name:
            raise InvalidRequest("give the package's file name in 'filename' (e.g. manual.chm)")
        if len(name) > MAX_CHM_FILENAME_CHARS:
            raise InvalidRequest(f"filename is longer than {MAX_CHM_FILENAME_CHARS} characters")
        if not content:
            raise InvalidRequest(f"{name} is empty: give the package's bytes in 'content'")
        if len(content) > self._settings.chm_max_bytes:
            raise InvalidRequest(
                f"{name} is {len(content):,} bytes; a CHM package may have at most "
                f"{self._settings.chm_max_bytes:,}"
            )
        await self._ingestion.refuse_while_scanning(project, "importing a package")
        files = await asyncio.to_thread(self._chm.extract, name, content)
        package_title = name.rsplit(".", 1)[0] or name
        pages = chm_pages(files, package_title)
        if not pages:
            raise InvalidRequest(f"{name} holds no HTML page to index")
        prefix = f"{CHM_URL_SCHEME}{name}/"
        drafts: list[DocumentDraft] = []
        for page in pages:
            try:
                drafts.append(
                    draft_document(
                        project.project_id,
                        page.title,
                        prefix + page.path,
                        _page_text(files[page.path]),
                        "html",
                        self._settings.document_max_bytes,
                    )
                )
            except InvalidRequest as error:
                raise InvalidRequest(f"{name}, page {page.path}: {error}") from None
        existing = {
            row.document_id: row
            for row in await self._store.knowledge_documents(project.project_id)
        }
        wanted = {draft.document_id for draft in drafts}
        removed = [
            row.document_id
            for row in existing.values()
            if row.url.startswith(prefix) and row.document_id not in wanted
        ]
        changed = [
            draft
            for draft in drafts
            if (row := existing.get(draft.document_id)) is None or not _same(row, draft)
        ]
        if not changed and not removed:
            return ChmImport([existing[d.document_id] for d in drafts], 0, 0, None)
        source = await self._documents_source(project)
        # Paths are given in table-of-contents order, so a page keeps its path on reimport.
        remaining = {k: v for k, v in existing.items() if k not in removed}
        rows: dict[str, KnowledgeDocumentRow] = {}
        for draft in drafts:
            row = existing.get(draft.document_id)
            if row is None or not _same(row, draft):
                row = self._row(project, source, draft, {**remaining, **rows})
            rows[draft.document_id] = row
        upserts = [rows[draft.document_id] for draft in changed]
        job = await self._apply(project, source, existing, upserts, removed, changed)
        return ChmImport(list(rows.values()), len(changed), len(removed), job)

    async def _documents_source(self, project: ProjectRow) -> SourceRow:
        return await self._store.documents_source(
            SourceRow(
                source_id=_new_source_id(project.project_id),
                project_id=project.project_id,
                kind="documents",
                path="",
                git_url="",
                git_ref="",
                created_at=self._ingestion.now(),
            )
        )

    def _row(
        self,
        project: ProjectRow,
        source: SourceRow,
        draft: DocumentDraft,
        others: dict[str, KnowledgeDocumentRow],
    ) -> KnowledgeDocumentRow:
        taken = {row.relative_path for key, row in others.items() if key != draft.document_id}
        return KnowledgeDocumentRow(
            document_id=draft.document_id,
            project_id=project.project_id,
            source_id=source.source_id,
            title=draft.title,
            url=draft.url,
            format=draft.format,
            relative_path=document_path(draft.title, draft.format, draft.document_id, taken),
            sha256=draft.sha256,
            size_bytes=len(draft.data),
            updated_at=self._ingestion.now(),
        )

    async def _apply(
        self,
        project: ProjectRow,
        source: SourceRow,
        before: dict[str, KnowledgeDocumentRow],
        upserts: Sequence[KnowledgeDocumentRow],
        removed_ids: Sequence[str],
        drafts: Sequence[DocumentDraft],
    ) -> JobRow:
        """Store the contents, write the rows, start the documents source's scan; put the rows
        back when the scan cannot start."""

        def store_contents() -> None:
            for draft in drafts:
                self._blobs.put(draft.data, draft.sha256)

        await asyncio.to_thread(store_contents)
        await self._store.replace_documents(project.project_id, upserts, removed_ids)
        try:
            return await self._ingestion.start_scan(project.project_id, [source.source_id])
        except ScanInProgress:
            touched = {row.document_id for row in upserts} | set(removed_ids)
            await self._store.replace_documents(
                project.project_id,
                [before[key] for key in touched if key in before],
                sorted(touched - set(before)),
            )
            raise


def _same(row: KnowledgeDocumentRow, draft: DocumentDraft) -> bool:
    return (row.sha256, row.title, row.url, row.format) == (
        draft.sha256,
        draft.title,
        draft.url,
        draft.format,
    )


def _page_text(data: bytes) -> str:
    """A page's text: UTF-8 when it decodes, else Windows-1252 (what most CHM pages are in)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _new_source_id(project_id: str) -> str:
    """Deterministic per project, so concurrent first documents agree on the source."""
    return "src_" + hashlib.sha256(f"documents\0{project_id}".encode()).hexdigest()[:20]
