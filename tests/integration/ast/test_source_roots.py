"""Source roots through real processes: ingestion detects a monorepo's `src/` layouts, sends
each file's root in files.changed (on an incremental scan too), and ast names modules from it,
so a call from one project into another resolves by its qualified name `acme.billing.…`; a
TypeScript workspace's packages (package.json names and entries, tsconfig path aliases) likewise."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from locus.v1 import ast_pb2, common_pb2, events_pb2, ingestion_pb2

pytestmark = pytest.mark.integration

PREFIX = "locus.v1"
INVOICE = "libs/billing/src/acme/billing/invoice.py"
CHECKOUT = "services/shop/src/shop/checkout.py"
BILLING_PYPROJECT = """[project]
name = "acme-billing"

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["src/acme"]
"""
INVOICE_SOURCE = '''"""Invoices of the shop."""


class Invoice:
    def __init__(self, amounts: list[int]) -> None:
        self.amounts = amounts

    def total(self) -> int:
        """Sum of the invoice's amounts."""
        return sum(self.amounts)
'''
CHECKOUT_SOURCE = '''"""Checkout: bills a cart."""

from acme.billing.invoice import Invoice


def checkout(amounts: list[int]) -> int:
    return Invoice(amounts).total()
'''
CHECKOUT_V2 = (
    CHECKOUT_SOURCE
    + """

def refund(amounts: list[int]) -> int:
    return -Invoice(amounts).total()
"""
)


def write_monorepo(root: Path) -> Path:
    """Two projects with `src/` layouts (one namespace package `acme` without __init__)."""
    files = {
        "libs/billing/pyproject.toml": BILLING_PYPROJECT,
        "libs/billing/src/acme/billing/__init__.py": "",
        INVOICE: INVOICE_SOURCE,
        "services/shop/pyproject.toml": '[project]\nname = "shop"\n',
        "services/shop/src/shop/__init__.py": "",
        CHECKOUT: CHECKOUT_SOURCE,
        "tests/test_checkout.py": "from shop.checkout import checkout\n",
    }
    for relative_path, text in files.items():
        path = root / relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


async def find_one(stack: Any, project_id: str, qualified_name: str) -> Any:
    reply = await stack.ast_stub.FindSymbols(
        ast_pb2.FindSymbolsRequest(project_id=project_id, name=qualified_name, exact=True)
    )
    matches = [s for s in reply.symbols if s.qualified_name == qualified_name]
    assert len(matches) == 1, [s.qualified_name for s in reply.symbols]
    return matches[0]


async def test_src_layouts_of_a_monorepo_give_package_qualified_names(
    stack: Any, tmp_path: Path
) -> None:
    tree = write_monorepo(tmp_path / "monorepo")
    changed = await stack.record(f"{PREFIX}.files.changed", events_pb2.FilesChanged)
    parsed = await stack.record(f"{PREFIX}.files.parsed", events_pb2.FilesParsed)
    project_id = await stack.create_project(tree)

    first = await stack.scan(project_id)

    assert first.state == ingestion_pb2.SCAN_STATE_COMPLETED
    roots = {
        f.relative_path: (f.source_root, f.source_root_name)
        for batch in changed.of_job(first.job_id)
        for f in batch.files
    }
    assert roots[INVOICE] == ("libs/billing/src", "")
    assert roots[CHECKOUT] == ("services/shop/src", "")
    assert roots["tests/test_checkout.py"] == ("", "")
    assert roots["libs/billing/pyproject.toml"] == ("", "")  # toml: no root convention
    await parsed.wait_for_count(len(roots))
    modules = {e.file.relative_path: e.module_name for e in parsed.of_job(first.job_id)}
    assert modules[INVOICE] == "acme.billing.invoice"
    assert modules["libs/billing/src/acme/billing/__init__.py"] == "acme.billing"
    assert modules[CHECKOUT] == "shop.checkout"
    assert modules["tests/test_checkout.py"] == "tests.test_checkout"

    total = await find_one(stack, project_id, "acme.billing.invoice.Invoice.total")
    assert (total.location.relative_path, total.location.start_line) == (INVOICE, 8)
    caller = await find_one(stack, project_id, "shop.checkout.checkout")
    node = await stack.ast_stub.GetNode(
        ast_pb2.GetNodeRequest(node_id=caller.node_id, include_relations=True)
    )
    invoice_class = await find_one(stack, project_id, "acme.billing.invoice.Invoice")
    calls = {
        r.target_qualified_name: r.target_node_id
        for r in node.outgoing
        if r.kind == common_pb2.RELATION_KIND_CALLS
    }
    assert calls["acme.billing.invoice.Invoice"] == invoice_class.node_id
    outline = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=project_id, relative_path=CHECKOUT)
    )
    assert [(d.target_module, d.target_file_id) for d in outline.dependencies] == [
        ("acme.billing.invoice", total.location.file_id)
    ]

    # An incremental scan sends only the modified file, still with its (unchanged) root.
    (tree / CHECKOUT).write_text(CHECKOUT_V2)
    second = await stack.scan(project_id)

    assert second.state == ingestion_pb2.SCAN_STATE_COMPLETED
    sent = [f for batch in changed.of_job(second.job_id) for f in batch.files]
    assert [(f.relative_path, f.source_root) for f in sent] == [(CHECKOUT, "services/shop/src")]
    refund = await find_one(stack, project_id, "shop.checkout.refund")
    assert refund.location.start_line == 10


WORKSPACE = Path(__file__).parents[2] / "unit" / "ast" / "fixtures" / "workspace"
APP_MAIN = "packages/app/src/main.ts"
EXTRA = "packages/app/src/extra.ts"


async def test_a_typescript_workspace_resolves_imports_between_its_packages(
    stack: Any, tmp_path: Path
) -> None:
    tree = tmp_path / "workspace"
    shutil.copytree(WORKSPACE, tree)
    # The app also reaches into the design system's sources through a path alias.
    (tree / "packages/app/tsconfig.json").write_text(
        '{"compilerOptions": {"paths": {"#ui/*": ["../ui/src/*"]}}}'
    )
    (tree / EXTRA).write_text("import { palette } from '#ui/theme';\n")
    changed = await stack.record(f"{PREFIX}.files.changed", events_pb2.FilesChanged)
    parsed = await stack.record(f"{PREFIX}.files.parsed", events_pb2.FilesParsed)
    project_id = await stack.create_project(tree)

    job = await stack.scan(project_id)

    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED
    sent = {f.relative_path: f for batch in changed.of_job(job.job_id) for f in batch.files}
    button = sent["packages/ui/src/button.ts"]
    assert (button.source_root, button.source_root_name, button.source_root_entry) == (
        "packages/ui",
        "@acme/ui",
        "src/index.ts",
    )
    # `paths`, then what `baseUrl: "."` alone resolves (the package's top-level directories).
    assert [(a.pattern, list(a.targets)) for a in button.source_root_aliases] == [
        ("@/*", ["src/*"]),
        ("src/*", ["src/*"]),
        ("src", ["src"]),
    ]
    await parsed.wait_for_count(len(sent))
    modules = {e.file.relative_path: e.module_name for e in parsed.of_job(job.job_id)}
    assert modules["packages/ui/src/index.ts"] == "@acme/ui"
    assert modules[APP_MAIN] == "@acme/app"

    outline = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=project_id, relative_path=APP_MAIN)
    )
    file_ids = {f.relative_path: f.file_id for f in sent.values()}
    assert {d.target_module: d.target_file_id for d in outline.dependencies} == {
        "@acme/ui": file_ids["packages/ui/src/index.ts"],
        "@acme/ui/src/theme": file_ids["packages/ui/src/theme.ts"],
        "@acme/app/src/util": file_ids["packages/app/src/util.ts"],
    }
    (alias,) = sent[EXTRA].source_root_aliases
    assert (alias.pattern, list(alias.targets), alias.other_package) == (
        "#ui/*",
        ["packages/ui/src/*"],
        True,
    )
    assert (alias.package_root, alias.package_name, alias.package_entry) == (
        "packages/ui",
        "@acme/ui",
        "src/index.ts",
    )
    extra = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=project_id, relative_path=EXTRA)
    )
    assert [(d.target_module, d.target_file_id) for d in extra.dependencies] == [
        ("@acme/ui/src/theme", file_ids["packages/ui/src/theme.ts"])
    ]
    render = await find_one(stack, project_id, "@acme/ui/src/button.Button.render")
    node = await stack.ast_stub.GetNode(
        ast_pb2.GetNodeRequest(node_id=render.node_id, include_relations=True)
    )
    called = {r.target_qualified_name for r in node.outgoing if r.target_node_id}
    assert {"@acme/ui/src/theme.palette", "@acme/ui/src/util.format"} <= called


async def test_a_renamed_package_renames_the_modules_of_its_unchanged_files(
    stack: Any, tmp_path: Path
) -> None:
    tree = tmp_path / "workspace"
    shutil.copytree(WORKSPACE, tree)
    changed = await stack.record(f"{PREFIX}.files.changed", events_pb2.FilesChanged)
    project_id = await stack.create_project(tree)
    first = await stack.scan(project_id)
    assert first.state == ingestion_pb2.SCAN_STATE_COMPLETED
    await find_one(stack, project_id, "@acme/ui/src/button.Button.render")

    # Only package.json changes; every file of the package now stands for another name.
    manifest = tree / "packages" / "ui" / "package.json"
    manifest.write_text(manifest.read_text().replace('"@acme/ui"', '"@acme/widgets"'))
    second = await stack.scan(project_id)

    assert second.state == ingestion_pb2.SCAN_STATE_COMPLETED
    sent = {f.relative_path: f for batch in changed.of_job(second.job_id) for f in batch.files}
    assert sorted(sent) == [
        "packages/ui/package.json",
        "packages/ui/src/button.ts",
        "packages/ui/src/index.ts",
        "packages/ui/src/theme.ts",
        "packages/ui/src/util.ts",
    ]
    button = sent["packages/ui/src/button.ts"]
    assert button.change_type == common_pb2.CHANGE_TYPE_MODIFIED
    assert button.sha256 == button.previous_sha256  # same content, new root
    assert button.source_root_name == "@acme/widgets"
    assert second.stats.files_modified == 5
    render = await find_one(stack, project_id, "@acme/widgets/src/button.Button.render")
    assert render.location.relative_path == "packages/ui/src/button.ts"
    gone = await stack.ast_stub.FindSymbols(
        ast_pb2.FindSymbolsRequest(
            project_id=project_id, name="@acme/ui/src/button.Button.render", exact=True
        )
    )
    assert list(gone.symbols) == []
