"""Builders of small impact graphs for the pure-domain tests."""

from __future__ import annotations

import pytest

from locus.impact.domain import (
    GraphDependency,
    GraphFile,
    GraphRelation,
    GraphSymbol,
    RelationKind,
    SymbolKind,
)


def file(file_id: str, path: str, module: str) -> GraphFile:
    return GraphFile(file_id=file_id, relative_path=path, module_name=module, language="python")


def symbol(
    qualified_name: str,
    kind: SymbolKind,
    file_id: str,
    *,
    parent: str = "",
    lines: tuple[int, int] = (1, 1),
) -> GraphSymbol:
    return GraphSymbol(
        node_id="n:" + qualified_name,
        qualified_name=qualified_name,
        scope_name=qualified_name.rsplit(".", 1)[-1] if kind != "module" else "",
        name=qualified_name.rsplit(".", 1)[-1],
        kind=kind,
        file_id=file_id,
        relative_path=f"{file_id}.py",
        start_line=lines[0],
        end_line=lines[1],
        parent_qualified_name=parent,
    )


def relation(
    kind: RelationKind, source: str, target: str, file_id: str, *, target_node_id: str = ""
) -> GraphRelation:
    return GraphRelation(
        kind=kind,
        source_node_id="n:" + source,
        source_qualified_name=source,
        target_name=target.rsplit(".", 1)[-1],
        target_qualified_name=target,
        target_node_id=target_node_id,
        file_id=file_id,
        line=1,
    )


def dependency(source_file: str, module: str, target_file: str = "") -> GraphDependency:
    return GraphDependency(source_file, module, target_file, 1)


class GraphParts:
    """The builders above, handed to tests as the ``parts`` fixture."""

    file = staticmethod(file)
    symbol = staticmethod(symbol)
    relation = staticmethod(relation)
    dependency = staticmethod(dependency)


@pytest.fixture
def parts() -> type[GraphParts]:
    return GraphParts


@pytest.fixture
def uploads_files() -> list[GraphFile]:
    return [
        file("policy", "src/uploads/policy.py", "uploads.policy"),
        file("client", "src/uploads/client.py", "uploads.client"),
        file("init", "src/uploads/__init__.py", "uploads"),
    ]


@pytest.fixture
def uploads_symbols() -> list[GraphSymbol]:
    return [
        symbol("uploads.policy", "module", "policy"),
        symbol("uploads.policy.enforce_retry_limit", "function", "policy", parent="uploads.policy"),
        symbol("uploads.client", "module", "client"),
        symbol("uploads.client.UploadClient", "class", "client", parent="uploads.client"),
        symbol(
            "uploads.client.UploadClient.upload",
            "method",
            "client",
            parent="uploads.client.UploadClient",
        ),
        symbol("uploads", "module", "init"),
    ]
