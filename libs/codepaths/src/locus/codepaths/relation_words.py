"""How a relation reads as walked: itself forward, its reversed word against its direction
(`calls` walked from the callee is `called-by`). Impact's reason chains, the MCP server's
impacted symbols and the CLI's impact output all say it the same way."""

from __future__ import annotations

REVERSED: dict[str, str] = {
    "calls": "called-by",
    "imports": "imported-by",
    "inherits": "inherited-by",
    "contains": "contained-in",
    "references": "referenced-by",
    "overrides": "overridden-by",
}


def relation_label(relation: str, reverse: bool) -> str:
    """`calls`, `called-by`, `overridden-by`...; a relation without a reversed word walked
    backwards reads `<relation> (reverse)`."""
    if not reverse:
        return relation
    return REVERSED.get(relation, f"{relation} (reverse)")
