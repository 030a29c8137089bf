"""Labelling a tool's result with the projects its items come from: each ProjectLabelled item
gets its project's id (the asked project's when the gateway's reply leaves it out) and name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from pydantic import BaseModel

from locus.mcp.domain.results import ProjectLabelled


def labelled_items(result: BaseModel) -> Iterator[ProjectLabelled]:
    """Every ProjectLabelled model inside ``result`` (itself included), depth first."""
    if isinstance(result, ProjectLabelled):
        yield result
    for name in type(result).model_fields:
        value = getattr(result, name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                yield from labelled_items(item)


def unnamed_project_ids(result: BaseModel, names: Mapping[str, str]) -> set[str]:
    """The project ids inside ``result`` that ``names`` does not name."""
    return {
        item.project_id
        for item in labelled_items(result)
        if item.project_id and item.project_id not in names
    }


def label_projects(result: BaseModel, names: Mapping[str, str], asked_project_id: str = "") -> None:
    """Fill in each item's project: an empty id becomes ``asked_project_id`` (a one-project
    call's), an empty name the one ``names`` gives its id ("" when none does)."""
    for item in labelled_items(result):
        item.project_id = item.project_id or asked_project_id
        item.project = item.project or names.get(item.project_id, "")
