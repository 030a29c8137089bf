"""ProjectScope: what a scope may name and how the request log names it."""

from __future__ import annotations

import pytest

from locus.gateway.domain.errors import InvalidRequest
from locus.gateway.domain.scopes import ProjectScope


def test_a_scope_names_projects_or_a_subsystem_or_a_system() -> None:
    assert not ProjectScope.of([], "", "").given
    assert ProjectScope.of([" shop ", "billing", "shop", ""], "", "").describe() == (
        "projects:shop,billing"
    )
    assert ProjectScope.of([], "orders", "commerce").describe() == "subsystem:commerce/orders"
    assert ProjectScope.of([], "sub_1", "").describe() == "subsystem:sub_1"
    assert ProjectScope.of([], "", "commerce").describe() == "system:commerce"
    with pytest.raises(InvalidRequest):
        ProjectScope.of(["shop"], "", "commerce")
