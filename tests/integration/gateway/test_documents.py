"""Knowledge documents through the real stack: a Markdown manual and an HTML page scanned with
the sample project are searchable and citable by section (the heading path names the hit),
Locate puts a section first when the question asks what the documentation says, and code
first when it asks where something is implemented."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from locus.v1 import common_pb2, gateway_pb2, ingestion_pb2, retrieval_pb2

pytestmark = pytest.mark.integration

MANUAL = """\
# Shop manual

The shop takes orders and charges cards.

## Operations

### Upgrading

To upgrade the shop, stop the workers, back up the order database, then run the
migration. The upgrade check refuses to start a shop whose database schema is older
than the code expects.

```bash
shop migrate --to latest
```

### Rolling back

A failed migration is rolled back by restoring the backup taken before upgrading.
"""

GUIDE = """\
<!doctype html>
<html>
<head><title>Shop guide</title><script>var trackingPixel = "<h1>beacon</h1>";</script></head>
<body>
<nav><a href="/">Home</a></nav>
<h1>Shop guide</h1>
<p>Everything a cashier needs to know.</p>
<h2>Refunds</h2>
<p>A refund returns the payment to the customer&#39;s card within five business days.</p>
</body>
</html>
"""

UPGRADE_CODE = '''"""Start-up checks of the shop."""


class SchemaTooOld(Exception):
    """The database schema predates the code."""


def check_upgrade(database_schema, code_schema):
    """Refuse to start when the database schema is older than the code expects."""
    if database_schema < code_schema:
        raise SchemaTooOld(f"schema {database_schema} < {code_schema}: run the upgrade")
'''


@pytest.fixture
async def documented(stack: Any, gateway: Any, sample_tree: Path) -> Any:
    """The sample project with a manual, an HTML guide and the code of the upgrade check."""
    stack.require("ingestion", "ast", "retrieval")
    (sample_tree / "docs" / "manual.md").write_text(MANUAL, encoding="utf-8")
    (sample_tree / "docs" / "guide.html").write_text(GUIDE, encoding="utf-8")
    (sample_tree / "src" / "shop" / "upgrade.py").write_text(UPGRADE_CODE, encoding="utf-8")
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
    return await gateway.stub.GetProject(ingestion_pb2.GetProjectRequest(project_id=project.name))


async def search(gateway: Any, project: Any, query: str) -> list[Any]:
    response = await gateway.stub.Search(
        retrieval_pb2.SearchRequest(
            query=query,
            mode=retrieval_pb2.SEARCH_MODE_BM25,
            filters=retrieval_pb2.SearchFilters(project_id=project.name),
            top_k=5,
        ),
        metadata=(("x-request-id", f"docs-{uuid.uuid4().hex[:8]}"),),
    )
    return list(response.hits)


async def test_sections_are_searchable_and_cited_by_their_heading_path(
    gateway: Any, documented: Any
) -> None:
    [top, *_] = await search(gateway, documented, "failed migration rolled back restoring backup")
    assert (
        top.chunk.symbol_qualified_name
        == "docs/manual.md > Shop manual > Operations > Rolling back"
    )
    assert top.chunk.kind == common_pb2.CHUNK_KIND_SECTION
    location = top.chunk.location
    assert (location.relative_path, location.start_line, location.end_line) == (
        "docs/manual.md",
        17,
        19,
    )
    assert top.chunk.text.startswith("### Rolling back")

    [page, *_] = await search(gateway, documented, "refund five business days")
    assert page.chunk.symbol_qualified_name == "docs/guide.html > Shop guide > Refunds"
    assert (page.chunk.location.start_line, page.chunk.location.end_line) == (8, 9)
    assert "customer's card" in page.chunk.text  # the entity decoded, the tags gone
    assert "<p>" not in page.chunk.text

    hits = await search(gateway, documented, "trackingPixel beacon")
    assert "docs/guide.html" not in [h.chunk.location.relative_path for h in hits]


async def test_a_documentation_question_puts_the_section_first(
    gateway: Any, documented: Any
) -> None:
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=documented.name,
            question="What does the documentation say about upgrading the shop?",
        )
    )
    top = response.symbols[0].symbol
    assert top.kind == common_pb2.SYMBOL_KIND_SECTION
    assert top.qualified_name == "docs/manual.md > Shop manual > Operations > Upgrading"
    assert (top.location.start_line, top.location.end_line) == (7, 15)
    assert response.files[0].relative_path == "docs/manual.md"


async def test_a_where_to_change_question_still_puts_the_code_first(
    gateway: Any, documented: Any
) -> None:
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=documented.name,
            question="Where is the upgrade check of the database schema implemented?",
        )
    )
    top = response.symbols[0].symbol
    assert top.qualified_name == "shop.upgrade.check_upgrade"
    assert response.files[0].relative_path == "src/shop/upgrade.py"
    assert common_pb2.SYMBOL_KIND_SECTION not in {s.symbol.kind for s in response.symbols}
