"""``locus docs add|remove|import-chm``: knowledge documents from outside the project's
repositories (a file or a web page, or a CHM package's pages), through the gateway (writer on
the project); each change is indexed by a job the command waits for."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import httpx
import typer
from rich.markup import escape

from locus.cli.client import LocusClient
from locus.cli.command_options import GatewayOption, ProjectArgument, finish
from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.scan_progress import follow_scan
from locus.v1 import ingestion_pb2

docs_app = typer.Typer(
    help="Knowledge documents from outside the repositories: add, remove, import a CHM.",
    no_args_is_help=True,
)
NoWaitOption = Annotated[
    bool, typer.Option("--no-wait", help="Return once the change is recorded, not indexed.")
]
FETCH_TIMEOUT_SECONDS = 30.0
_EXTENSION_FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "restructuredtext",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".html": "html",
    ".htm": "html",
}


def _format_for(name: str, content_type: str = "") -> str:
    """The format a file name's extension (or a page's content type) stands for; "" = unknown
    (the service then refuses it, naming the formats it reads)."""
    found = _EXTENSION_FORMATS.get(Path(name.split("?", 1)[0]).suffix.lower(), "")
    if found:
        return found
    if "html" in content_type:
        return "html"
    if "markdown" in content_type:
        return "markdown"
    return ""


def _read_document(location: str) -> tuple[str, str, str, str]:
    """(body, url, default title, guessed format) of a local file or an http(s) URL."""
    if location.startswith(("http://", "https://")):
        try:
            response = httpx.get(location, follow_redirects=True, timeout=FETCH_TIMEOUT_SECONDS)
            response.raise_for_status()
        except httpx.HTTPError as error:
            raise CliError(f"cannot fetch {location}: {error}", ExitCode.UNAVAILABLE) from None
        title = location.rstrip("/").rsplit("/", 1)[-1] or location
        content_type = response.headers.get("content-type", "")
        return response.text, location, title, _format_for(location, content_type)
    path = Path(location).expanduser()
    try:
        body = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"cannot read {location}: {error}", ExitCode.USAGE) from None
    return body, "", path.stem.replace("-", " ").replace("_", " "), _format_for(path.name)


async def _wait(
    context: CommandContext, client: LocusClient, job: ingestion_pb2.ScanJob
) -> ingestion_pb2.ScanJob:
    done = await follow_scan(client, job, context.err, show_progress=False)
    if done.state == ingestion_pb2.SCAN_STATE_FAILED:
        raise CliError(f"indexing job {done.job_id} failed: {done.error}", ExitCode.FAILED)
    return done


@docs_app.command("add")
def docs_add(
    project: ProjectArgument,
    location: Annotated[
        str, typer.Argument(metavar="FILE|URL", help="A local file or an http(s) page.")
    ],
    title: Annotated[
        str | None, typer.Option("--title", help="Default: the file's or page's name.")
    ] = None,
    format_name: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="markdown, restructuredtext, asciidoc or html; default: from the extension.",
        ),
    ] = None,
    no_wait: NoWaitOption = False,
    gateway: GatewayOption = None,
) -> None:
    """Add or replace a knowledge document (the same one again changes nothing)."""

    async def body(context: CommandContext) -> int:
        text, url, default_title, guessed = _read_document(location)
        async with context.client() as client:
            reply = await client.upsert_knowledge_document(
                ingestion_pb2.UpsertKnowledgeDocumentRequest(
                    project_id=project,
                    title=title or default_title,
                    url=url,
                    body=text,
                    format=format_name or guessed,
                )
            )
            document = reply.document
            if not reply.changed:
                context.out.print(
                    f"{document.document_id} unchanged ({escape(document.relative_path)})"
                )
                return ExitCode.OK
            if not no_wait:
                await _wait(context, client, reply.job)
        context.out.print(
            f"{document.document_id} {escape(document.relative_path)} "
            f"({escape(document.title)}){'' if no_wait else ' indexed'}"
        )
        return ExitCode.OK

    finish(run_command("docs add", body, gateway=gateway))


@docs_app.command("remove")
def docs_remove(
    project: ProjectArgument,
    document: Annotated[
        str, typer.Argument(metavar="ID|URL", help="The document's id (doc_…) or its URL.")
    ],
    no_wait: NoWaitOption = False,
    gateway: GatewayOption = None,
) -> None:
    """Remove a knowledge document and its sections everywhere."""
    by_id = document.startswith("doc_")

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            reply = await client.delete_knowledge_document(
                ingestion_pb2.DeleteKnowledgeDocumentRequest(
                    project_id=project,
                    document_id=document if by_id else "",
                    url="" if by_id else document,
                )
            )
            if not no_wait:
                await _wait(context, client, reply.job)
        context.out.print(
            f"removed {reply.document.document_id} {escape(reply.document.relative_path)}"
        )
        return ExitCode.OK

    finish(run_command("docs remove", body, gateway=gateway))


@docs_app.command("import-chm")
def docs_import_chm(
    project: ProjectArgument,
    package: Annotated[Path, typer.Argument(metavar="FILE", help="A .chm package.")],
    no_wait: NoWaitOption = False,
    gateway: GatewayOption = None,
) -> None:
    """Index a CHM package's pages, titled by their table-of-contents path (replaces them)."""

    async def body(context: CommandContext) -> int:
        try:
            content = package.expanduser().read_bytes()
        except OSError as error:
            raise CliError(f"cannot read {package}: {error}", ExitCode.USAGE) from None
        async with context.client() as client:
            reply = await client.import_chm(
                ingestion_pb2.ImportChmRequest(
                    project_id=project, filename=package.name, content=content
                )
            )
            if reply.HasField("job") and not no_wait:
                await _wait(context, client, reply.job)
        for document in reply.documents:
            context.out.print(f"{escape(document.title)}  {escape(document.relative_path)}")
        context.out.print(
            f"{len(reply.documents)} pages: {reply.pages_changed} added or changed, "
            f"{reply.pages_removed} removed",
            style="dim",
        )
        return ExitCode.OK

    finish(run_command("docs import-chm", body, gateway=gateway))
