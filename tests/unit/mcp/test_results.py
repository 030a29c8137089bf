"""The MCP tools' results: every item labelled with its project (the asked project's id where
the gateway's reply leaves it out, names where known), impact per project and never outside the
scope, and the gateway client over TLS only with the stack's three mTLS files."""

from __future__ import annotations

from pathlib import Path

import pytest

from locus.config import CredentialSettings, SettingsError
from locus.mcp.adapters import proto_mapping
from locus.mcp.domain import (
    Citation,
    LocatedFile,
    LocateResult,
    SymbolSummary,
    label_projects,
    unnamed_project_ids,
)
from locus.mcp.main import gateway_tls
from locus.v1 import common_pb2, gateway_pb2, impact_pb2

pytestmark = pytest.mark.unit


def symbol(name: str, project_id: str, path: str) -> common_pb2.Symbol:
    return common_pb2.Symbol(
        node_id=f"n_{name}",
        qualified_name=name,
        name=name,
        kind=common_pb2.SYMBOL_KIND_FUNCTION,
        location=common_pb2.CodeLocation(project_id=project_id, relative_path=path),
    )


def summary(name: str, project_id: str = "") -> SymbolSummary:
    return SymbolSummary(
        project_id=project_id,
        node_id=f"n_{name}",
        qualified_name=name,
        name=name,
        kind="function",
        path=f"src/{name}.py",
        start_line=1,
        end_line=2,
    )


def test_a_one_project_result_is_labelled_with_the_asked_project_everywhere() -> None:
    result = LocateResult(
        request_id="r",
        snapshot_id="s",
        files=[
            LocatedFile(
                path="src/a.py",
                language="python",
                score=1.0,
                symbols=[summary("a", "p_1")],
                evidence=[],
            )
        ],
        symbols=[summary("a", "p_1")],
    )

    assert unnamed_project_ids(result, {}) == {"p_1"}
    label_projects(result, {"p_1": "shop"}, asked_project_id="p_1")

    file = result.files[0]
    assert (file.project_id, file.project) == ("p_1", "shop")  # the reply left the file's out
    assert (file.symbols[0].project_id, file.symbols[0].project) == ("p_1", "shop")
    assert (result.symbols[0].project_id, result.symbols[0].project) == ("p_1", "shop")


def test_names_the_reply_gave_are_kept_and_unknown_ones_stay_empty() -> None:
    cited = [
        Citation(project_id="p_1", project="given", citation_id="C1", path="a", start_line=1,
                 end_line=1),
        Citation(project_id="p_2", citation_id="C2", path="b", start_line=1, end_line=1),
        Citation(project_id="p_3", citation_id="C3", path="c", start_line=1, end_line=1),
    ]  # fmt: skip
    for citation in cited:
        label_projects(citation, {"p_1": "looked-up", "p_2": "orders"})

    assert [(c.project_id, c.project) for c in cited] == [
        ("p_1", "given"),
        ("p_2", "orders"),
        ("p_3", ""),
    ]


def test_a_scoped_impact_is_one_labelled_entry_per_project_and_nothing_outside() -> None:
    reply = gateway_pb2.LocateResponse(
        request_id="r",
        symbols=[
            gateway_pb2.LocatedSymbol(symbol=symbol("parsecs", "p_sky", "src/sky.py"), score=2),
            gateway_pb2.LocatedSymbol(symbol=symbol("order", "p_shop", "src/shop.py"), score=1),
            gateway_pb2.LocatedSymbol(symbol=symbol("tax", "p_other", "src/tax.py"), score=1),
        ],
        projects=[
            gateway_pb2.LocatedProject(
                project_id="p_sky",
                name="telescope",
                snapshot_id="snap_sky",
                impact=impact_pb2.ComputeImpactResponse(
                    symbols=[
                        impact_pb2.ImpactedSymbol(
                            symbol=symbol("report", "p_sky", "src/report.py"),
                            distance=2,
                            reason=[
                                impact_pb2.ImpactStep(
                                    relation=common_pb2.RELATION_KIND_OVERRIDES, reverse=False
                                ),
                                impact_pb2.ImpactStep(
                                    relation=common_pb2.RELATION_KIND_CALLS, reverse=True
                                ),
                            ],
                        )
                    ],
                    files=[impact_pb2.ImpactedFile(relative_path="src/report.py", distance=1)],
                ),
            ),
            gateway_pb2.LocatedProject(
                project_id="p_shop", name="orders", skipped="not scanned yet"
            ),
        ],
    )

    result = proto_mapping.impact_result(reply)
    label_projects(result, proto_mapping.located_project_names(reply))

    sky, shop = result.projects
    assert (sky.project_id, sky.project, sky.snapshot_id) == ("p_sky", "telescope", "snap_sky")
    assert [s.name for s in sky.located] == ["parsecs"]
    assert [(s.symbol.name, s.symbol.project) for s in sky.impacted_symbols] == [
        ("report", "telescope")
    ]
    # How each was reached: through the interface method it implements, then its caller.
    assert sky.impacted_symbols[0].via == ["overrides", "called-by"]
    assert [f.path for f in sky.impacted_files] == ["src/report.py"]
    assert (shop.project, shop.skipped) == ("orders", "not scanned yet")
    assert [s.name for s in shop.located] == ["order"]
    assert "p_other" not in result.model_dump_json()


def test_a_one_project_impact_is_one_entry_for_the_asked_project() -> None:
    reply = gateway_pb2.LocateResponse(
        request_id="r",
        snapshot_id="snap_1",
        symbols=[gateway_pb2.LocatedSymbol(symbol=symbol("charge", "p_1", "src/pay.py"))],
        impact=impact_pb2.ComputeImpactResponse(
            files=[impact_pb2.ImpactedFile(relative_path="src/orders.py", distance=1)]
        ),
    )

    result = proto_mapping.impact_result(reply)
    label_projects(result, {"p_1": "shop"}, asked_project_id="p_1")

    (only,) = result.projects
    assert (only.project_id, only.project, only.snapshot_id) == ("p_1", "shop", "snap_1")
    assert [f.path for f in only.impacted_files] == ["src/orders.py"]


def test_the_gateway_is_called_over_tls_only_with_all_three_mtls_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.pem"

    assert gateway_tls(None) is None
    assert gateway_tls(CredentialSettings(tls_ca_file=missing)) is None  # as for the services
    with pytest.raises(SettingsError, match="cannot read LOCUS_TLS_CERT_FILE"):
        gateway_tls(
            CredentialSettings(tls_cert_file=missing, tls_key_file=missing, tls_ca_file=missing)
        )
