"""Service layer of ReadFile (and of the snippets Ask sends with its citations): find a scanned
file of a project by its relative path or file id (ingestion ListFiles), then read its lines
from the content-addressed snapshot (ingestion GetFileContent by sha256)."""

from __future__ import annotations

from typing import Any

import grpc

from locus.gateway.domain.errors import (
    FileNotFound,
    InvalidRequest,
    ProjectNotScanned,
)
from locus.gateway.domain.file_reading import (
    MAX_READ_LINES,
    FileExcerpt,
    check_size,
    line_window,
    normalize_file_path,
    numbered_lines,
)
from locus.gateway.domain.validation import MAX_ID_CHARS
from locus.gateway.downstream import FileContents, ProjectDirectory
from locus.rpc import ServiceError
from locus.v1 import common_pb2, ingestion_pb2

# Finding a file by its id pages through the project's files: at most this many pages of
# LIST_PAGE files (a project of more files is read by relative_path).
LIST_PAGE = 1000
MAX_ID_PAGES = 100
# Paths equal to the one asked come first among those it prefixes (one per source at most).
PATH_MATCH_PAGE = 20


class FileReader:
    def __init__(self, projects: ProjectDirectory, files: FileContents) -> None:
        self._projects = projects
        self._files = files

    async def read(
        self,
        project_ref: str,
        *,
        relative_path: str = "",
        file_id: str = "",
        start_line: int = 0,
        end_line: int = 0,
    ) -> FileExcerpt:
        """Lines ``start_line..end_line`` of a file of the project's latest snapshot.
        InvalidRequest for a bad path or range, FileNotFound, LinesOutOfRange past the end or
        over the cap, ProjectNotScanned before the first scan completed."""
        path = normalize_file_path(relative_path) if relative_path.strip() else ""
        file_id = file_id.strip()
        if not path and not file_id:
            raise InvalidRequest("give the file's relative_path (or its file_id)")
        if len(file_id) > MAX_ID_CHARS:
            raise InvalidRequest(f"file_id is longer than {MAX_ID_CHARS} characters")
        window = line_window(start_line, end_line)
        project = await self._projects.get_project(project_ref)
        if not project.latest_snapshot_id:
            raise ProjectNotScanned(
                f"project {project.name!r} has no completed scan yet; scan it first "
                f"(locus scan {project.name} --wait)"
            )
        record = await self._find(project, path, file_id)
        end = window.end or window.start + MAX_READ_LINES - 1
        try:
            content = await self._files.get_file_content(
                ingestion_pb2.GetFileContentRequest(
                    sha256=record.sha256, start_line=window.start, end_line=end
                )
            )
        except ServiceError as error:
            if error.code == grpc.StatusCode.INVALID_ARGUMENT:
                total = await self._total_lines(record.sha256)
                window.clamped(total)  # LinesOutOfRange when it starts past the end
            if error.code == grpc.StatusCode.NOT_FOUND:
                raise FileNotFound(
                    f"the content of {record.relative_path!r} is no longer stored; rescan "
                    "the project"
                ) from None
            raise
        check_size(content.text, content.start_line, content.end_line)
        return FileExcerpt(
            project_id=project.project_id,
            snapshot_id=project.latest_snapshot_id,
            file_id=record.file_id,
            relative_path=record.relative_path,
            language=record.language,
            sha256=record.sha256,
            start_line=content.start_line if content.text else 0,
            end_line=content.end_line if content.text else 0,
            total_lines=content.total_lines,
            lines=numbered_lines(content.text, content.start_line),
        )

    async def _total_lines(self, sha256: str) -> int:
        first = await self._files.get_file_content(
            ingestion_pb2.GetFileContentRequest(sha256=sha256, start_line=1, end_line=1)
        )
        return int(first.total_lines)

    async def _find(self, project: Any, path: str, file_id: str) -> Any:
        name = project.name
        if path:
            reply = await self._files.list_files(
                ingestion_pb2.ListFilesRequest(
                    project_id=project.project_id,
                    path_prefix=path,
                    page=common_pb2.PageRequest(page_size=PATH_MATCH_PAGE),
                )
            )
            matches = [
                f
                for f in reply.files
                if f.relative_path == path and (not file_id or f.file_id == file_id)
            ]
            if len(matches) > 1:
                raise InvalidRequest(
                    f"{path!r} exists in {len(matches)} sources of {name!r}; give file_id "
                    f"instead (one of {', '.join(f.file_id for f in matches)})"
                )
            if matches:
                return matches[0]
            wanted = f"file {file_id!r} at {path!r}" if file_id else f"file at {path!r}"
            raise FileNotFound(
                f"project {name!r} has no {wanted} in its latest snapshot; paths are relative "
                "to the source root as scanned (find them with locus symbols or locus locate)"
            )
        token = ""
        for _ in range(MAX_ID_PAGES):
            reply = await self._files.list_files(
                ingestion_pb2.ListFilesRequest(
                    project_id=project.project_id,
                    page=common_pb2.PageRequest(page_size=LIST_PAGE, page_token=token),
                )
            )
            for record in reply.files:
                if record.file_id == file_id:
                    return record
            token = reply.next_page_token
            if not token:
                break
        raise FileNotFound(
            f"project {name!r} has no file {file_id!r} in its latest snapshot (or it is beyond "
            f"the first {LIST_PAGE * MAX_ID_PAGES} files: give relative_path instead)"
        )
