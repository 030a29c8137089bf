"""Java and Go through the whole stack (`locus up`, real processes): a Maven module and a Go
module are scanned, and `locus symbols`, `locus locate`, the gateway's GetAstNode and impact
answer in each language's own terms — qualified names as its developers write them, methods and
constructors instead of line windows, calls resolved across files and packages."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from locus_up import run_locus as run_command
from locus_up import start_locus_up, stop_locus_up

from locus.rpc.bearer import bearer_interceptors
from locus.v1 import ast_pb2, common_pb2, gateway_pb2_grpc

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "polyglot"
JAVA_PACKAGE = "com.acme.inventory"
GO_PACKAGE = "github.com/acme/pricing/discount"


def run_locus(environment: dict[str, str], *arguments: str) -> Any:
    """The command's output (parsed with --json); it must succeed."""
    result = run_command(environment, *arguments, timeout=300)
    assert result.returncode == 0, f"locus {arguments}: {result.stdout}\n{result.stderr}"
    return json.loads(result.stdout) if "--json" in arguments else result.stdout


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("polyglot")
    repository = root / "allowed" / "polyglot"
    shutil.copytree(FIXTURE, repository)
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment |= {
        "LOCUS_HOME": str(root / "home"),
        "LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": "false",
    }
    process = start_locus_up(root, root / "allowed", environment)
    try:
        run_locus(environment, "project", "create", "polyglot")
        run_locus(environment, "source", "add", "polyglot", str(repository))
        job = run_locus(environment, "scan", "polyglot", "--wait", "--json")
        assert job["state"] == "completed", job
        state = json.loads((root / "data" / "stack.json").read_text())
        environment["GATEWAY"] = state["gateway_addr"]
        environment["GATEWAY_KEY"] = Path(state["admin_key_file"]).read_text().strip()
        yield environment
    finally:
        stop_locus_up(process)


def symbols(environment: dict[str, str], query: str, *options: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = run_locus(
        environment, "symbols", "polyglot", query, "--json", *options
    )["symbols"]
    return found


def one(found: list[dict[str, Any]], qualified_name: str) -> dict[str, Any]:
    matches = [s for s in found if s["qualified_name"] == qualified_name]
    assert len(matches) == 1, [s["qualified_name"] for s in found]
    return matches[0]


def test_symbols_read_as_java_and_go_developers_write_them(scanned: dict[str, str]) -> None:
    repository = one(symbols(scanned, "StockRepository"), f"{JAVA_PACKAGE}.StockRepository")
    assert repository["kind"] == "interface"
    assert repository["path"].endswith("com/acme/inventory/StockRepository.java")
    assert "concurrent reservations" in repository["docstring"]

    nested = one(
        symbols(scanned, "Reservation", "--kind", "class"),
        f"{JAVA_PACKAGE}.ReservationService.Reservation",
    )
    assert nested["scope_name"] == "ReservationService.Reservation"
    constructors = symbols(scanned, "InMemoryStockRepository", "--kind", "constructor")
    assert [s["scope_name"] for s in constructors] == [
        "InMemoryStockRepository.InMemoryStockRepository"
    ]

    apply = one(symbols(scanned, "Apply", "--kind", "method"), f"{GO_PACKAGE}.PercentRule.Apply")
    assert apply["path"] == "pricing/discount/discount.go"
    assert apply["parent_qualified_name"] == f"{GO_PACKAGE}.PercentRule"
    assert apply["docstring"].startswith("Apply returns the reduced price")
    assert one(symbols(scanned, "Rule", "--kind", "interface"), f"{GO_PACKAGE}.Rule")
    assert one(symbols(scanned, "PercentRule", "--kind", "struct"), f"{GO_PACKAGE}.PercentRule")

    # As pasted from a panic, a Javadoc link or a JVM class name.
    assert one(symbols(scanned, "(*PercentRule).Apply"), f"{GO_PACKAGE}.PercentRule.Apply")
    assert one(
        symbols(scanned, "ReservationService#reserveForOrder"),
        f"{JAVA_PACKAGE}.ReservationService.reserveForOrder",
    )
    assert one(
        symbols(scanned, f"{JAVA_PACKAGE}.ReservationService$Reservation", "--exact"),
        f"{JAVA_PACKAGE}.ReservationService.Reservation",
    )


def test_locate_answers_with_java_methods_not_line_windows(scanned: dict[str, str]) -> None:
    reply = run_locus(
        scanned,
        "locate",
        "polyglot",
        "IllegalArgumentException: quantity must be positive, got -3 when reserving stock "
        "for an order (ReservationService.reserveForOrder)",
        "--json",
    )
    paths = [f["path"] for f in reply["files"]]
    assert paths[0].endswith(("Quantities.java", "ReservationService.java")), paths
    located = {s["qualified_name"]: s for s in reply["symbols"]}
    assert f"{JAVA_PACKAGE}.Quantities.requirePositive" in located, list(located)
    assert f"{JAVA_PACKAGE}.ReservationService.reserveForOrder" in located, list(located)
    assert located[f"{JAVA_PACKAGE}.Quantities.requirePositive"]["kind"] == "method"


def test_locate_answers_with_go_functions(scanned: dict[str, str]) -> None:
    reply = run_locus(
        scanned,
        "locate",
        "polyglot",
        "discount.Best returns the full price with ErrNoRule even though a PercentRule applies",
        "--json",
    )
    assert reply["files"][0]["path"] == "pricing/discount/discount.go", reply["files"]
    names = [s["qualified_name"] for s in reply["symbols"][:5]]
    assert f"{GO_PACKAGE}.Best" in names, names


async def test_ast_nodes_and_impact_follow_calls_across_files_and_packages(
    scanned: dict[str, str],
) -> None:
    require_positive = one(
        symbols(scanned, "requirePositive"), f"{JAVA_PACKAGE}.Quantities.requirePositive"
    )
    best = one(symbols(scanned, "Best", "--kind", "function"), f"{GO_PACKAGE}.Best")
    async with grpc.aio.insecure_channel(
        scanned["GATEWAY"], interceptors=bearer_interceptors(scanned["GATEWAY_KEY"])
    ) as channel:
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        for symbol, caller in (
            (require_positive, f"{JAVA_PACKAGE}.ReservationService.reserveForOrder"),
            (require_positive, f"{JAVA_PACKAGE}.InMemoryStockRepository.reserve"),
            (best, "github.com/acme/pricing/cmd/quote.main"),
        ):
            node = await gateway.GetAstNode(
                ast_pb2.GetNodeRequest(node_id=symbol["node_id"], include_relations=True)
            )
            assert node.symbol.qualified_name == symbol["qualified_name"]
            callers = {
                r.source_qualified_name
                for r in node.incoming
                if r.kind == common_pb2.RELATION_KIND_CALLS
            }
            assert caller in callers, (symbol["qualified_name"], callers)

    reply = run_locus(
        scanned,
        "locate",
        "polyglot",
        "Quantities.requirePositive rejects a valid quantity",
        "--json",
    )
    # Impact reaches the callers' classes in other files (Locate lists the callers themselves
    # among its symbols), and the module symbols are named below the Maven source root.
    impacted = {s["qualified_name"] for s in reply["impact"]["symbols"]}
    assert {
        f"{JAVA_PACKAGE}.ReservationService",
        f"{JAVA_PACKAGE}.InMemoryStockRepository",
        "com/acme/inventory/ReservationService.java",
    } <= impacted, sorted(impacted)


def test_locus_impact_lists_a_symbols_callers_in_other_files(scanned: dict[str, str]) -> None:
    reply = run_locus(scanned, "impact", "polyglot", "Quantities#requirePositive", "--json")
    assert len(reply["seeds"]) == 1
    impacted = {s["qualified_name"]: s for s in reply["symbols"]}
    for caller in ("ReservationService.reserveForOrder", "InMemoryStockRepository.reserve"):
        assert impacted[f"{JAVA_PACKAGE}.{caller}"]["distance"] == 1, sorted(impacted)
    assert any(f["path"].endswith("ReservationService.java") for f in reply["files"])
    go = run_locus(scanned, "impact", "polyglot", f"{GO_PACKAGE}.Best", "--json")
    assert "github.com/acme/pricing/cmd/quote.main" in {s["qualified_name"] for s in go["symbols"]}
    near = run_command(scanned, "impact", "polyglot", "requirePositiv", timeout=300)
    assert near.returncode == 2, near.stdout + near.stderr
    assert f"did you mean {JAVA_PACKAGE}.Quantities.requirePositive" in " ".join(
        (near.stdout + near.stderr).split()
    )


def test_calls_through_an_interface_reach_its_implementations(scanned: dict[str, str]) -> None:
    """`ReservationService` calls `repository.reserve(...)` on a `StockRepository` (the
    interface): the interface's method is a symbol (a signature), and the impact of the
    implementation reaches that caller through it."""
    found = symbols(scanned, "reserve")
    kinds = {s["qualified_name"]: s["kind"] for s in found}
    kinds_ids = {s["qualified_name"]: s["node_id"] for s in found}
    assert kinds[f"{JAVA_PACKAGE}.StockRepository.reserve"] == "signature"
    assert kinds[f"{JAVA_PACKAGE}.InMemoryStockRepository.reserve"] == "method"
    reply = run_locus(scanned, "impact", "polyglot", "InMemoryStockRepository.reserve", "--json")
    impacted = {s["qualified_name"]: s for s in reply["symbols"]}
    declared = impacted[f"{JAVA_PACKAGE}.StockRepository.reserve"]
    assert (declared["distance"], declared["reason"]) == (
        1,
        [{"relation": "overrides", "reverse": False}],
    )
    caller = impacted[f"{JAVA_PACKAGE}.ReservationService.reserveForOrder"]
    assert caller["reason"] == [
        {"relation": "overrides", "reverse": False},
        {"relation": "calls", "reverse": True},
    ]
    # A bare `reserve` names the implementation (and the interface's signature): the
    # implementation is meant, not an ambiguity.
    bare = run_locus(scanned, "impact", "polyglot", "reserve", "--json")
    assert bare["seeds"] == [kinds_ids[f"{JAVA_PACKAGE}.InMemoryStockRepository.reserve"]]
    text = run_command(
        scanned, "impact", "polyglot", "InMemoryStockRepository.reserve", timeout=300
    )
    assert "overrides, called by" in " ".join(text.stdout.split()), text.stdout
    # A Go interface's method is a signature beside the method that implements it.
    go = {s["qualified_name"]: s["kind"] for s in symbols(scanned, "Apply")}
    assert go[f"{GO_PACKAGE}.Rule.Apply"] == "signature"
    assert go[f"{GO_PACKAGE}.PercentRule.Apply"] == "method"
    # PercentRule has Rule's methods: it implements Rule, undeclared, as Go reads it.
    go_impact = run_locus(scanned, "impact", "polyglot", "PercentRule.Apply", "--json")
    reached = {s["qualified_name"]: s for s in go_impact["symbols"]}
    assert reached[f"{GO_PACKAGE}.Rule.Apply"]["reason"] == [
        {"relation": "overrides", "reverse": False}
    ]


def test_a_c_prototype_is_a_signature_its_definitions_impact_reaches(
    scanned: dict[str, str],
) -> None:
    """A header declares `checksum_adler32` (documented there), `src/adler32.c` defines it,
    `src/verify.c` calls it through the header: both are symbols, a bare name takes the
    definition, and its impact lists the prototype (overrides) beside the caller."""
    found = {(s["kind"], s["path"]): s for s in symbols(scanned, "checksum_adler32")}
    prototype = found[("signature", "checksum/include/checksum.h")]
    assert prototype["qualified_name"] == "checksum_adler32"
    assert prototype["docstring"].startswith("Adler-32 of `size` bytes at `data`")
    definition = found[("function", "checksum/src/adler32.c")]
    reply = run_locus(scanned, "impact", "polyglot", "checksum_adler32", "--json")
    assert reply["seeds"] == [definition["node_id"]]
    impacted = {(s["qualified_name"], s["path"]): s for s in reply["symbols"]}
    declared = impacted[("checksum_adler32", "checksum/include/checksum.h")]
    assert declared["reason"] == [{"relation": "overrides", "reverse": False}]
    callers = [s for s in reply["symbols"] if s["qualified_name"] == "checksum_verify"]
    assert [s["reason"][-1] for s in callers] == [{"relation": "calls", "reverse": True}]
