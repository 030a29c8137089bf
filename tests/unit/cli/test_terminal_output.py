"""Text output: locations a terminal can open, scores and evidence, server text never read as
markup."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from locus.cli.terminal_output import (
    nothing_found_hint,
    print_located,
    print_node,
    symbols_table,
)
from locus.v1 import ast_pb2, common_pb2, gateway_pb2, impact_pb2

pytestmark = pytest.mark.unit


def recording_console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200, color_system=None, highlight=False), buffer


def a_symbol(name: str, path: str, start: int, end: int) -> common_pb2.Symbol:
    return common_pb2.Symbol(
        name=name.rsplit(".", 1)[-1],
        qualified_name=name,
        kind=common_pb2.SYMBOL_KIND_METHOD,
        location=common_pb2.CodeLocation(relative_path=path, start_line=start, end_line=end),
    )


def test_located_files_symbols_evidence_and_impact() -> None:
    dead_letter = a_symbol("bus.EventBus._dead_letter", "libs/bus.py", 239, 267)
    located = gateway_pb2.LocatedSymbol(
        symbol=dead_letter,
        score=0.8123,
        evidence=[gateway_pb2.Evidence(signal="bm25", detail="[dlq] rank 1")],
    )
    reply = gateway_pb2.LocateResponse(
        snapshot_id="snap_1",
        files=[
            gateway_pb2.LocatedFile(
                relative_path="libs/bus.py", language="python", score=1.5, symbols=[located]
            )
        ],
        symbols=[located],
        impact=impact_pb2.ComputeImpactResponse(
            symbols=[
                impact_pb2.ImpactedSymbol(
                    symbol=a_symbol("bus.EventBus._consume", "libs/bus.py", 159, 237),
                    distance=1,
                    score=0.5,
                )
            ]
        ),
    )
    console, buffer = recording_console()
    print_located(console, reply)
    text = buffer.getvalue()
    assert " 1. libs/bus.py 1.500 python" in text
    assert "libs/bus.py:239-267  bus.EventBus._dead_letter method 0.812" in text
    assert "bm25 ([dlq] rank 1)" in text
    assert "impact (1 symbols, 0 files" in text
    assert "libs/bus.py:159-237  bus.EventBus._consume distance 1" in text


def test_a_scoped_answer_shows_each_files_project() -> None:
    reply = gateway_pb2.LocateResponse(
        files=[
            gateway_pb2.LocatedFile(
                relative_path="src/tax.py", score=0.9, project_id="p_2", project_name="invoices"
            )
        ],
        projects=[
            gateway_pb2.LocatedProject(project_id="p_2", name="invoices", files=1),
            gateway_pb2.LocatedProject(project_id="p_3", name="telescope", skipped="not scanned"),
        ],
    )
    console, buffer = recording_console()
    print_located(console, reply)
    text = buffer.getvalue()
    assert "files (invoices 1 files, telescope skipped: not scanned)" in text
    assert " 1. [invoices] src/tax.py 0.900" in text


def test_one_projects_answer_does_not_repeat_its_name_on_every_file() -> None:
    reply = gateway_pb2.LocateResponse(
        snapshot_id="s_1",
        files=[
            gateway_pb2.LocatedFile(
                relative_path="src/tax.py", score=0.9, project_id="p_2", project_name="invoices"
            )
        ],
    )
    console, buffer = recording_console()
    print_located(console, reply)
    assert " 1. src/tax.py 0.900" in buffer.getvalue()


def test_nothing_located_says_what_to_check() -> None:
    console, buffer = recording_console()
    print_located(console, gateway_pb2.LocateResponse())
    assert "locus scan" in buffer.getvalue()


def test_symbols_table_shows_clickable_locations() -> None:
    console, buffer = recording_console()
    console.print(symbols_table([a_symbol("uploads.policy.[x]", "uploads/policy.py", 7, 12)]))
    text = buffer.getvalue()
    assert "uploads/policy.py:7-12" in text
    assert "uploads.policy.[x]" in text


def test_an_empty_answer_names_the_path_filter_before_the_scan() -> None:
    assert nothing_found_hint("nothing located", "shop") == (
        "nothing located; is shop scanned? (locus scan shop --wait)"
    )
    filtered = nothing_found_hint("nothing located", "shop", "/etc")
    assert filtered.startswith("nothing located under '/etc' (a path relative to the source root)")
    assert nothing_found_hint("no chunk matches 'x'", "").endswith("(locus scan PROJECT --wait)")
    scanned = nothing_found_hint("no symbol matches 'x'", "shop", scanned=True)
    assert scanned.startswith("no symbol matches 'x' in shop, which is scanned; try part of")
    assert "locus scan" not in scanned


def test_a_symbol_shows_its_three_strongest_pieces_of_evidence() -> None:
    located = gateway_pb2.LocatedSymbol(
        symbol=a_symbol("rack.QueryParser._normalize_params", "lib/rack/query_parser.rb", 9, 40),
        score=1.0,
        evidence=[
            gateway_pb2.Evidence(signal="member", detail="of QueryParser", weight=0.11),
            gateway_pb2.Evidence(signal="bm25", detail="rank 4", weight=0.4),
            gateway_pb2.Evidence(signal="stacktrace", detail="frame 1", weight=1.5),
            gateway_pb2.Evidence(signal="file", detail="named", weight=2.9),
        ],
    )
    console, buffer = recording_console()
    print_located(
        console,
        gateway_pb2.LocateResponse(
            files=[
                gateway_pb2.LocatedFile(
                    relative_path="lib/rack/query_parser.rb", score=1.0, symbols=[located]
                )
            ],
            symbols=[located],
        ),
    )
    text = buffer.getvalue()
    assert "file (named); stacktrace (frame 1); bm25 (rank 4)" in text
    assert "member" not in text


def test_a_node_shows_an_unresolved_call_as_the_code_writes_it() -> None:
    render = a_symbol("com.acme.renderText", "src/render.kt", 3, 10)
    reply = ast_pb2.GetNodeResponse(
        symbol=render,
        outgoing=[
            common_pb2.Relation(
                kind=common_pb2.RELATION_KIND_CALLS,
                target_name="cells",
                target_qualified_name="com.acme.Table.cells",
                target_node_id="n_cells",
                line=4,
            ),
            common_pb2.Relation(
                kind=common_pb2.RELATION_KIND_CALLS,
                target_name="positionedCells.associate",
                target_qualified_name="com.acme.positionedCells.associate",  # a guess
                line=5,
            ),
        ],
    )
    console, buffer = recording_console()
    print_node(console, reply)
    text = buffer.getvalue()
    assert "calls com.acme.Table.cells line 4" in text
    assert "calls positionedCells.associate (unresolved) line 5" in text
    assert "com.acme.positionedCells" not in text
