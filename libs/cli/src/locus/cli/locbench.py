"""``locus locbench-rank``: the localization benchmark's ranker protocol over the real system.

One JSON query on stdin (instance, repository path, problem statement); the repository is
registered once as a project, scanned incrementally at the checked-out commit, and the problem
statement goes through ``Gateway.Locate``; ranked files and functions go to stdout as JSON."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locus.cli.client import LocusClient
from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.scan_progress import finished
from locus.v1 import common_pb2, gateway_pb2, ingestion_pb2

MAX_RANKED = 100  # the harness reads at most 100 files and 100 functions
# What the harness counts as a function: functions, methods and constructors (never classes,
# interfaces, structs, enums, traits, namespaces or modules).
FUNCTION_KIND_NAMES = frozenset({"function", "method", "constructor"})
# Scope names join their segments with the language's separator: `::` (Rust, C++, Ruby, PHP
# members), `\` (PHP namespaces), `.` elsewhere; harness ids use `.` in every language.
_SCOPE_SEPARATOR = re.compile(r"::|\\")
_PYTHON_EXTENSIONS = (".py", ".pyi")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class BenchQuery:
    instance_id: str
    repo: str
    base_commit: str
    repo_path: Path
    problem_statement: str
    max_files: int
    max_functions: int


def parse_query(raw: str) -> BenchQuery:
    """The harness's JSON object; a clear CliError for anything else."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise CliError(f"stdin is not one JSON object: {error}", ExitCode.USAGE) from error
    if not isinstance(data, dict):
        raise CliError("stdin must hold one JSON object", ExitCode.USAGE)
    missing = [key for key in ("repo_path", "problem_statement") if not data.get(key)]
    if missing:
        raise CliError(f"the query lacks {', '.join(missing)}", ExitCode.USAGE)
    repo_path = Path(str(data["repo_path"])).expanduser().resolve()
    if not repo_path.is_dir():
        raise CliError(f"repo_path {repo_path} is not a directory", ExitCode.USAGE)
    return BenchQuery(
        instance_id=str(data.get("instance_id", "")),
        repo=str(data.get("repo") or repo_path.name),
        base_commit=str(data.get("base_commit", "")),
        repo_path=repo_path,
        problem_statement=str(data["problem_statement"]),
        max_files=_bounded(data.get("max_files"), MAX_RANKED),
        max_functions=_bounded(data.get("max_functions"), MAX_RANKED),
    )


def _bounded(value: Any, limit: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return limit
    return max(1, min(number, limit))


def project_name_for(query: BenchQuery, prefix: str, per_commit: bool = False) -> str:
    """``psf/requests`` → ``locbench-psf-requests``: one project per repository, rescanned
    incrementally at each commit; with ``per_commit``, one project per commit
    (``locbench-psf-requests-0123456789ab``), so a later run finds it indexed already."""
    name = f"{prefix}-{query.repo.replace('/', '-')}"
    if per_commit:
        name += f"-{query.base_commit[:12] or 'head'}"
    return _UNSAFE_NAME.sub("-", name).strip("-._")[:100]


def function_id(kind: str, scope_name: str, relative_path: str, language: str = "") -> str:
    """The harness's id of a symbol (``path::Class.method``), "" for what is not a function
    (containers and modules). ``kind`` as the gateway ranking spells it ("function", "method",
    "constructor", ...); ``language`` as ast names it ("" = judged by the extension).

    A function inside another function (kind "function" with a scope: its parent is no
    container, or it would be a method) follows the harness's two conventions: in Python it
    stands for its enclosing def; elsewhere it is a function of its own, and as the scope
    cannot tell its enclosing containers from its enclosing functions, the id keeps its name
    alone (the harness matches an id without container against any container). A namespace
    left in a method's scope (C++ `ns::Foo::bar` → ns.Foo.bar) is harmless likewise: only
    the last container is compared."""
    if kind not in FUNCTION_KIND_NAMES or not scope_name:
        return ""
    segments = [s for s in _SCOPE_SEPARATOR.sub(".", scope_name).split(".") if s]
    if kind == "function" and len(segments) > 1:
        is_python = language == "python" or (
            not language and relative_path.endswith(_PYTHON_EXTENSIONS)
        )
        segments = segments[:-1] if is_python else segments[-1:]
    return f"{relative_path}::{'.'.join(segments)}"


_KIND_NAMES = {
    value: name.removeprefix("SYMBOL_KIND_").lower()
    for name, value in common_pb2.SymbolKind.items()
    if value != common_pb2.SYMBOL_KIND_UNSPECIFIED
}


def ranked_output(reply: gateway_pb2.LocateResponse, query: BenchQuery) -> dict[str, list[str]]:
    """Files in Locate's order; functions as ``path::Class.method`` (containers and modules
    are not functions, so they are left out; see ``function_id``)."""
    files = list(dict.fromkeys(f.relative_path for f in reply.files))[: query.max_files]
    functions: list[str] = []
    for located in reply.symbols:
        symbol = located.symbol
        location = symbol.location
        identifier = function_id(
            _KIND_NAMES.get(symbol.kind, ""),
            symbol.scope_name,
            location.relative_path,
            location.language,
        )
        if identifier:
            functions.append(identifier)
    return {"files": files, "functions": list(dict.fromkeys(functions))[: query.max_functions]}


async def ensure_project(client: LocusClient, name: str, repo_path: Path) -> None:
    """Create the project and add ``repo_path`` as its source unless both exist already."""
    projects = {p.name: p for p in await client.list_projects()}
    if name not in projects:
        await client.create_project(ingestion_pb2.CreateProjectRequest(name=name))
    sources = await client.list_sources(name)
    # Ingestion keeps the resolved path it was given; repo_path is resolved already.
    if not any(source.path == str(repo_path) for source in sources):
        await client.add_source(
            ingestion_pb2.AddSourceRequest(project_id=name, path=str(repo_path))
        )


async def wait_for_scan(
    client: LocusClient,
    job: ingestion_pb2.ScanJob,
    timeout_seconds: float,
    *,
    embedded: bool = True,
) -> ingestion_pb2.ScanJob:
    """Until the job is embedded (or only searchable, with ``embedded`` False) or failed."""
    deadline = time.monotonic() + timeout_seconds
    delay = 0.1
    while not finished(job, embedded=embedded):
        if time.monotonic() > deadline:
            raise CliError(
                f"scan {job.job_id} did not finish within {timeout_seconds:.0f} s",
                ExitCode.FAILED,
            )
        await asyncio.sleep(delay)
        delay = min(delay * 1.5, 1.0)
        job = await client.get_scan(job.job_id)
    if job.state == ingestion_pb2.SCAN_STATE_FAILED:
        raise CliError(f"scan {job.job_id} failed: {job.error}", ExitCode.FAILED)
    return job


def write_candidates(directory: Path, query: BenchQuery, reply: gateway_pb2.LocateResponse) -> Path:
    """``<directory>/<instance>.json.gz``: the instance and the candidates Locate ranked (the
    learned ranker's training material; ``bench/ranker``)."""
    directory.mkdir(parents=True, exist_ok=True)
    name = _UNSAFE_NAME.sub("-", query.instance_id or query.base_commit or "query").strip("-")
    path = directory / f"{name}.json.gz"
    record = {
        "instance_id": query.instance_id,
        "repo": query.repo,
        "base_commit": query.base_commit,
        "ranker": reply.ranker,
        "candidates": json.loads(reply.candidates_json),
    }
    path.write_bytes(gzip.compress(json.dumps(record, separators=(",", ":")).encode(), mtime=0))
    return path


@dataclass(frozen=True)
class RankResult:
    output: dict[str, list[str]]
    timing: dict[str, Any]


async def rank_instance(
    client: LocusClient,
    query: BenchQuery,
    *,
    project_prefix: str,
    scan_timeout_seconds: float,
    per_commit: bool = False,
    embedded: bool = True,
    candidates_dir: Path | None = None,
) -> RankResult:
    name = project_name_for(query, project_prefix, per_commit)
    started = time.monotonic()
    await ensure_project(client, name, query.repo_path)
    job = await client.start_scan(name)
    job = await wait_for_scan(client, job, scan_timeout_seconds, embedded=embedded)
    scanned = time.monotonic()
    reply = await client.locate(
        gateway_pb2.LocateRequest(
            project_id=name,
            question=query.problem_statement,
            max_files=query.max_files,
            max_symbols=min(2 * query.max_functions, 200),
            include_candidates=candidates_dir is not None,
        )
    )
    located = time.monotonic()
    if candidates_dir is not None:
        write_candidates(candidates_dir, query, reply)
    stats = job.stats
    timing = {
        "instance_id": query.instance_id,
        "repo": query.repo,
        "project": name,
        "scan_seconds": round(scanned - started, 3),
        "locate_seconds": round(located - scanned, 3),
        "files_seen": stats.files_seen,
        "files_changed": stats.files_added + stats.files_modified + stats.files_deleted,
        "level": "embedded" if embedded else "searchable",
        "request_id": reply.request_id,
    }
    return RankResult(ranked_output(reply, query), timing)
