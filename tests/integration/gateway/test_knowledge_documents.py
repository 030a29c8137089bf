"""Knowledge documents from outside a repository through the real stack: a Markdown and an HTML
document upserted through the gateway are searchable by section (cited by their heading path)
and survive a scan of the project's directory; the same body again changes nothing, a changed
body replaces the old sections, a delete removes them; a CHM package (written by
tests/support/chm_writer.py, extracted by 7-Zip) makes its pages searchable under their
table-of-contents path and a reimport updates it; a corrupt package, an unknown format and an
oversized body are refused with INVALID_ARGUMENT and write nothing; a reader may not write."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import grpc
import pytest
from chm_writer import sitemap, write_chm
from gateway_calls import refusal

from locus.v1 import events_pb2, gateway_pb2, ingestion_pb2, retrieval_pb2

pytestmark = pytest.mark.integration

RUNBOOK = """\
# Shop runbook

## Operations

### Rolling back

A failed migration is rolled back by restoring the backup taken before upgrading.
"""

RUNBOOK_V2 = """\
# Shop runbook

## Operations

### Reverting

A broken release is reverted by redeploying the previous container image tag.
"""

GUIDE = """\
<html><head><title>Cashier guide</title></head><body>
<h1>Cashier guide</h1>
<h2>Refunds</h2>
<p>A refund returns the payment to the customer&#39;s card within five business days.</p>
</body></html>
"""


def manual_chm(upgrade_text: str, *, with_install: bool = True) -> bytes:
    entries = [(1, "Manual", "index.html")]
    pages = {"index.html": b"<html><body><h1>Manual</h1><p>The shop manual.</p></body></html>"}
    if with_install:
        entries.append((2, "Installation", "install/index.html"))
        pages["install/index.html"] = (
            b"<html><body><h1>Installing</h1><p>Unpack the tarball into /opt.</p></body></html>"
        )
    entries.append((3 if with_install else 2, "Upgrading", "install/upgrade.html"))
    pages["install/upgrade.html"] = (
        f"<html><body><h1>Upgrading</h1><h2>Steps</h2><p>{upgrade_text}</p></body></html>"
    ).encode()
    return write_chm({"manual.hhc": sitemap(entries), **pages})


async def wait_for(gateway: Any, job: Any, within_seconds: float = 120) -> Any:
    deadline = time.monotonic() + within_seconds
    while time.monotonic() < deadline:
        job = await gateway.stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job.job_id))
        if job.state == ingestion_pb2.SCAN_STATE_FAILED or (
            job.state == ingestion_pb2.SCAN_STATE_COMPLETED
            and job.level == events_pb2.SCAN_LEVEL_EMBEDDED
        ):
            assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
            return job
        await asyncio.sleep(0.2)
    raise TimeoutError(f"job {job.job_id} not finished after {within_seconds}s: {job}")


async def search(gateway: Any, project: str, query: str) -> list[Any]:
    response = await gateway.stub.Search(
        retrieval_pb2.SearchRequest(
            query=query,
            mode=retrieval_pb2.SEARCH_MODE_BM25,
            filters=retrieval_pb2.SearchFilters(project_id=project),
            top_k=5,
        )
    )
    return list(response.hits)


def upsert(project: str, title: str, body: str, fmt: str, url: str = "") -> Any:
    return ingestion_pb2.UpsertKnowledgeDocumentRequest(
        project_id=project, title=title, url=url, body=body, format=fmt
    )


async def test_documents_are_searchable_replaced_and_deleted(
    stack: Any, gateway: Any, sample_tree: Any
) -> None:
    stack.require("ingestion", "ast", "retrieval")
    project = (await gateway.create_project(sample_tree)).name
    added = await gateway.stub.UpsertKnowledgeDocument(
        upsert(project, "Shop runbook", RUNBOOK, "markdown", "https://wiki.example/runbook")
    )
    assert added.changed
    assert added.document.relative_path == "knowledge/shop-runbook.md"
    await wait_for(gateway, added.job)
    guide = await gateway.stub.UpsertKnowledgeDocument(
        upsert(project, "Cashier guide", GUIDE, "HTML")
    )
    assert guide.document.format == "html"
    await wait_for(gateway, guide.job)
    await gateway.scan_and_wait(project)  # the directory's scan leaves the documents alone

    [top, *_] = await search(gateway, project, "failed migration rolled back restoring backup")
    assert (
        top.chunk.symbol_qualified_name
        == "knowledge/shop-runbook.md > Shop runbook > Operations > Rolling back"
    )
    [page, *_] = await search(gateway, project, "refund five business days")
    assert page.chunk.symbol_qualified_name == (
        "knowledge/cashier-guide.html > Cashier guide > Refunds"
    )
    located = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=project,
            question="What does the documentation say about rolling back a failed migration?",
        )
    )
    assert located.symbols[0].symbol.qualified_name.startswith("knowledge/shop-runbook.md > ")

    again = await gateway.stub.UpsertKnowledgeDocument(
        upsert(project, "Shop runbook", RUNBOOK, "markdown", "https://wiki.example/runbook")
    )
    assert not again.changed
    assert not again.HasField("job")
    assert again.document.document_id == added.document.document_id

    changed = await gateway.stub.UpsertKnowledgeDocument(
        upsert(project, "Shop runbook", RUNBOOK_V2, "md", "https://wiki.example/runbook")
    )
    assert changed.changed
    assert changed.document.document_id == added.document.document_id
    await wait_for(gateway, changed.job)
    hits = await search(gateway, project, "failed migration rolled back restoring backup")
    assert "knowledge/shop-runbook.md" not in [h.chunk.location.relative_path for h in hits]
    [top, *_] = await search(gateway, project, "redeploying previous container image tag")
    assert top.chunk.symbol_qualified_name.endswith("Operations > Reverting")

    deleted = await gateway.stub.DeleteKnowledgeDocument(
        ingestion_pb2.DeleteKnowledgeDocumentRequest(
            project_id=project, url="https://wiki.example/runbook"
        )
    )
    assert deleted.document.relative_path == "knowledge/shop-runbook.md"
    await wait_for(gateway, deleted.job)
    hits = await search(gateway, project, "redeploying previous container image tag")
    assert "knowledge/shop-runbook.md" not in [h.chunk.location.relative_path for h in hits]
    [page, *_] = await search(gateway, project, "refund five business days")
    assert page.chunk.location.relative_path == "knowledge/cashier-guide.html"
    missing = await refusal(
        gateway.stub.DeleteKnowledgeDocument(
            ingestion_pb2.DeleteKnowledgeDocumentRequest(
                project_id=project, document_id=added.document.document_id
            )
        )
    )
    assert missing.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_chm_package_is_searchable_by_its_table_of_contents_path(
    stack: Any, gateway: Any
) -> None:
    stack.require("ingestion", "ast", "retrieval")
    project = (await gateway.create_project()).name
    imported = await gateway.stub.ImportChm(
        ingestion_pb2.ImportChmRequest(
            project_id=project,
            filename="manual.chm",
            content=manual_chm("Stop the zebra workers before migrating."),
        )
    )
    assert [d.title for d in imported.documents] == [
        "Manual",
        "Manual > Installation",
        "Manual > Installation > Upgrading",
    ]
    assert imported.documents[2].relative_path == "knowledge/manual/installation/upgrading.html"
    assert imported.documents[2].url == "chm:manual.chm/install/upgrade.html"
    assert imported.pages_changed == 3
    await wait_for(gateway, imported.job)
    [top, *_] = await search(gateway, project, "zebra workers migrating")
    assert top.chunk.symbol_qualified_name == (
        "knowledge/manual/installation/upgrading.html > Upgrading > Steps"
    )

    same = await gateway.stub.ImportChm(
        ingestion_pb2.ImportChmRequest(
            project_id=project,
            filename="manual.chm",
            content=manual_chm("Stop the zebra workers before migrating."),
        )
    )
    assert (same.pages_changed, same.pages_removed, same.HasField("job")) == (0, 0, False)

    updated = await gateway.stub.ImportChm(
        ingestion_pb2.ImportChmRequest(
            project_id=project,
            filename="manual.chm",
            content=manual_chm("Drain the giraffe queue first.", with_install=False),
        )
    )
    assert [d.title for d in updated.documents] == ["Manual", "Manual > Upgrading"]
    assert (updated.pages_changed, updated.pages_removed) == (1, 1)  # upgrading moved
    await wait_for(gateway, updated.job)
    assert await search(gateway, project, "zebra workers migrating") == []
    assert await search(gateway, project, "unpack tarball opt") == []
    [top, *_] = await search(gateway, project, "drain giraffe queue")
    assert top.chunk.symbol_qualified_name == "knowledge/manual/upgrading.html > Upgrading > Steps"


async def test_refused_documents_and_packages_write_nothing(stack: Any, gateway: Any) -> None:
    stack.require("ingestion")
    project = (await gateway.create_project()).name
    good = manual_chm("Stop the zebra workers before migrating.")
    for content, says in (
        (b"MZ not a help file at all" * 40, "not a readable CHM package"),
        (good[:3000], "not a readable CHM package"),
    ):
        error = await refusal(
            gateway.stub.ImportChm(
                ingestion_pb2.ImportChmRequest(
                    project_id=project, filename="bad.chm", content=content
                )
            )
        )
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert says in (error.details() or "")

    unknown = await refusal(
        gateway.stub.UpsertKnowledgeDocument(upsert(project, "Notes", "x", "docx"))
    )
    assert unknown.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "markdown, restructuredtext, asciidoc, html" in (unknown.details() or "")

    oversized = await refusal(
        gateway.stub.UpsertKnowledgeDocument(
            upsert(project, "Huge", "# Huge\n" + "a" * (2 * 1024 * 1024), "markdown")
        )
    )
    assert oversized.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "at most 2,097,152 bytes" in (oversized.details() or "")

    sources = await gateway.stub.ListSources(ingestion_pb2.ListSourcesRequest(project_id=project))
    assert list(sources.sources) == []  # not even the documents source was made


async def test_a_reader_may_not_write_documents(stack: Any, gateway: Any) -> None:
    stack.require("ingestion")
    project = (await gateway.create_project()).name
    key = await gateway.stub.CreateApiKey(
        gateway_pb2.CreateApiKeyRequest(
            name=f"reader-{uuid.uuid4().hex[:6]}",
            grants=[gateway_pb2.Grant(project=project, role=gateway_pb2.ROLE_READER)],
        )
    )
    reader = gateway.stub_as(key.api_key)
    for call in (
        reader.UpsertKnowledgeDocument(upsert(project, "Notes", "# Notes\n", "markdown")),
        reader.DeleteKnowledgeDocument(
            ingestion_pb2.DeleteKnowledgeDocumentRequest(project_id=project, url="x")
        ),
        reader.ImportChm(
            ingestion_pb2.ImportChmRequest(project_id=project, filename="m.chm", content=b"x")
        ),
    ):
        error = await refusal(call)
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    sources = await gateway.stub.ListSources(ingestion_pb2.ListSourcesRequest(project_id=project))
    assert list(sources.sources) == []
