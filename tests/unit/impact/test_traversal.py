"""The impact walk: reason chains, ranking by edge type and distance, boundaries, validation."""

from __future__ import annotations

from typing import Any

import pytest

from locus.impact.domain import (
    CodeGraph,
    ImpactQuery,
    InvalidImpactQuery,
    SeedsNotFound,
    build_graph,
    compute_impact,
    validate_query,
)

pytestmark = pytest.mark.unit


def query(
    *nodes: str,
    files: tuple[str, ...] = (),
    depth: int = 2,
    subsystem: bool = False,
    limit: int = 50,
) -> ImpactQuery:
    return validate_query("p1", [f"n:{n}" for n in nodes], list(files), depth, subsystem, limit)


@pytest.fixture
def chain(parts: Any) -> CodeGraph:
    """app.cli.main → uploads.client.upload → uploads.client.retry → uploads.policy.limit, and a
    subclass of uploads.client.Client in another package."""
    f, s, r = parts.file, parts.symbol, parts.relation
    return build_graph(
        [
            f("policy", "src/uploads/policy.py", "uploads.policy"),
            f("client", "src/uploads/client.py", "uploads.client"),
            f("cli", "src/app/cli.py", "app.cli"),
        ],
        [
            s("uploads.policy.limit", "function", "policy", lines=(7, 12)),
            s("uploads.client.Client", "class", "client"),
            s("uploads.client.upload", "function", "client"),
            s("uploads.client.retry", "function", "client"),
            s("app.cli.main", "function", "cli"),
            s("app.cli.Special", "class", "cli"),
        ],
        [
            r("calls", "app.cli.main", "uploads.client.upload", "cli"),
            r("calls", "uploads.client.upload", "uploads.client.retry", "client"),
            r("calls", "uploads.client.retry", "uploads.policy.limit", "client"),
            r("inherits", "app.cli.Special", "uploads.client.Client", "cli"),
        ],
        [],
    )


def names(result: Any) -> list[str]:
    return [item.symbol.qualified_name for item in result.symbols]


def test_callers_come_with_a_called_by_reason_chain_from_the_seed(chain: CodeGraph) -> None:
    result = compute_impact(chain, query("uploads.policy.limit", depth=3))

    retry, upload, main = result.symbols
    assert [retry.symbol.qualified_name, upload.symbol.qualified_name] == [
        "uploads.client.retry",
        "uploads.client.upload",
    ]
    assert (retry.distance, retry.score) == (1, 1.0)
    assert [(s.relation, s.reverse) for s in main.reason] == [("calls", True)] * 3
    assert [s.label for s in upload.reason] == ["called-by", "called-by"]
    assert [(s.from_node_id, s.to_node_id) for s in upload.reason] == [
        ("n:uploads.policy.limit", "n:uploads.client.retry"),
        ("n:uploads.client.retry", "n:uploads.client.upload"),
    ]


def test_the_score_decays_with_distance_and_depth_bounds_the_walk(chain: CodeGraph) -> None:
    shallow = compute_impact(chain, query("uploads.policy.limit", depth=1))
    deep = compute_impact(chain, query("uploads.policy.limit", depth=3))

    assert names(shallow) == ["uploads.client.retry"]
    scores = [item.score for item in deep.symbols]
    assert scores == sorted(scores, reverse=True)
    assert scores[1] == pytest.approx(0.7)
    assert scores[2] == pytest.approx(0.49)


def test_callers_outrank_callees(chain: CodeGraph) -> None:
    result = compute_impact(chain, query("uploads.client.retry", depth=1))

    assert names(result) == ["uploads.client.upload", "uploads.policy.limit"]
    caller, callee = result.symbols
    assert caller.score > callee.score
    assert [s.label for s in callee.reason] == ["calls"]


def test_subclasses_are_impacted_through_inherited_by(chain: CodeGraph) -> None:
    result = compute_impact(chain, query("uploads.client.Client", depth=1))

    assert names(result) == ["app.cli.Special"]
    assert [s.label for s in result.symbols[0].reason] == ["inherited-by"]


def test_stay_in_subsystem_keeps_to_the_seeds_top_level_package(chain: CodeGraph) -> None:
    everywhere = compute_impact(chain, query("uploads.client.upload", depth=2))
    inside = compute_impact(chain, query("uploads.client.upload", depth=2, subsystem=True))

    assert "app.cli.main" in names(everywhere)
    assert names(inside) == ["uploads.client.retry", "uploads.policy.limit"]


def test_a_node_keeps_its_best_scoring_path_even_when_it_is_longer(parts: Any) -> None:
    f, s, r = parts.file, parts.symbol, parts.relation
    graph = build_graph(
        [f("m", "m.py", "m")],
        [s("m.seed", "function", "m"), s("m.middle", "function", "m"), s("m.t", "function", "m")],
        [
            r("calls", "m.seed", "m.t", "m"),  # t is a callee of the seed: weak
            r("calls", "m.middle", "m.seed", "m"),  # middle calls the seed ...
            r("calls", "m.t", "m.middle", "m"),  # ... and t calls middle: caller of a caller
        ],
        [],
    )

    result = compute_impact(graph, query("m.seed", depth=2))

    t = next(item for item in result.symbols if item.symbol.qualified_name == "m.t")
    assert (t.distance, t.score) == (2, pytest.approx(0.7))
    assert [s.label for s in t.reason] == ["called-by", "called-by"]


def test_cycles_do_not_repeat_nodes_or_reach_back_to_the_seed(parts: Any) -> None:
    f, s, r = parts.file, parts.symbol, parts.relation
    graph = build_graph(
        [f("m", "m.py", "m")],
        [s("m.ping", "function", "m"), s("m.pong", "function", "m")],
        [r("calls", "m.ping", "m.pong", "m"), r("calls", "m.pong", "m.ping", "m")],
        [],
    )

    result = compute_impact(graph, query("m.ping", depth=5))

    assert names(result) == ["m.pong"]
    assert result.symbols[0].distance == 1


def test_file_seeds_expand_to_their_symbols_and_impacted_files_are_ranked(
    chain: CodeGraph,
) -> None:
    result = compute_impact(chain, query(files=("policy",), depth=3))

    assert "uploads.policy.limit" not in names(result)
    assert [(f.file.file_id, f.distance) for f in result.files] == [("client", 1), ("cli", 3)]
    assert result.files[0].score == pytest.approx(1.0)
    assert [s.label for s in result.files[1].reason] == ["called-by"] * 3


def test_unknown_seeds_are_listed_and_ignored_when_some_are_known(chain: CodeGraph) -> None:
    q = validate_query("p1", ["n:uploads.policy.limit", "n:nope"], ["gone"], 1, False, 0)

    result = compute_impact(chain, q)

    assert names(result) == ["uploads.client.retry"]
    assert result.unknown_seed_node_ids == ("n:nope",)
    assert result.unknown_seed_file_ids == ("gone",)


def test_only_unknown_seeds_is_not_found(chain: CodeGraph) -> None:
    with pytest.raises(SeedsNotFound, match="n:nope"):
        compute_impact(chain, validate_query("p1", ["n:nope"], [], 2, False, 0))


def test_limit_keeps_the_best_ranked(chain: CodeGraph) -> None:
    result = compute_impact(chain, query("uploads.policy.limit", depth=3, limit=1))

    assert names(result) == ["uploads.client.retry"]


@pytest.mark.parametrize(
    ("project", "nodes", "files", "depth", "limit", "message"),
    [
        ("", ["n"], [], 2, 0, "project_id"),
        ("  ", ["n"], [], 2, 0, "project_id"),
        ("p", [], [], 2, 0, "at least one seed"),
        ("p", [""], [""], 2, 0, "at least one seed"),
        ("p", ["n"], [], -1, 0, "depth"),
        ("p", ["n"], [], 6, 0, "depth"),
        ("p", ["n"], [], 2, -3, "limit"),
    ],
)
def test_invalid_queries_are_refused(
    project: str, nodes: list[str], files: list[str], depth: int, limit: int, message: str
) -> None:
    with pytest.raises(InvalidImpactQuery, match=message):
        validate_query(project, nodes, files, depth, False, limit)


def test_defaults_apply_for_zero_depth_and_limit_and_the_limit_is_capped() -> None:
    q = validate_query("p", ["a", "a", "b"], ["f"], 0, True, 0)
    capped = validate_query("p", ["a"], [], 5, False, 10**6)

    assert (q.depth, q.limit, q.seed_node_ids) == (2, 50, ("a", "b"))
    assert (capped.depth, capped.limit) == (5, 1000)


@pytest.mark.parametrize("seed", range(8))
def test_a_small_limit_shows_exactly_the_head_of_the_full_ranking(parts: Any, seed: int) -> None:
    """The walk skips paths that can no longer reach the shown results (hubs with hundreds of
    callers): what a limit shows is exactly the first entries of the unlimited ranking, symbols
    and files alike, reason chains included."""
    import random

    rng = random.Random(seed)
    f, s, r = parts.file, parts.symbol, parts.relation
    files = [f(f"f{i}", f"src/pkg/m{i}.py", f"pkg.m{i}") for i in range(30)]
    # Most symbols in a few big files: the files' ranking then reaches further down than the
    # symbols' one, and must still be exact.
    home = {f"s{i}": f"f{i % 3}" if i % 5 else f"f{3 + i % 27}" for i in range(150)}
    names = [f"pkg.{home[key]}.{key}" for key in home]
    symbols = [s(name, "function", home[name.rsplit(".", 1)[1]]) for name in names]
    hubs = names[:3]  # called by many, like a base class or a core helper
    kinds = ("calls", "calls", "inherits", "imports", "references", "contains")

    def file_of(name: str) -> str:
        return home[name.rsplit(".", 1)[1]]

    relations = [
        r(rng.choice(kinds), caller, rng.choice(hubs), file_of(caller))
        for caller in rng.sample(names, 100)
    ] + [
        r(rng.choice(kinds), a, b, file_of(a))
        for a, b in (rng.sample(names, 2) for _ in range(400))
    ]
    graph = build_graph(files, symbols, relations, [])
    seeds = [*rng.sample(names, 3), hubs[0]]
    for depth in (1, 2, 3):
        everything = compute_impact(graph, query(*seeds, depth=depth, limit=1000))
        for limit in (1, 3, 10, 25):
            shown = compute_impact(graph, query(*seeds, depth=depth, limit=limit))
            assert shown.symbols == everything.symbols[:limit]
            assert shown.files == everything.files[:limit]


@pytest.mark.parametrize("seed", range(6))
def test_a_small_limit_shows_the_head_of_what_a_large_limit_shows(parts: Any, seed: int) -> None:
    """On a random graph with many equal scores, the ``limit`` best symbols and files are the
    first ``limit`` of the complete ranking, ties broken the same way (score, distance, name)."""
    import random

    rng = random.Random(seed)
    f, s, r = parts.file, parts.symbol, parts.relation
    files = [f(f"f{i}", f"src/m{i}.py", f"m{i}") for i in range(30)]
    symbols = [
        s(f"m{i % 30}.fn{i}", rng.choice(["function", "class"]), f"f{i % 30}") for i in range(300)
    ]
    names = [symbol.qualified_name for symbol in symbols]
    relations = [
        r(rng.choice(["calls", "inherits", "references"]), a, b, f"f{names.index(a) % 30}")
        for a, b in (rng.sample(names, 2) for _ in range(900))
    ]
    graph = build_graph(files, symbols, relations, [])
    seeds = rng.sample(names, 3)
    everything = compute_impact(graph, query(*seeds, limit=10_000))
    assert len(everything.symbols) > 40
    for limit in (1, 5, 20):
        shown = compute_impact(graph, query(*seeds, limit=limit))
        assert shown.symbols == everything.symbols[:limit]
        assert shown.files == everything.files[:limit]


def test_callers_through_an_interface_reach_its_implementations(parts: Any) -> None:
    """`service.store()` calls `repo.save()` on a `Repo`: a change to `SqlRepo.save` (the
    implementation) reaches it through the interface's signature, and a change to the
    signature reaches every implementation."""
    files = [parts.file("a", "A.java", "A.java")]
    symbols = [
        parts.symbol("acme.Repo", "interface", "a"),
        parts.symbol("acme.Repo.save", "signature", "a", parent="acme.Repo"),
        parts.symbol("acme.SqlRepo", "class", "a"),
        parts.symbol("acme.SqlRepo.save", "method", "a", parent="acme.SqlRepo"),
        parts.symbol("acme.Service.store", "method", "a"),
    ]
    relations = [
        parts.relation("inherits", "acme.SqlRepo", "acme.Repo", "a"),
        parts.relation("calls", "acme.Service.store", "acme.Repo.save", "a"),
    ]
    graph = build_graph(files, symbols, relations, [])

    result = compute_impact(graph, validate_query("p", ["n:acme.SqlRepo.save"], [], 2, False, 0))

    reached = {s.symbol.qualified_name: s for s in result.symbols}
    caller = reached["acme.Service.store"]
    assert caller.distance == 2
    assert [step.label for step in caller.reason] == ["overrides", "called-by"]
    assert reached["acme.Repo.save"].reason[0].label == "overrides"

    declared = compute_impact(graph, validate_query("p", ["n:acme.Repo.save"], [], 1, False, 0))
    implementation = {s.symbol.qualified_name: s for s in declared.symbols}["acme.SqlRepo.save"]
    assert [step.label for step in implementation.reason] == ["overridden-by"]


def test_a_walk_without_signatures_keeps_to_definitions(parts: Any) -> None:
    """Locate's graph hop: no signature or type alias is reached and no overrides hop is
    taken, so an interface's declarations neither become candidates nor use up the limit."""
    graph = build_graph(
        [parts.file("m", "m.py", "m")],
        [
            parts.symbol("m.Repo", "interface", "m"),
            parts.symbol("m.Repo.save", "signature", "m", parent="m.Repo"),
            parts.symbol("m.SqlRepo", "class", "m"),
            parts.symbol("m.SqlRepo.save", "method", "m", parent="m.SqlRepo"),
            parts.symbol("m.service", "function", "m"),
            parts.symbol("m.RepoId", "type_alias", "m"),
        ],
        [
            parts.relation("inherits", "m.SqlRepo", "m.Repo", "m"),
            parts.relation("calls", "m.service", "m.Repo.save", "m"),
            parts.relation("calls", "m.service", "m.SqlRepo.save", "m"),
            parts.relation("calls", "m.SqlRepo.save", "m.RepoId", "m"),  # a C++ `RepoId(x)`
        ],
        [],
    )

    walked = compute_impact(graph, query("m.SqlRepo.save", depth=2))
    assert {s.symbol.node_id for s in walked.symbols} >= {
        "n:m.Repo.save",
        "n:m.service",
        "n:m.RepoId",
    }
    kept = compute_impact(
        graph,
        validate_query("p1", ["n:m.SqlRepo.save"], [], 2, False, 0, without_signatures=True),
    )
    assert not {"n:m.Repo.save", "n:m.RepoId"} & {s.symbol.node_id for s in kept.symbols}
    assert "n:m.service" in {s.symbol.node_id for s in kept.symbols}
    assert all(step.relation != "overrides" for s in kept.symbols for step in s.reason)
