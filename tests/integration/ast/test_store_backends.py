"""The ast store on each backend it supports: SQLite always, PostgreSQL when one can be started
here (Debian's binaries, run as the ``postgres`` user when the tests run as root) or is given by
``LOCUS_TEST_PG_URL``. Same assertions for both, so no SQLite-only SQL can creep in."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from locus.ast.adapters.store import AstStore, FileVersion, SymbolQuery
from locus.ast.domain import FileAnalysis, extract
from locus.database import Database

pytestmark = pytest.mark.integration

CALLER = b'''"""Calls into the service module."""

from .service import handle


def run(request):
    return handle(request)
'''
CALLEE = b'''"""The service."""


def handle(request):
    """Handle one request."""
    return request


def handle_100_percent(request):
    return request
'''


def _postgres_binaries() -> Path | None:
    for candidate in (shutil.which("pg_ctl"), *Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")):
        if candidate and Path(candidate).exists():
            return Path(candidate).resolve().parent
    return None


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server for the session: LOCUS_TEST_PG_URL, or one started in a temp dir."""
    given = os.environ.get("LOCUS_TEST_PG_URL")
    if given:
        yield given
        return
    binaries = _postgres_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL binaries here and LOCUS_TEST_PG_URL is not set")
    as_postgres: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL")
        as_postgres = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="locus-pg-"))
    if as_postgres:
        shutil.chown(root, "postgres")
    data, port = root / "data", _free_port()
    subprocess.run(
        [*as_postgres, str(binaries / "initdb"), "-D", str(data), "-U", "locus",
         "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        [*as_postgres, str(binaries / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w",
         "-o", f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
        check=True, capture_output=True,
    )  # fmt: skip
    try:
        yield f"postgresql://locus@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_postgres, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AstStore]:
    """A fresh, initialized store: an SQLite file, or a new database on the PostgreSQL server."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'ast.db'}"
    else:
        import asyncpg

        server = request.getfixturevalue("postgres_url")
        name = f"ast_{uuid.uuid4().hex[:12]}"
        connection = await asyncpg.connect(server)
        try:
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()
        url = server.rsplit("/", 1)[0] + f"/{name}"
    ast_store = AstStore(Database(url))
    await ast_store.initialize()
    yield ast_store
    await ast_store.close()


def version(path: str, seq: int, *, file_id: str = "", sha: str = "a" * 64) -> FileVersion:
    return FileVersion(
        file_id=file_id or f"f_{path.replace('/', '_')}",
        project_id="p_test",
        source_id="src_1",
        relative_path=path,
        sha256=sha,
        language="python",
        snapshot_id=f"snap_{seq}",
        snapshot_seq=seq,
        job_id=f"job_{seq}",
    )


def analyse(path: str, source: bytes) -> FileAnalysis:
    return extract(path, source, "python")


async def test_targets_resolve_across_files_whenever_the_target_arrives(store: AstStore) -> None:
    caller = await store.replace_file(
        version("app/main.py", 1), analyse("app/main.py", CALLER), unsupported_language=False
    )
    assert caller is not None
    call = next(r for r in caller.relations if r.relation.target_name == "handle")
    assert (call.relation.target_qualified_name, call.target_node_id) == ("app.service.handle", "")
    assert [(d.target_module, d.target_file_id) for d in caller.dependencies] == [
        ("app.service", "")
    ]

    callee = await store.replace_file(
        version("app/service.py", 1), analyse("app/service.py", CALLEE), unsupported_language=False
    )
    assert callee is not None
    handle = next(s for s in callee.symbols if s.qualified_name == "app.service.handle")

    run = next(s for s in caller.symbols if s.qualified_name == "app.main.run")
    [outgoing] = await store.outgoing(run.node_id, 10)
    assert (outgoing.relation.line, outgoing.target_node_id) == (7, handle.node_id)
    incoming = await store.incoming(handle, 10)
    assert sorted((r.relation.kind, r.relation.source_qualified_name) for r in incoming) == [
        ("calls", "app.main.run"),
        ("contains", "app.service"),
        ("imports", "app.main"),
    ]
    index = await store.file_index(caller.file.file_id)
    assert index is not None
    assert [(d.target_module, d.target_file_id) for d in index.dependencies] == [
        ("app.service", callee.file.file_id)
    ]

    assert await store.retract_file(version("app/service.py", 2))
    [dangling] = await store.outgoing(run.node_id, 10)
    assert dangling.target_node_id == ""


async def test_replacing_a_file_is_idempotent_and_older_snapshots_are_ignored(
    store: AstStore,
) -> None:
    path = "app/service.py"
    first = await store.replace_file(
        version(path, 3), analyse(path, CALLEE), unsupported_language=False
    )
    again = await store.replace_file(
        version(path, 3), analyse(path, CALLEE), unsupported_language=False
    )
    assert first is not None
    assert again is not None
    assert [s.node_id for s in again.symbols] == [s.node_id for s in first.symbols]
    assert [c.chunk_id for c in again.chunks] == [c.chunk_id for c in first.chunks]
    chunks = await store.chunks("p_test", [c.chunk_id for c in first.chunks])
    assert sorted(chunks) == sorted(c.chunk_id for c in first.chunks)

    older = await store.replace_file(
        version(path, 2, sha="b" * 64), analyse(path, CALLER), unsupported_language=False
    )
    assert older is None
    assert not await store.retract_file(version(path, 1))
    assert await store.stored_snapshot_seq(first.file.file_id) == 3
    found = await store.find_symbols(SymbolQuery("p_test", "handle", "", "", True), 0, 10)
    assert [s.qualified_name for s, _ in found] == ["app.service.handle"]

    assert await store.retract_file(version(path, 4))
    assert await store.file_index(first.file.file_id) is None
    assert await store.chunks("p_test", [c.chunk_id for c in first.chunks]) == {}
    # The tombstone keeps the snapshot: a late, older event cannot resurrect the file.
    late = await store.replace_file(
        version(path, 3), analyse(path, CALLEE), unsupported_language=False
    )
    assert late is None
    assert await store.find_symbols(SymbolQuery("p_test", "", "", "", False), 0, 10) == []


async def test_symbol_search_ranks_matches_and_treats_wildcards_literally(store: AstStore) -> None:
    await store.replace_file(
        version("app/service.py", 1), analyse("app/service.py", CALLEE), unsupported_language=False
    )
    await store.replace_file(
        version("app/main.py", 1), analyse("app/main.py", CALLER), unsupported_language=False
    )

    async def names(
        text: str, *, kind: str = "", prefix: str = "", exact: bool = False
    ) -> list[str]:
        query = SymbolQuery("p_test", text.lower(), kind, prefix, exact)
        return [s.qualified_name for s, _ in await store.find_symbols(query, 0, 50)]

    assert await names("handle") == ["app.service.handle", "app.service.handle_100_percent"]
    assert await names("app") == [
        "app.main",
        "app.main.run",
        "app.service",
        "app.service.handle",
        "app.service.handle_100_percent",
    ]
    assert await names("service") == [
        "app.service",  # exact on the name
        "app.service.handle",
        "app.service.handle_100_percent",
    ]
    assert await names("100%") == []
    assert await names("_100_") == ["app.service.handle_100_percent"]
    assert await names("e_1") == ["app.service.handle_100_percent"]
    assert await names("un", kind="function") == ["app.main.run"]
    assert await names("handle", prefix="app/ma") == []
    assert await names("APP.MAIN.RUN", exact=True) == ["app.main.run"]
    page = await store.find_symbols(SymbolQuery("p_test", "app", "", "", False), 2, 2)
    assert [s.qualified_name for s, _ in page] == ["app.service", "app.service.handle"]
