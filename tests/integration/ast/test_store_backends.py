"""The ast store on each backend it supports: SQLite always, PostgreSQL when one can be started
here (Debian's binaries, run as the ``postgres`` user when the tests run as root) or is given by
``LOCUS_TEST_PG_URL`` (``postgres_database_url`` of tests/conftest.py). Same assertions for
both, so no SQLite-only SQL can creep in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from stores import drop_everything

from locus.ast.adapters.store import AstStore, FileVersion, FileWrite, SymbolQuery
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


@pytest.fixture
async def store(store_database_url: str) -> AsyncIterator[AstStore]:
    """A fresh, initialized store: an SQLite file, or a new database on the PostgreSQL server."""
    database = Database(store_database_url)
    if not database.is_sqlite:
        await drop_everything(database)
    ast_store = AstStore(database)
    await ast_store.initialize()
    try:
        yield ast_store
    finally:
        if not database.is_sqlite:
            await drop_everything(database)
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


async def test_an_include_resolves_through_the_projects_directories(store: AstStore) -> None:
    """`#include "fmt/format_spec.h"` in test/ names include/fmt/format_spec.h (as -Iinclude
    would); `_` in the name is no wildcard (formatXspec.h is another file), a deleted header is
    no target, `<stdio.h>` is no dependency, and of two sources holding the same header the
    includer's own is taken."""

    async def write(path: str, source: bytes, *, source_id: str = "src_1") -> Any:
        file_id = f"f_{source_id}_{path.replace('/', '_')}"
        at = replace(version(path, 1), language="cpp", source_id=source_id, file_id=file_id)
        written = await store.replace_file(
            at, extract(path, source, "cpp"), unsupported_language=False
        )
        assert written is not None
        return written

    for path in ("include/fmt/format_spec.h", "include/fmt/formatXspec.h", "old/fmt/format_spec.h"):
        await write(path, b"int f();\n")
    await write("include/fmt/format_spec.h", b"int f();\n", source_id="src_2")
    assert await store.retract_file(
        replace(
            version("old/fmt/format_spec.h", 2),
            language="cpp",
            file_id="f_src_1_old_fmt_format_spec.h",
        )
    )
    source = b'#include "fmt/format_spec.h"\n#include <stdio.h>\n\nint main() { return f(); }\n'
    for source_id in ("src_1", "src_2"):
        test = await write("test/format_test.cc", source, source_id=source_id)
        index = await store.file_index(test.file.file_id)
        assert index is not None
        assert [(d.target_module, d.target_file_id) for d in index.dependencies] == [
            ("include/fmt/format_spec.h", f"f_{source_id}_include_fmt_format_spec.h")
        ]


async def test_files_written_in_one_transaction_each_get_their_own_outcome(
    store: AstStore,
) -> None:
    """A group commit: a callee written before its caller in the same transaction resolves
    the call; a file the store holds a newer snapshot of is left as it is; a deletion leaves
    its tombstone."""
    old = await store.replace_file(
        version("app/old.py", 5), analyse("app/old.py", CALLEE), unsupported_language=False
    )
    gone = await store.replace_file(
        version("app/gone.py", 1), analyse("app/gone.py", CALLEE), unsupported_language=False
    )
    assert old is not None
    assert gone is not None

    callee, caller, stale, deleted = await store.write_files(
        [
            FileWrite(version("app/service.py", 2), analyse("app/service.py", CALLEE)),
            FileWrite(version("app/main.py", 2), analyse("app/main.py", CALLER)),
            FileWrite(version("app/old.py", 2), analyse("app/old.py", CALLER)),
            FileWrite(version("app/gone.py", 2), None),
        ]
    )
    assert caller is not None
    assert callee is not None
    assert deleted is not None
    handle = next(s for s in callee.symbols if s.qualified_name == "app.service.handle")
    call = next(r for r in caller.relations if r.relation.target_name == "handle")
    assert call.target_node_id == handle.node_id
    # `from app.service import handle`: the module, and the name as a candidate submodule left
    # for impact to resolve by name (it is a function: no module, no edge).
    assert [(d.target_module, d.target_file_id) for d in caller.dependencies] == [
        ("app.service", callee.file.file_id),
        ("app.service.handle", ""),
    ]
    assert stale is None
    assert await store.stored_snapshot_seqs([old.file.file_id]) == {old.file.file_id: 5}
    kept = await store.file_index(old.file.file_id)
    assert kept is not None
    assert [s.qualified_name for s in kept.symbols] == [s.qualified_name for s in old.symbols]
    assert deleted.file.deleted
    assert not deleted.symbols
    assert await store.file_index(gone.file.file_id) is None
    assert await store.stored_snapshot_seqs([gone.file.file_id]) == {gone.file.file_id: 2}

    with pytest.raises(ValueError, match="twice"):
        await store.write_files(
            [FileWrite(version("app/a.py", 3), None), FileWrite(version("app/a.py", 4), None)]
        )


RENAMED_SERVICE = b'''"""The service, renamed."""


def serve(request):
    return request
'''
LATE_CALLER = b"""from .service import serve


def go(request):
    return serve(request)
"""


async def test_a_group_commit_resolves_as_committing_its_files_one_by_one(
    store: AstStore,
) -> None:
    """However files are grouped (which depends on timing), each one's relations and imports
    resolve against what it would see had the files been committed one by one in order: a
    file before a changed file still sees that file's stored version, a file after it sees
    the new one."""

    def of(project: str, path: str, seq: int) -> FileVersion:
        return replace(version(path, seq), project_id=project, file_id=f"{project}:{path}")

    changes = [
        ("app/main.py", CALLER),  # calls app.service.handle: stored, replaced after it
        ("app/service.py", RENAMED_SERVICE),
        ("app/late.py", LATE_CALLER),  # calls app.service.serve: new, written before it
    ]
    outcomes: dict[str, list[Any]] = {}
    for project in ("p_one_by_one", "p_grouped"):
        stored = await store.replace_file(
            of(project, "app/service.py", 1),
            analyse("app/service.py", CALLEE),
            unsupported_language=False,
        )
        assert stored is not None
        if project == "p_one_by_one":
            outcomes[project] = [
                await store.replace_file(
                    of(project, path, 2), analyse(path, source), unsupported_language=False
                )
                for path, source in changes
            ]
        else:
            outcomes[project] = await store.write_files(
                [FileWrite(of(project, path, 2), analyse(path, source)) for path, source in changes]
            )

    def resolved(index: Any) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
        return (
            [(r.relation.target_qualified_name, bool(r.target_node_id)) for r in index.relations],
            [(d.target_module, bool(d.target_file_id)) for d in index.dependencies],
        )

    one_by_one = [resolved(index) for index in outcomes["p_one_by_one"]]
    assert [resolved(index) for index in outcomes["p_grouped"]] == one_by_one
    main, _, late = one_by_one
    assert ("app.service.handle", True) in main[0]  # the stored version, before it changed
    assert ("app.service.serve", True) in late[0]


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
    assert await store.stored_snapshot_seqs([first.file.file_id, "never-seen"]) == {
        first.file.file_id: 3
    }
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


async def test_a_deleted_project_keeps_a_tombstone_that_refuses_its_later_writes(
    store: AstStore, store_database_url: str
) -> None:
    """Deleting a project records its tombstone with the deletion; a group commit holding a
    late file of it writes the other project's file only, and a store opened again (a restart)
    still refuses the deleted project's writes."""
    await store.replace_file(
        version("app/main.py", 1), analyse("app/main.py", CALLER), unsupported_language=False
    )
    assert await store.delete_project("p_test") == 1
    assert await store.delete_project("p_test") == 0  # a redelivery deletes nothing
    late = FileWrite(version("app/service.py", 1), analyse("app/service.py", CALLEE))
    kept = FileWrite(
        replace(version("app/service.py", 1, file_id="f_kept"), project_id="p_kept"),
        analyse("app/service.py", CALLEE),
    )

    written = await store.write_files([late, kept])

    assert written[0] is None
    assert written[1] is not None
    assert await store.deleted_projects(["p_test", "p_kept"]) == {"p_test"}
    assert await store.find_files("p_test", "", "app/service.py") == []
    assert [f.file_id for f in await store.find_files("p_kept", "", "app/service.py")] == ["f_kept"]
    reopened = AstStore(Database(store_database_url))
    await reopened.initialize()
    try:
        assert await reopened.deleted_projects(["p_test", "p_kept"]) == {"p_test"}
        assert await reopened.write_files([FileWrite(version("app/main.py", 2), None)]) == [None]
        # not even the retracted file's own tombstone row
        assert await reopened.stored_snapshot_seqs([version("app/main.py", 2).file_id]) == {}
    finally:
        await reopened.close()


async def test_a_symbols_first_chunk_is_found_until_its_file_is_retracted(
    store: AstStore,
) -> None:
    path = "app/service.py"
    index = await store.replace_file(
        version(path, 3), analyse(path, CALLEE), unsupported_language=False
    )
    assert index is not None
    by_name = {s.qualified_name: s.node_id for s in index.symbols}
    handle, other = by_name["app.service.handle"], by_name["app.service.handle_100_percent"]
    found = await store.first_chunks("p_test", [other, handle, "n_unknown"])
    assert sorted(found) == sorted([handle, other])
    assert found[handle].text.startswith("def handle(request):")
    assert '"""Handle one request."""' in found[handle].text
    assert found[other].text.startswith("def handle_100_percent(request):")
    assert await store.first_chunks("p_other", [handle]) == {}  # another project's id
    assert await store.retract_file(version(path, 4))
    assert await store.first_chunks("p_test", [handle, other]) == {}


async def test_a_package_import_is_published_whether_or_not_the_package_was_stored_first(
    store: AstStore,
) -> None:
    """`from app import service` while only app/service.py is stored (a crash's redelivery
    can parse the importer before app/__init__.py): the package is published too, with no
    file yet, so impact links it by name once it exists — the same edges in either order."""
    await store.replace_file(
        version("app/service.py", 1), analyse("app/service.py", CALLEE), unsupported_language=False
    )
    importer = await store.replace_file(
        version("main.py", 1),
        analyse("main.py", b"from app import service\n\nservice.handle(1)\n"),
        unsupported_language=False,
    )
    assert importer is not None
    assert [(d.target_module, d.target_file_id) for d in importer.dependencies] == [
        ("app.service", "f_app_service.py"),
        ("app", ""),
    ]
    # An import of something outside the project stays one entry, as before.
    external = await store.replace_file(
        version("tool.py", 1),
        analyse("tool.py", b"from os import path\n"),
        unsupported_language=False,
    )
    assert external is not None
    assert [(d.target_module, d.target_file_id) for d in external.dependencies] == [("os", "")]
