"""A scan of the fixture repository through real processes: ingestion publishes files.changed,
ast stores symbols, relations and chunks, publishes files.parsed and reports every file, and
its gRPC API answers from what it stored.

Each stack costs seconds to start, so the checks run in two tests over one scan each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from locus.v1 import ast_pb2, common_pb2, events_pb2, ingestion_pb2

pytestmark = pytest.mark.integration

PREFIX = "locus.v1"
CLIENT = "src/uploads/client.py"
POLICY = "src/uploads/policy.py"
ERRORS = "src/uploads/errors.py"
INIT = "src/uploads/__init__.py"
UPLOADS = Path(__file__).resolve().parents[2] / "unit" / "ast" / "fixtures" / "uploads"


def by_path(parsed: list[Any]) -> dict[str, list[Any]]:
    """files.parsed parts grouped by relative path, in part order."""
    grouped: dict[str, list[Any]] = {}
    for event in sorted(parsed, key=lambda e: (e.file.relative_path, e.part_index)):
        grouped.setdefault(event.file.relative_path, []).append(event)
    return grouped


async def find_one(stack: Any, project_id: str, qualified_name: str) -> Any:
    reply = await stack.ast_stub.FindSymbols(
        ast_pb2.FindSymbolsRequest(project_id=project_id, name=qualified_name, exact=True)
    )
    matches = [s for s in reply.symbols if s.qualified_name == qualified_name]
    assert len(matches) == 1, [s.qualified_name for s in reply.symbols]
    return matches[0]


async def expect_error(call: Any, code: grpc.StatusCode, fragment: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    assert raised.value.code() == code, raised.value.details()
    assert fragment in (raised.value.details() or "")


@pytest.fixture
async def scanned(start_stack: Any, source_tree: Path) -> dict[str, Any]:
    """The fixture repository scanned once; small ingestion batches so that client.py is
    parsed before policy.py (its callee) exists in the store."""
    stack = await start_stack(ingestion_batch_size=2)
    parsed = await stack.record(f"{PREFIX}.files.parsed", events_pb2.FilesParsed)
    changed = await stack.record(f"{PREFIX}.files.changed", events_pb2.FilesChanged)
    updates = await stack.record(f"{PREFIX}.index.updated", events_pb2.IndexUpdated)
    project_id = await stack.create_project(source_tree)
    job = await stack.scan(project_id)
    await parsed.wait_for_count(5)
    return {
        "stack": stack,
        "project_id": project_id,
        "job": job,
        "parsed": by_path(parsed.events),
        "changed": changed,
        "updates": updates,
    }


async def check_job_completed_once_ast_reported_every_changed_file(
    scanned: dict[str, Any],
) -> None:
    stack, job = scanned["stack"], scanned["job"]

    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job
    changed_files = [f for batch in scanned["changed"].of_job(job.job_id) for f in batch.files]
    assert sorted(f.relative_path for f in changed_files) == [
        "README.md",
        INIT,
        CLIENT,
        ERRORS,
        POLICY,
    ]
    stats = job.stats
    assert stats.files_added == 5
    assert stats.files_skipped == 1  # the PNG: binary files never reach ast
    assert stats.files_parsed == stats.files_added + stats.files_modified + stats.files_deleted
    assert stats.files_indexed == 5
    assert stats.files_failed == 0
    assert list(job.pending_stages) == []
    # One index.updated per files.changed batch, every file INDEXED by stage "ast".
    reports = scanned["updates"].of_job(job.job_id)
    assert len(reports) == len(scanned["changed"].of_job(job.job_id)) == 3
    assert {r.stage for r in reports} == {"ast"}
    statuses = {f.file_id: f.status for r in reports for f in r.files}
    assert sorted(statuses) == sorted(f.file_id for f in changed_files)
    assert set(statuses.values()) == {events_pb2.INDEX_STATUS_INDEXED}
    skipped = await stack.ingestion_stub.ListSkippedFiles(
        ingestion_pb2.ListSkippedFilesRequest(job_id=job.job_id)
    )
    assert [(s.relative_path, s.reason) for s in skipped.files] == [("assets/logo.png", "binary")]


async def check_files_parsed_carry_symbols_relations_and_chunks(
    scanned: dict[str, Any],
) -> None:
    project_id, job, parsed = scanned["project_id"], scanned["job"], scanned["parsed"]

    assert sorted(parsed) == ["README.md", INIT, CLIENT, ERRORS, POLICY]
    [client] = parsed[CLIENT]
    assert (client.job_id, client.project_id, client.snapshot_id) == (
        job.job_id,
        project_id,
        job.snapshot_id,
    )
    assert (client.module_name, client.part_index, client.part_count) == ("uploads.client", 0, 1)
    assert not client.unsupported_language
    assert client.parse_errors == 0
    symbols = {s.qualified_name: s for s in client.symbols}
    assert {name: (s.location.start_line, s.location.end_line) for name, s in symbols.items()} == {
        "uploads.client": (1, 64),
        "uploads.client.traced": (13, 20),
        "uploads.client.traced.wrapper": (16, 18),
        "uploads.client.UploadClient": (23, 61),
        "uploads.client.UploadClient.__init__": (31, 32),
        "uploads.client.UploadClient.from_environment": (34, 36),
        "uploads.client.UploadClient.default_endpoint": (38, 40),
        "uploads.client.UploadClient.upload": (42, 51),
        "uploads.client.UploadClient._retry": (53, 58),
        "uploads.client.UploadClient._send": (60, 61),
        "uploads.client.LOGGER": (10, 10),  # module constants
        "uploads.client.DEFAULT_CLIENT": (64, 64),
    }
    assert symbols["uploads.client.LOGGER"].kind == common_pb2.SYMBOL_KIND_CONSTANT
    upload = symbols["uploads.client.UploadClient.upload"]
    assert upload.kind == common_pb2.SYMBOL_KIND_METHOD
    assert upload.signature == "def upload(self, path: str, attempts: int = 3) -> bool"
    assert upload.docstring == "Upload one file, retrying on failure."
    assert upload.parent_node_id == symbols["uploads.client.UploadClient"].node_id
    location = upload.location
    assert (location.project_id, location.snapshot_id, location.relative_path) == (
        project_id,
        job.snapshot_id,
        CLIENT,
    )
    assert (location.file_id, location.language, location.node_id) == (
        client.file.file_id,
        "python",
        upload.node_id,
    )
    # A call inside the same file is resolved when published.
    calls = {
        (r.source_qualified_name, r.target_name): r
        for r in client.relations
        if r.kind == common_pb2.RELATION_KIND_CALLS
    }
    retry_call = calls[("uploads.client.UploadClient.upload", "self._retry")]
    assert retry_call.line == 51
    assert retry_call.source_node_id == upload.node_id
    assert retry_call.target_node_id == symbols["uploads.client.UploadClient._retry"].node_id
    unresolved = calls[("uploads.client.UploadClient._retry", "range")]
    assert (unresolved.target_qualified_name, unresolved.target_node_id) == ("", "")
    chunks = [(c.kind, c.symbol_qualified_name, c.location.start_line, c.location.end_line)
              for c in client.chunks]  # fmt: skip
    assert chunks[:3] == [
        (common_pb2.CHUNK_KIND_MODULE, "uploads.client", 1, 10),
        (common_pb2.CHUNK_KIND_FUNCTION, "uploads.client.traced", 13, 20),
        (common_pb2.CHUNK_KIND_CLASS_HEADER, "uploads.client.UploadClient", 23, 61),
    ]
    assert (common_pb2.CHUNK_KIND_METHOD, "uploads.client.UploadClient.upload", 42, 51) in chunks
    upload_chunk = next(c for c in client.chunks if c.symbol_node_id == upload.node_id)
    assert upload_chunk.text.startswith("    @traced\n    def upload(")
    assert upload_chunk.location.node_id == upload.node_id
    # errors.py: inheritance inside the file, resolved.
    [errors] = parsed[ERRORS]
    error_symbols = {s.qualified_name: s for s in errors.symbols}
    inherits = [
        (r.source_qualified_name, r.target_name, r.target_node_id)
        for r in errors.relations
        if r.kind == common_pb2.RELATION_KIND_INHERITS
    ]
    assert (
        "uploads.errors.RetryExhausted",
        "UploadError",
        error_symbols["uploads.errors.UploadError"].node_id,
    ) in inherits
    # A document: one section per heading, named by its heading path, chunks per section.
    [readme] = parsed["README.md"]
    assert not readme.unsupported_language
    assert readme.file.language == "markdown"
    assert [(s.qualified_name, s.kind, s.location.start_line, s.location.end_line)
            for s in readme.symbols] == [
        ("README.md", common_pb2.SYMBOL_KIND_SECTION, 1, 7),
        ("README.md > Uploads", common_pb2.SYMBOL_KIND_SECTION, 1, 7),
        ("README.md > Uploads > Configuration", common_pb2.SYMBOL_KIND_SECTION, 5, 7),
    ]  # fmt: skip
    assert [(r.kind, r.source_qualified_name, r.target_qualified_name)
            for r in readme.relations] == [
        (common_pb2.RELATION_KIND_CONTAINS, "README.md", "README.md > Uploads"),
        (common_pb2.RELATION_KIND_CONTAINS, "README.md > Uploads",
         "README.md > Uploads > Configuration"),
    ]  # fmt: skip
    assert [(c.kind, c.symbol_qualified_name, c.location.start_line, c.location.end_line)
            for c in readme.chunks] == [
        (common_pb2.CHUNK_KIND_SECTION, "README.md > Uploads", 1, 3),
        (common_pb2.CHUNK_KIND_SECTION, "README.md > Uploads > Configuration", 5, 7),
    ]  # fmt: skip
    assert "Set UPLOAD_ENDPOINT" in readme.chunks[1].text


async def check_cross_file_call_resolves_even_when_the_callee_came_later(
    scanned: dict[str, Any],
) -> None:
    stack, project_id, parsed = scanned["stack"], scanned["project_id"], scanned["parsed"]
    callee = await find_one(stack, project_id, "uploads.policy.enforce_retry_limit")
    assert (callee.location.relative_path, callee.location.start_line) == (POLICY, 7)
    assert callee.location.end_line == 12

    caller = await find_one(stack, project_id, "uploads.client.UploadClient.upload")
    node = await stack.ast_stub.GetNode(
        ast_pb2.GetNodeRequest(node_id=caller.node_id, include_relations=True)
    )
    outgoing = {(r.target_name, r.line): r for r in node.outgoing}
    call = outgoing[("enforce_retry_limit", 51)]
    assert call.kind == common_pb2.RELATION_KIND_CALLS
    assert call.target_qualified_name == "uploads.policy.enforce_retry_limit"
    assert call.target_node_id == callee.node_id
    assert outgoing[("self._retry", 51)].target_node_id != ""
    assert outgoing[("os.path.getsize", 49)].target_node_id == ""

    callee_node = await stack.ast_stub.GetNode(
        ast_pb2.GetNodeRequest(node_id=callee.node_id, include_relations=True)
    )
    incoming = sorted(
        (r.kind, r.source_qualified_name, r.line, r.source_node_id) for r in callee_node.incoming
    )
    client_module = await find_one(stack, project_id, "uploads.client")
    policy_module = await find_one(stack, project_id, "uploads.policy")
    assert incoming == sorted(
        [
            (common_pb2.RELATION_KIND_CONTAINS, "uploads.policy", 7, policy_module.node_id),
            (common_pb2.RELATION_KIND_IMPORTS, "uploads.client", 8, client_module.node_id),
            (
                common_pb2.RELATION_KIND_CALLS,
                "uploads.client.UploadClient.upload",
                51,
                caller.node_id,
            ),
        ]
    )
    # client.py was published before policy.py was stored (earlier batch): its message could
    # not resolve the call yet, the store resolves it now.
    [client] = parsed[CLIENT]
    published = next(
        r for r in client.relations
        if r.target_qualified_name == "uploads.policy.enforce_retry_limit"
        and r.kind == common_pb2.RELATION_KIND_CALLS
    )  # fmt: skip
    assert published.target_node_id in ("", callee.node_id)

    outline = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=project_id, relative_path=CLIENT)
    )
    assert outline.parse_errors == 0
    dependencies = {(d.target_module, d.line): d.target_file_id for d in outline.dependencies}
    files = {path: events[0].file.file_id for path, events in parsed.items()}
    assert dependencies == {
        ("logging", 3): "",
        ("os", 4): "",
        ("collections.abc", 5): "",
        ("uploads.errors", 7): files[ERRORS],
        ("uploads.policy", 8): files[POLICY],
    }
    package = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=project_id, file_id=files[INIT])
    )
    # `from . import policy` in the package resolves to the submodule's file.
    assert {(d.target_module, d.target_file_id) for d in package.dependencies} == {
        ("uploads.policy", files[POLICY]),
        ("uploads.client", files[CLIENT]),
        ("uploads.errors", files[ERRORS]),
    }
    assert [s.qualified_name for s in outline.symbols][:4] == [
        "uploads.client",
        "uploads.client.LOGGER",
        "uploads.client.traced",
        "uploads.client.traced.wrapper",
    ]
    # What a ranker asks for: the same symbols, no dependencies.
    symbols_only = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(
            project_id=project_id, relative_path=CLIENT, symbols_only=True
        )
    )
    assert list(symbols_only.symbols) == list(outline.symbols)
    assert not symbols_only.dependencies

    # Several files' callables in one call, in the order asked, each as the outline lists it
    # but without its docstring; an unknown file is named, not an error.
    listed = await stack.ast_stub.ListFileSymbols(
        ast_pb2.ListFileSymbolsRequest(
            project_id=project_id,
            file_ids=[files[POLICY], "f_unknown", files[CLIENT]],
            kinds=[common_pb2.SYMBOL_KIND_FUNCTION, common_pb2.SYMBOL_KIND_METHOD],
            limit_per_file=3,
        )
    )
    assert [f.file_id for f in listed.files] == [files[POLICY], files[CLIENT]]
    assert list(listed.missing_file_ids) == ["f_unknown"]
    callables = [
        s
        for s in outline.symbols
        if s.kind in (common_pb2.SYMBOL_KIND_FUNCTION, common_pb2.SYMBOL_KIND_METHOD)
    ][:3]
    assert [s.qualified_name for s in listed.files[1].symbols] == [
        s.qualified_name for s in callables
    ]
    for brief, full in zip(listed.files[1].symbols, callables, strict=True):
        assert brief.docstring == ""
        full.docstring = ""
        assert brief == full
    everything = await stack.ast_stub.ListFileSymbols(
        ast_pb2.ListFileSymbolsRequest(project_id=project_id, file_ids=[files[CLIENT]])
    )
    assert [s.node_id for s in everything.files[0].symbols] == [s.node_id for s in outline.symbols]
    # Another project's id lists nothing of this one.
    elsewhere = await stack.ast_stub.ListFileSymbols(
        ast_pb2.ListFileSymbolsRequest(project_id="p_other", file_ids=[files[CLIENT]])
    )
    assert not elsewhere.files
    assert list(elsewhere.missing_file_ids) == [files[CLIENT]]


async def check_symbol_texts_are_each_symbols_own_first_chunk(scanned: dict[str, Any]) -> None:
    """What a reranker reads of a symbol that retrieval did not return: its own code."""
    stack, project_id = scanned["stack"], scanned["project_id"]
    policy = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=project_id, relative_path=POLICY)
    )
    by_name = {s.qualified_name: s for s in policy.symbols}
    enforce = by_name["uploads.policy.enforce_retry_limit"]
    backoff = by_name["uploads.policy.backoff_for"]
    reply = await stack.ast_stub.GetSymbolTexts(
        ast_pb2.GetSymbolTextsRequest(
            project_id=project_id,
            node_ids=[backoff.node_id, "n_unknown", enforce.node_id, backoff.node_id],
        )
    )
    # In the order asked, each once; the function's lines exactly as the file holds them.
    assert [s.node_id for s in reply.symbols] == [backoff.node_id, enforce.node_id]
    assert list(reply.missing_node_ids) == ["n_unknown"]
    source = (UPLOADS / "policy.py").read_text().splitlines()
    for text, symbol in zip(reply.symbols, (backoff, enforce), strict=True):
        start, end = symbol.location.start_line, symbol.location.end_line
        assert (text.start_line, text.end_line) == (start, end)
        assert text.text == "\n".join(source[start - 1 : end])
        assert text.chunk_id.startswith("c_")
    assert "Never more than RETRY_LIMIT" in reply.symbols[1].text
    # Another project's id finds nothing of this one.
    elsewhere = await stack.ast_stub.GetSymbolTexts(
        ast_pb2.GetSymbolTextsRequest(project_id="p_other", node_ids=[enforce.node_id])
    )
    assert not elsewhere.symbols
    assert list(elsewhere.missing_node_ids) == [enforce.node_id]


async def check_find_symbols_ranks_exact_then_prefix_then_substring_and_pages(
    scanned: dict[str, Any],
) -> None:
    stack, project_id = scanned["stack"], scanned["project_id"]

    async def names(**request: Any) -> list[str]:
        reply = await stack.ast_stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(project_id=project_id, **request)
        )
        return [s.qualified_name for s in reply.symbols]

    expected = [
        "uploads.errors.RetryExhausted",  # name starts with "retry"
        "uploads.policy.RETRY_LIMIT",  # a module constant
        "uploads.client.UploadClient._retry",  # contains "retry"
        "uploads.errors.RetryExhausted.__init__",
        "uploads.policy.enforce_retry_limit",
    ]
    assert await names(name="Retry") == expected
    assert (await names(name="upload"))[0] == "uploads.client.UploadClient.upload"  # exact name
    assert await names(name="RETRYEXHAUSTED", exact=True) == ["uploads.errors.RetryExhausted"]
    assert await names(name="uploads.policy.enforce_retry_limit", exact=True) == [
        "uploads.policy.enforce_retry_limit"
    ]
    assert await names(name="retry", kind=common_pb2.SYMBOL_KIND_METHOD) == [
        "uploads.client.UploadClient._retry",
        "uploads.errors.RetryExhausted.__init__",
    ]
    assert await names(name="retry", path_prefix="src/uploads/policy") == [
        "uploads.policy.RETRY_LIMIT",
        "uploads.policy.enforce_retry_limit",
    ]
    assert await names(name="retry", kind=common_pb2.SYMBOL_KIND_CONSTANT) == [
        "uploads.policy.RETRY_LIMIT"
    ]
    assert await names(name="no_such_symbol") == []
    assert await names(name="%") == []  # LIKE wildcards are matched literally

    paged: list[str] = []
    token = ""
    for _ in range(10):
        reply = await stack.ast_stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(
                project_id=project_id,
                name="retry",
                page=common_pb2.PageRequest(page_size=1, page_token=token),
            )
        )
        paged.extend(s.qualified_name for s in reply.symbols)
        token = reply.next_page_token
        if not token:
            break
    assert paged == expected
    other = await stack.ast_stub.FindSymbols(
        ast_pb2.FindSymbolsRequest(
            project_id=project_id, name="retry", page=common_pb2.PageRequest(page_size=1)
        )
    )
    await expect_error(
        stack.ast_stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(
                project_id=project_id,
                name="upload",
                page=common_pb2.PageRequest(page_token=other.next_page_token),
            )
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "different query",
    )


async def check_enrich_returns_symbol_ancestors_and_relations_of_each_chunk(
    scanned: dict[str, Any],
) -> None:
    stack, project_id, parsed = scanned["stack"], scanned["project_id"], scanned["parsed"]
    [client] = parsed[CLIENT]
    upload_chunk = next(
        c for c in client.chunks if c.symbol_qualified_name == "uploads.client.UploadClient.upload"
    )
    readme_chunk = parsed["README.md"][0].chunks[0]
    callee = await find_one(stack, project_id, "uploads.policy.enforce_retry_limit")

    reply = await stack.ast_stub.Enrich(
        ast_pb2.EnrichRequest(
            project_id=project_id,
            chunk_ids=[upload_chunk.chunk_id, "c_unknown", readme_chunk.chunk_id],
            max_relations=50,
        )
    )

    assert list(reply.missing_chunk_ids) == ["c_unknown"]
    enriched, readme = reply.chunks
    assert enriched.chunk.chunk_id == upload_chunk.chunk_id
    assert enriched.chunk.text == upload_chunk.text
    assert (enriched.chunk.location.start_line, enriched.chunk.location.end_line) == (42, 51)
    assert enriched.symbol.qualified_name == "uploads.client.UploadClient.upload"
    assert [(a.qualified_name, a.location.start_line, a.location.end_line)
            for a in enriched.ancestors] == [
        ("uploads.client.UploadClient", 23, 61),
        ("uploads.client", 1, 64),
    ]  # fmt: skip
    assert ("enforce_retry_limit", callee.node_id) in {
        (r.target_name, r.target_node_id) for r in enriched.outgoing
    }
    assert [(r.kind, r.source_qualified_name) for r in enriched.incoming] == [
        (common_pb2.RELATION_KIND_CONTAINS, "uploads.client.UploadClient")
    ]
    assert readme.chunk.chunk_id == readme_chunk.chunk_id
    assert readme.symbol.qualified_name == "README.md > Uploads"
    assert [a.qualified_name for a in readme.ancestors] == ["README.md"]
    # What a ranking asks for: the same chunks and symbols, no ancestors, no relations.
    brief = await stack.ast_stub.Enrich(
        ast_pb2.EnrichRequest(
            project_id=project_id, chunk_ids=[upload_chunk.chunk_id], symbols_only=True
        )
    )
    (only,) = brief.chunks
    assert (only.chunk, only.symbol) == (enriched.chunk, enriched.symbol)
    assert not (only.ancestors)
    assert not (only.outgoing)
    assert not (only.incoming)
    # Another project's id finds nothing: chunk ids are scoped to their project.
    elsewhere = await stack.ast_stub.Enrich(
        ast_pb2.EnrichRequest(project_id="p_other", chunk_ids=[upload_chunk.chunk_id])
    )
    assert list(elsewhere.missing_chunk_ids) == [upload_chunk.chunk_id]


async def check_bad_requests_are_rejected_with_messages_a_person_can_act_on(
    scanned: dict[str, Any],
) -> None:
    stub, project_id = scanned["stack"].ast_stub, scanned["project_id"]
    invalid, missing = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND

    await expect_error(stub.GetNode(ast_pb2.GetNodeRequest()), invalid, "node_id must not be empty")
    await expect_error(
        stub.GetNode(ast_pb2.GetNodeRequest(node_id="n_0000")), missing, "FindSymbols"
    )
    await expect_error(
        stub.FindSymbols(ast_pb2.FindSymbolsRequest(name="x")),
        invalid,
        "project_id must not be empty",
    )
    await expect_error(
        stub.FindSymbols(ast_pb2.FindSymbolsRequest(project_id=project_id, name="x" * 201)),
        invalid,
        "longer than 200 characters",
    )
    await expect_error(
        stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(
                project_id=project_id, name="x", page=common_pb2.PageRequest(page_size=-1)
            )
        ),
        invalid,
        "page_size must not be negative",
    )
    await expect_error(
        stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(
                project_id=project_id, name="x", page=common_pb2.PageRequest(page_token="bogus!")
            )
        ),
        invalid,
        "page_token is not one this server issued",
    )
    await expect_error(stub.Enrich(ast_pb2.EnrichRequest(chunk_ids=["c_1"])), invalid, "project_id")
    await expect_error(
        stub.Enrich(ast_pb2.EnrichRequest(project_id=project_id, max_relations=-1)),
        invalid,
        "max_relations must not be negative",
    )
    await expect_error(
        stub.GetFileOutline(ast_pb2.GetFileOutlineRequest(project_id=project_id)),
        invalid,
        "file_id or its relative_path",
    )
    await expect_error(
        stub.GetFileOutline(
            ast_pb2.GetFileOutlineRequest(project_id=project_id, relative_path="assets/logo.png")
        ),
        missing,
        "no file at 'assets/logo.png'",
    )
    await expect_error(
        stub.ListFileSymbols(ast_pb2.ListFileSymbolsRequest(project_id=project_id, file_ids=[" "])),
        invalid,
        "file_ids must not be empty",
    )
    await expect_error(
        stub.ListFileSymbols(
            ast_pb2.ListFileSymbolsRequest(
                project_id=project_id, file_ids=[f"f_{i}" for i in range(101)]
            )
        ),
        invalid,
        "at most 100 at once",
    )
    await expect_error(
        stub.ListFileSymbols(
            ast_pb2.ListFileSymbolsRequest(project_id=project_id, file_ids=["f_1"], kinds=[99])
        ),
        invalid,
        "unknown symbol kind 99",
    )
    await expect_error(
        stub.ListFileSymbols(
            ast_pb2.ListFileSymbolsRequest(
                project_id=project_id, file_ids=["f_1"], limit_per_file=-1
            )
        ),
        invalid,
        "limit_per_file must not be negative",
    )
    await expect_error(
        stub.GetSymbolTexts(ast_pb2.GetSymbolTextsRequest(node_ids=["n_1"])), invalid, "project_id"
    )
    await expect_error(
        stub.GetSymbolTexts(ast_pb2.GetSymbolTextsRequest(project_id=project_id, node_ids=[""])),
        invalid,
        "node_ids must not be empty",
    )
    await expect_error(
        stub.GetSymbolTexts(
            ast_pb2.GetSymbolTextsRequest(
                project_id=project_id, node_ids=[f"n_{i}" for i in range(101)]
            )
        ),
        invalid,
        "101 node ids; ask for at most 100 at once",
    )


async def test_a_scan_flows_through_ast_to_files_parsed_and_completes_the_job(
    scanned: dict[str, Any],
) -> None:
    await check_job_completed_once_ast_reported_every_changed_file(scanned)
    await check_files_parsed_carry_symbols_relations_and_chunks(scanned)


async def test_the_ast_api_answers_from_what_the_scan_stored(scanned: dict[str, Any]) -> None:
    await check_cross_file_call_resolves_even_when_the_callee_came_later(scanned)
    await check_find_symbols_ranks_exact_then_prefix_then_substring_and_pages(scanned)
    await check_enrich_returns_symbol_ancestors_and_relations_of_each_chunk(scanned)
    await check_symbol_texts_are_each_symbols_own_first_chunk(scanned)
    await check_bad_requests_are_rejected_with_messages_a_person_can_act_on(scanned)


async def test_an_outline_says_how_many_syntax_errors_its_file_had(
    start_stack: Any, source_tree: Path
) -> None:
    (source_tree / "src" / "uploads" / "broken.py").write_text(
        "def fine():\n    return 1\n\n\ndef broken(:\n    return 2\n"
    )
    stack = await start_stack()
    project_id = await stack.create_project(source_tree)
    job = await stack.scan(project_id)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job

    broken = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=project_id, relative_path="src/uploads/broken.py")
    )
    assert broken.parse_errors > 0
    assert "uploads.broken.fine" in {s.qualified_name for s in broken.symbols}
