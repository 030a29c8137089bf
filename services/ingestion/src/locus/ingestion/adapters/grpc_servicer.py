"""IngestionService over gRPC: validates requests, maps domain errors to status codes."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from locus.ingestion.adapters.chm_extractor import ChmUnavailable
from locus.ingestion.adapters.registry_rpcs import RegistryRpcs
from locus.ingestion.adapters.tables import JobRow, KnowledgeDocumentRow, ProjectRow, SourceRow
from locus.ingestion.domain import errors
from locus.ingestion.file_reading import FileContent, FileReading
from locus.ingestion.history_reading import ProjectHistories
from locus.ingestion.knowledge_documents import KnowledgeDocuments, document_file_id
from locus.ingestion.registry import Registry
from locus.ingestion.scanning import Ingestion, scan_level, scan_stats
from locus.rpc import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    RpcContext,
    Unavailable,
)
from locus.v1 import common_pb2, ingestion_pb2, ingestion_pb2_grpc

T = TypeVar("T")
DEFAULT_PAGE = 100
MAX_PAGE = 1000
MAX_OFFSET = 2**31 - 1  # what a store's OFFSET takes; a token beyond it is forged
MAX_PATH_CHARS = 4096
_STATES = {
    "QUEUED": ingestion_pb2.SCAN_STATE_QUEUED,
    "SCANNING": ingestion_pb2.SCAN_STATE_SCANNING,
    "INDEXING": ingestion_pb2.SCAN_STATE_INDEXING,
    "COMPLETED": ingestion_pb2.SCAN_STATE_COMPLETED,
    "FAILED": ingestion_pb2.SCAN_STATE_FAILED,
}

_SOURCE_KINDS = {
    "local_directory": ingestion_pb2.SOURCE_KIND_LOCAL_DIRECTORY,
    "git": ingestion_pb2.SOURCE_KIND_GIT,
    "documents": ingestion_pb2.SOURCE_KIND_DOCUMENTS,
}


@asynccontextmanager
async def domain_errors() -> AsyncIterator[None]:
    try:
        yield
    except (errors.InvalidRequest, errors.InvalidSourceRoot, errors.PathEscapesRoot) as e:
        raise InvalidArgument(str(e)) from e
    except errors.SourceRootNotAllowed as e:
        raise PermissionDenied(str(e)) from e
    except (
        errors.ProjectNotFound,
        errors.JobNotFound,
        errors.ContentNotFound,
        errors.SystemNotFound,
        errors.SubsystemNotFound,
        errors.SourceNotFound,
    ) as e:
        raise NotFound(str(e)) from e
    except (
        errors.ProjectAlreadyExists,
        errors.SourceAlreadyExists,
        errors.RegistryNameTaken,
    ) as e:
        raise AlreadyExists(str(e)) from e
    except (
        errors.ScanInProgress,
        errors.RegistryNotEmpty,
        errors.NoSources,
        errors.GitSourceUnavailable,
        errors.CredentialUnavailable,
    ) as e:
        raise FailedPrecondition(str(e)) from e
    except errors.GitRefNotFound as e:
        raise InvalidArgument(str(e)) from e
    except ChmUnavailable as e:
        raise Unavailable(str(e)) from e


def page_bounds(page_size: int, page_token: str) -> tuple[int, int]:
    if page_size < 0:
        raise InvalidArgument("page_size must not be negative")
    limit = min(page_size or DEFAULT_PAGE, MAX_PAGE)
    if not page_token:
        return 0, limit
    try:
        offset = int(base64.urlsafe_b64decode(page_token.encode()).decode())
    except ValueError:
        raise InvalidArgument("page_token is not one this server issued") from None
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidArgument("page_token is not one this server issued")
    return offset, limit


def next_token(offset: int, limit: int, returned: int) -> str:
    if returned < limit:
        return ""
    return base64.urlsafe_b64encode(str(offset + returned).encode()).decode()


def source_message(row: SourceRow) -> ingestion_pb2.Source:
    message = ingestion_pb2.Source(
        source_id=row.source_id,
        project_id=row.project_id,
        kind=_SOURCE_KINDS.get(row.kind, ingestion_pb2.SOURCE_KIND_UNSPECIFIED),
        path=row.path,
        git_url=row.git_url,
        git_ref=row.git_ref,
        credential_file=row.credential_file,
        credential_env=row.credential_env,
        poll_seconds=row.poll_seconds,
        last_commit_sha=row.last_commit_sha,
    )
    message.created_at.FromDatetime(row.created_at)
    return message


def document_message(row: KnowledgeDocumentRow) -> ingestion_pb2.KnowledgeDocument:
    message = ingestion_pb2.KnowledgeDocument(
        document_id=row.document_id,
        project_id=row.project_id,
        title=row.title,
        url=row.url,
        format=row.format,
        relative_path=row.relative_path,
        file_id=document_file_id(row),
        sha256=row.sha256,
        size_bytes=row.size_bytes,
    )
    message.updated_at.FromDatetime(row.updated_at)
    return message


class IngestionServicer(RegistryRpcs, ingestion_pb2_grpc.IngestionServiceServicer):
    def __init__(
        self,
        ingestion: Ingestion,
        required_stages: list[str],
        embedding_stages: list[str] | None = None,
        *,
        documents: KnowledgeDocuments,
        registry: Registry,
        contents: FileReading,
        histories: ProjectHistories,
    ) -> None:
        self._ingestion = ingestion
        self._contents = contents
        self._histories = histories
        self._registry = registry
        self._documents = documents
        self._stages = required_stages
        self._embedding_stages = embedding_stages or []

    async def _call(self, work: Callable[[], Awaitable[T]]) -> T:
        async with domain_errors():
            return await work()

    def _page(self, page: common_pb2.PageRequest) -> tuple[int, int]:
        return page_bounds(page.page_size, page.page_token)

    def _next_token(self, offset: int, limit: int, returned: int) -> str:
        return next_token(offset, limit, returned)

    async def _job_message(self, job: JobRow) -> ingestion_pb2.ScanJob:
        progress = await self._ingestion.job_progress(job)
        message = ingestion_pb2.ScanJob(
            job_id=job.job_id,
            project_id=job.project_id,
            snapshot_id=job.snapshot_id,
            state=_STATES.get(job.state, ingestion_pb2.SCAN_STATE_UNSPECIFIED),
            stats=scan_stats(job, progress),
            error=job.error,
            level=scan_level(job, progress),
            without_vectors=not self._embedding_stages,
            commits=[
                ingestion_pb2.SourceCommit(
                    source_id=row.source_id, git_ref=row.git_ref, commit_sha=row.commit_sha
                )
                for row in await self._ingestion.job_commits(job.job_id)
            ],
        )
        if job.state == "INDEXING":
            message.pending_stages.extend(self._stages + self._embedding_stages)
        elif job.state == "COMPLETED" and not progress.embedded_done:
            message.pending_stages.extend(self._embedding_stages)
        message.created_at.FromDatetime(job.created_at)
        if job.completed_at:
            message.completed_at.FromDatetime(job.completed_at)
        return message

    async def CreateProject(
        self, request: ingestion_pb2.CreateProjectRequest, context: RpcContext
    ) -> ingestion_pb2.Project:
        async def create() -> ProjectRow:
            subsystem_id = await self._registry.subsystem_for_new_project(
                request.subsystem_id, request.system, request.subsystem
            )
            return await self._ingestion.create_project(request.name, subsystem_id)

        row = await self._call(create)
        return (await self._project_messages([row]))[0]

    async def GetProject(
        self, request: ingestion_pb2.GetProjectRequest, context: RpcContext
    ) -> ingestion_pb2.Project:
        row = await self._call(lambda: self._ingestion.get_project(request.project_id))
        return (await self._project_messages([row]))[0]

    async def ListProjects(
        self, request: ingestion_pb2.ListProjectsRequest, context: RpcContext
    ) -> ingestion_pb2.ListProjectsResponse:
        offset, limit = page_bounds(request.page.page_size, request.page.page_token)
        rows = await self._call(
            lambda: self._registry.list_projects(offset, limit, request.system, request.subsystem)
        )
        return ingestion_pb2.ListProjectsResponse(
            projects=await self._project_messages(rows),
            next_page_token=next_token(offset, limit, len(rows)),
        )

    async def UpdateProject(
        self, request: ingestion_pb2.UpdateProjectRequest, context: RpcContext
    ) -> ingestion_pb2.Project:
        if not request.project_id.strip():
            raise InvalidArgument("give the id or name of the project to change in 'project_id'")
        project = await self._call(lambda: self._ingestion.get_project(request.project_id))
        await self._update_project(project, request)
        row = await self._call(lambda: self._ingestion.get_project(project.project_id))
        return (await self._project_messages([row]))[0]

    async def GetSource(
        self, request: ingestion_pb2.GetSourceRequest, context: RpcContext
    ) -> ingestion_pb2.Source:
        return source_message(
            await self._call(lambda: self._ingestion.get_source(request.source_id))
        )

    async def RemoveSource(
        self, request: ingestion_pb2.RemoveSourceRequest, context: RpcContext
    ) -> ingestion_pb2.RemoveSourceResponse:
        source, job = await self._call(lambda: self._ingestion.remove_source(request.source_id))
        return ingestion_pb2.RemoveSourceResponse(
            source=source_message(source), job=await self._job_message(job)
        )

    async def AddSource(
        self, request: ingestion_pb2.AddSourceRequest, context: RpcContext
    ) -> ingestion_pb2.Source:
        if not request.path and not request.git_url:
            raise InvalidArgument(
                "give the source's local directory in 'path', or a repository in 'git_url'"
            )
        row = await self._call(
            lambda: self._ingestion.add_source(
                request.project_id,
                request.path,
                request.git_url,
                request.git_ref,
                credential_file=request.credential_file,
                credential_env=request.credential_env,
                poll_seconds=request.poll_seconds,
            )
        )
        return source_message(row)

    async def NotifyPush(
        self, request: ingestion_pb2.NotifyPushRequest, context: RpcContext
    ) -> ingestion_pb2.NotifyPushResponse:
        if not request.project_id.strip():
            raise InvalidArgument("give the project's id or name in 'project_id'")
        outcome = await self._call(
            lambda: self._ingestion.notify_push(
                request.project_id, request.source_id, request.commit_sha
            )
        )
        if outcome.job is None:
            return ingestion_pb2.NotifyPushResponse(scan_started=False, reason=outcome.reason)
        return ingestion_pb2.NotifyPushResponse(
            scan_started=True, job=await self._job_message(outcome.job)
        )

    async def DeleteProject(
        self, request: ingestion_pb2.DeleteProjectRequest, context: RpcContext
    ) -> ingestion_pb2.DeleteProjectResponse:
        if not request.project_id.strip():
            raise InvalidArgument("give the id or name of the project to delete in 'project_id'")
        deleted = await self._call(lambda: self._ingestion.delete_project(request.project_id))
        return ingestion_pb2.DeleteProjectResponse(
            project_id=deleted.project_id,
            name=deleted.name,
            files_deleted=deleted.files,
            sources_deleted=deleted.sources,
        )

    async def UpsertKnowledgeDocument(
        self,
        request: ingestion_pb2.UpsertKnowledgeDocumentRequest,
        context: RpcContext,
    ) -> ingestion_pb2.UpsertKnowledgeDocumentResponse:
        if not request.project_id.strip():
            raise InvalidArgument("give the project's id or name in 'project_id'")
        change = await self._call(
            lambda: self._documents.upsert(
                request.project_id, request.title, request.url, request.body, request.format
            )
        )
        response = ingestion_pb2.UpsertKnowledgeDocumentResponse(
            document=document_message(change.document), changed=change.job is not None
        )
        if change.job is not None:
            response.job.CopyFrom(await self._job_message(change.job))
        return response

    async def DeleteKnowledgeDocument(
        self,
        request: ingestion_pb2.DeleteKnowledgeDocumentRequest,
        context: RpcContext,
    ) -> ingestion_pb2.DeleteKnowledgeDocumentResponse:
        if not request.project_id.strip():
            raise InvalidArgument("give the project's id or name in 'project_id'")
        change = await self._call(
            lambda: self._documents.delete(request.project_id, request.document_id, request.url)
        )
        response = ingestion_pb2.DeleteKnowledgeDocumentResponse(
            document=document_message(change.document)
        )
        if change.job is not None:
            response.job.CopyFrom(await self._job_message(change.job))
        return response

    async def ImportChm(
        self, request: ingestion_pb2.ImportChmRequest, context: RpcContext
    ) -> ingestion_pb2.ImportChmResponse:
        if not request.project_id.strip():
            raise InvalidArgument("give the project's id or name in 'project_id'")
        imported = await self._call(
            lambda: self._documents.import_chm(
                request.project_id, request.filename, request.content
            )
        )
        response = ingestion_pb2.ImportChmResponse(
            documents=[document_message(row) for row in imported.documents],
            pages_changed=imported.changed,
            pages_removed=imported.removed,
        )
        if imported.job is not None:
            response.job.CopyFrom(await self._job_message(imported.job))
        return response

    async def ListSources(
        self, request: ingestion_pb2.ListSourcesRequest, context: RpcContext
    ) -> ingestion_pb2.ListSourcesResponse:
        rows = await self._call(lambda: self._ingestion.list_sources(request.project_id))
        return ingestion_pb2.ListSourcesResponse(sources=[source_message(r) for r in rows])

    async def StartScan(
        self, request: ingestion_pb2.StartScanRequest, context: RpcContext
    ) -> ingestion_pb2.ScanJob:
        job = await self._call(
            lambda: self._ingestion.start_scan(request.project_id, list(request.source_ids))
        )
        return await self._job_message(job)

    async def GetScan(
        self, request: ingestion_pb2.GetScanRequest, context: RpcContext
    ) -> ingestion_pb2.ScanJob:
        job = await self._call(lambda: self._ingestion.get_job(request.job_id))
        return await self._job_message(job)

    async def ListSkippedFiles(
        self, request: ingestion_pb2.ListSkippedFilesRequest, context: RpcContext
    ) -> ingestion_pb2.ListSkippedFilesResponse:
        job = await self._call(lambda: self._ingestion.get_job(request.job_id))
        offset, limit = page_bounds(request.page.page_size, request.page.page_token)
        rows = await self._ingestion.list_skipped(job.job_id, offset, limit)
        return ingestion_pb2.ListSkippedFilesResponse(
            files=[
                ingestion_pb2.SkippedFile(
                    relative_path=r.relative_path, reason=r.reason, detail=r.detail
                )
                for r in rows
            ],
            next_page_token=next_token(offset, limit, len(rows)),
        )

    async def ListFiles(
        self, request: ingestion_pb2.ListFilesRequest, context: RpcContext
    ) -> ingestion_pb2.ListFilesResponse:
        if len(request.path_prefix) > MAX_PATH_CHARS:
            raise InvalidArgument(f"path_prefix is longer than {MAX_PATH_CHARS} characters")
        project = await self._call(lambda: self._ingestion.get_project(request.project_id))
        offset, limit = page_bounds(request.page.page_size, request.page.page_token)
        rows = await self._ingestion.list_files(
            project.project_id, request.path_prefix, offset, limit
        )
        return ingestion_pb2.ListFilesResponse(
            files=[
                ingestion_pb2.FileRecord(
                    file_id=r.file_id,
                    project_id=r.project_id,
                    source_id=r.source_id,
                    relative_path=r.relative_path,
                    sha256=r.sha256,
                    language=r.language,
                    size_bytes=r.size_bytes,
                    snapshot_id=r.snapshot_id,
                )
                for r in rows
            ],
            next_page_token=next_token(offset, limit, len(rows)),
        )

    async def GetFileContent(
        self, request: ingestion_pb2.GetFileContentRequest, context: RpcContext
    ) -> ingestion_pb2.GetFileContentResponse:
        content = await self._call(
            lambda: self._contents.file_content(
                request.sha256, request.start_line, request.end_line
            )
        )
        return _content_message(content)

    async def GetFileContents(
        self, request: ingestion_pb2.GetFileContentsRequest, context: RpcContext
    ) -> ingestion_pb2.GetFileContentsResponse:
        found = await self._call(lambda: self._contents.file_contents(list(request.sha256)))
        return ingestion_pb2.GetFileContentsResponse(
            contents=[_content_message(content) for content in found.contents],
            missing_sha256=found.missing,
            deferred_sha256=found.deferred,
        )

    async def ScoreFileHistory(
        self, request: ingestion_pb2.ScoreFileHistoryRequest, context: RpcContext
    ) -> ingestion_pb2.ScoreFileHistoryResponse:
        if not request.project_id.strip():
            raise InvalidArgument("give the project's id or name in 'project_id'")
        paths = list(request.relative_paths)
        for path in paths:
            if not path or len(path) > MAX_PATH_CHARS:
                raise InvalidArgument(
                    f"relative_paths must be non-empty and at most {MAX_PATH_CHARS} characters"
                )
        found = await self._call(
            lambda: self._histories.file_history(request.project_id, request.question, paths)
        )
        return ingestion_pb2.ScoreFileHistoryResponse(
            commits_read=found.commits_read,
            files=[
                ingestion_pb2.FileHistory(
                    relative_path=item.relative_path,
                    commits=item.commits,
                    last_change=item.last_change,
                    change_percentile=item.change_percentile,
                    message_score=item.message_score,
                )
                for path in dict.fromkeys(paths)
                if (item := found.files.get(path)) is not None
            ],
        )


def _content_message(content: FileContent) -> ingestion_pb2.GetFileContentResponse:
    return ingestion_pb2.GetFileContentResponse(
        sha256=content.sha256,
        text=content.text,
        start_line=content.start_line,
        end_line=content.end_line,
        total_lines=content.total_lines,
    )
