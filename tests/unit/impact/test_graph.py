"""Building the graph: resolution of relation targets, containment, file dependencies."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from locus.impact.domain import CodeGraph, GraphFile, GraphSymbol, build_graph, subsystem_for

pytestmark = pytest.mark.unit

Files = list[GraphFile]
Symbols = list[GraphSymbol]


def test_unresolved_targets_resolve_by_qualified_name_against_the_projects_symbols(
    parts: Any, uploads_files: Files, uploads_symbols: Symbols
) -> None:
    call = parts.relation(
        "calls",
        "uploads.client.UploadClient.upload",
        "uploads.policy.enforce_retry_limit",
        "client",
    )

    graph = build_graph(uploads_files, uploads_symbols, [call], [])

    assert ("calls", "n:uploads.policy.enforce_retry_limit") in graph.outgoing[
        "n:uploads.client.UploadClient.upload"
    ]
    assert ("calls", "n:uploads.client.UploadClient.upload") in graph.incoming[
        "n:uploads.policy.enforce_retry_limit"
    ]
    assert graph.unresolved_relations == 0


def test_a_target_node_id_that_no_longer_exists_falls_back_to_the_qualified_name(
    parts: Any, uploads_files: Files, uploads_symbols: Symbols
) -> None:
    stale = parts.relation(
        "calls",
        "uploads.client.UploadClient.upload",
        "uploads.policy.enforce_retry_limit",
        "client",
        target_node_id="n:deleted-long-ago",
    )

    graph = build_graph(uploads_files, uploads_symbols, [stale], [])

    assert graph.outgoing["n:uploads.client.UploadClient.upload"] == [
        ("calls", "n:uploads.policy.enforce_retry_limit")
    ]


def test_a_name_defined_twice_gives_the_same_edges_whichever_file_was_parsed_first(
    parts: Any, uploads_files: Files, uploads_symbols: Symbols
) -> None:
    # `uploads.policy.enforce_retry_limit` is also defined by a second file of the same module
    # name (two scripts directories): ast publishes the definition it found when the caller
    # was parsed — the first file's, or none when the caller came first.
    twin_file = parts.file("twin", "scripts/uploads/policy.py", "uploads.policy")
    original = next(s for s in uploads_symbols if s.qualified_name.endswith("retry_limit"))
    twin = dataclasses.replace(original, node_id="n:twin-definition", file_id="twin")

    def graph_with(published: str) -> CodeGraph:
        call = parts.relation(
            "calls",
            "uploads.client.UploadClient.upload",
            "uploads.policy.enforce_retry_limit",
            "client",
            target_node_id=published,
        )
        return build_graph([*uploads_files, twin_file], [*uploads_symbols, twin], [call], [])

    callees = [
        sorted(graph_with(published).outgoing["n:uploads.client.UploadClient.upload"])
        for published in ("", original.node_id, twin.node_id)
    ]
    assert callees[0] == sorted([("calls", original.node_id), ("calls", twin.node_id)])
    assert callees[1] == callees[0]
    assert callees[2] == callees[0]


def test_targets_outside_the_project_stay_unresolved_and_add_no_edge(
    parts: Any, uploads_files: Files, uploads_symbols: Symbols
) -> None:
    call = parts.relation(
        "calls", "uploads.client.UploadClient.upload", "os.path.getsize", "client"
    )

    graph = build_graph(uploads_files, uploads_symbols, [call], [])

    assert "n:uploads.client.UploadClient.upload" not in graph.outgoing
    assert graph.unresolved_relations == 1


def test_names_re_exported_by_a_package_resolve_to_their_definition(
    parts: Any, uploads_files: Files, uploads_symbols: Symbols
) -> None:
    graph = build_graph(
        [*uploads_files, parts.file("app", "src/app/main.py", "app.main")],
        [
            *uploads_symbols,
            parts.symbol("app.main", "module", "app"),
            parts.symbol("app.main.run", "function", "app"),
        ],
        [
            parts.relation("imports", "uploads", "uploads.client.UploadClient", "init"),
            parts.relation("calls", "app.main.run", "uploads.UploadClient.upload", "app"),
        ],
        [],
    )

    assert graph.outgoing["n:app.main.run"] == [("calls", "n:uploads.client.UploadClient.upload")]


def barrel_workspace(parts: Any, *extra_relations: Any) -> CodeGraph:
    """`@acme/ui`'s index.ts re-exports every name of `./button` and `./card`
    (`export * from`); `@acme/app`'s main calls `Card` as imported from `@acme/ui`."""

    def wildcard(source: str, target: str, written: str, file_id: str) -> Any:
        star = parts.relation("imports", source, target, file_id)
        return dataclasses.replace(star, target_name=f"{written}.*")

    return build_graph(
        [
            parts.file("index", "packages/ui/src/index.ts", "@acme/ui"),
            parts.file("button", "packages/ui/src/button.ts", "@acme/ui/src/button"),
            parts.file("card", "packages/ui/src/card.ts", "@acme/ui/src/card"),
            parts.file("main", "packages/app/src/main.ts", "@acme/app"),
        ],
        [
            parts.symbol("@acme/ui", "module", "index"),
            parts.symbol("@acme/ui/src/button", "module", "button"),
            parts.symbol("@acme/ui/src/button.Button", "class", "button"),
            parts.symbol("@acme/ui/src/card", "module", "card"),
            parts.symbol("@acme/ui/src/card.Card", "class", "card"),
            parts.symbol("@acme/ui/src/card.Card.render", "method", "card"),
            parts.symbol("@acme/app", "module", "main"),
            parts.symbol("@acme/app.main", "function", "main"),
        ],
        [
            wildcard("@acme/ui", "@acme/ui/src/button", "./button", "index"),
            wildcard("@acme/ui", "@acme/ui/src/card", "./card", "index"),
            parts.relation("calls", "@acme/app.main", "@acme/ui.Card", "main"),
            parts.relation("calls", "@acme/app.main", "@acme/ui.Card.render", "main"),
            *extra_relations,
        ],
        [],
    )


def test_names_a_barrel_re_exports_with_a_wildcard_resolve_to_their_definition(
    parts: Any,
) -> None:
    graph = barrel_workspace(parts)

    assert sorted(graph.outgoing["n:@acme/app.main"]) == [
        ("calls", "n:@acme/ui/src/card.Card"),
        ("calls", "n:@acme/ui/src/card.Card.render"),
    ]
    assert graph.incoming["n:@acme/ui/src/card.Card.render"] == [("calls", "n:@acme/app.main")]
    assert graph.unresolved_relations == 0


def test_wildcard_re_exports_that_import_each_other_end(parts: Any) -> None:
    # button.ts also re-exports everything of the barrel: a name neither defines is looked
    # up around the cycle a bounded number of times and stays unresolved.
    back = dataclasses.replace(
        parts.relation("imports", "@acme/ui/src/button", "@acme/ui", "button"),
        target_name="..*",
    )
    missing = parts.relation("calls", "@acme/app.main", "@acme/ui.Missing", "main")
    graph = barrel_workspace(parts, back, missing)

    assert ("calls", "n:@acme/ui/src/card.Card") in graph.outgoing["n:@acme/app.main"]
    assert graph.unresolved_relations == 1


def test_csharp_names_resolve_through_using_enclosing_and_global_namespaces(
    parts: Any,
) -> None:
    """`Program.cs` (namespace Acme.App.Cli, `using Acme.Billing;`) writes `new Invoice()`,
    `Guard.Check()` and `Settings.Load()`; the file alone qualifies each by its namespace."""

    def csharp(file_id: str, path: str) -> Any:
        return dataclasses.replace(parts.file(file_id, path, path), language="csharp")

    def written(source: str, target: str, as_written: str) -> Any:
        call = parts.relation("calls", source, target, "program")
        return dataclasses.replace(call, target_name=as_written)

    using = dataclasses.replace(
        parts.relation("imports", "src/Program.cs", "Acme.Billing", "program"),
        target_name="Acme.Billing.*",
    )
    main = "Acme.App.Cli.Program.Main"
    graph = build_graph(
        [csharp("program", "src/Program.cs"), csharp("lib", "src/Lib.cs")],
        [
            parts.symbol("src/Program.cs", "module", "program"),
            parts.symbol(main, "method", "program"),
            parts.symbol("src/Lib.cs", "module", "lib"),
            parts.symbol("Acme.Billing.Invoice", "class", "lib"),
            parts.symbol("Guard.Check", "method", "lib"),  # the global namespace
            parts.symbol("Acme.App.Settings.Load", "method", "lib"),  # an enclosing one
        ],
        [
            using,
            written(main, "Acme.App.Cli.Guard.Check", "Guard.Check"),
            written(main, "Acme.App.Cli.Settings.Load", "Settings.Load"),
            written(main, "Acme.App.Cli.Ledger", "Ledger"),  # defined nowhere
            # A namespace-qualified name, looked up from the enclosing namespaces: Acme.Billing.
            written(main, "Acme.App.Cli.Billing.Invoice", "Billing.Invoice"),
        ],
        [],
    )

    assert sorted(graph.outgoing[f"n:{main}"]) == [
        ("calls", "n:Acme.App.Settings.Load"),
        ("calls", "n:Acme.Billing.Invoice"),
        ("calls", "n:Guard.Check"),
    ]
    assert graph.unresolved_relations == 2  # `Ledger`, and the using (no namespace symbol)

    # A `using` namespace's type (written with type arguments); the file's own namespace
    # first where it has one of that name.
    def invoice_callee(*defined: str) -> list[Any]:
        graph = build_graph(
            [csharp("program", "src/Program.cs"), csharp("lib", "src/Lib.cs")],
            [
                parts.symbol(main, "method", "program"),
                *(parts.symbol(name, "class", "lib") for name in defined),
            ],
            [using, written(main, "Acme.App.Cli.Invoice", "Invoice<Line>")],
            [],
        )
        return graph.outgoing[f"n:{main}"]

    assert invoice_callee("Acme.Billing.Invoice") == [("calls", "n:Acme.Billing.Invoice")]
    assert invoice_callee("Acme.Billing.Invoice", "Acme.App.Cli.Invoice") == [
        ("calls", "n:Acme.App.Cli.Invoice")
    ]


def test_a_csharp_global_using_in_one_file_serves_the_others(parts: Any) -> None:
    def csharp(file_id: str, path: str) -> Any:
        return dataclasses.replace(parts.file(file_id, path, path), language="csharp")

    global_using = dataclasses.replace(
        parts.relation("imports", "src/GlobalUsings.cs", "Acme.Billing", "usings"),
        target_name="global::Acme.Billing.*",
    )
    call = dataclasses.replace(
        parts.relation("calls", "Acme.App.Program.Main", "Acme.App.Invoice", "program"),
        target_name="Invoice",
    )
    graph = build_graph(
        [
            csharp("usings", "src/GlobalUsings.cs"),
            csharp("program", "src/Program.cs"),
            csharp("lib", "src/Lib.cs"),
        ],
        [
            parts.symbol("Acme.App.Program.Main", "method", "program"),
            parts.symbol("Acme.Billing.Invoice", "class", "lib"),
        ],
        [global_using, call],
        [],
    )
    assert graph.outgoing["n:Acme.App.Program.Main"] == [("calls", "n:Acme.Billing.Invoice")]


def test_python_names_do_not_take_csharp_guesses(parts: Any) -> None:
    graph = build_graph(
        [parts.file("app", "app/main.py", "app.main"), parts.file("lib", "lib.py", "lib")],
        [
            parts.symbol("app.main.run", "function", "app"),
            parts.symbol("helper", "function", "lib"),
        ],
        [parts.relation("calls", "app.main.run", "app.main.helper", "app")],
        [],
    )
    assert "n:app.main.run" not in graph.outgoing


def test_containment_comes_from_parents_within_the_file(
    uploads_files: Files, uploads_symbols: Symbols
) -> None:
    graph = build_graph(uploads_files, uploads_symbols, [], [])

    assert graph.outgoing["n:uploads.client.UploadClient"] == [
        ("contains", "n:uploads.client.UploadClient.upload")
    ]
    assert graph.incoming["n:uploads.client.UploadClient"] == [("contains", "n:uploads.client")]


def test_file_dependencies_link_module_nodes_by_file_id_or_module_name(
    parts: Any, uploads_files: Files, uploads_symbols: Symbols
) -> None:
    graph = build_graph(
        uploads_files,
        uploads_symbols,
        [],
        [
            parts.dependency("client", "uploads.policy"),
            parts.dependency("init", "uploads.client", target_file="client"),
            parts.dependency("init", "uploads"),  # `from . import policy` names the package
            parts.dependency("client", "logging"),
        ],
    )

    assert ("imports", "n:uploads.policy") in graph.outgoing["n:uploads.client"]
    assert ("imports", "n:uploads.client") in graph.outgoing["n:uploads"]
    assert ("imports", "n:uploads") not in graph.outgoing["n:uploads"]


def test_a_c_include_beside_no_file_resolves_through_the_projects_directories(
    parts: Any,
) -> None:
    def c_file(file_id: str, path: str) -> GraphFile:
        return GraphFile(file_id=file_id, relative_path=path, module_name=path, language="cpp")

    files = [
        c_file("format", "include/fmt/format.h"),
        c_file("vendored", "third_party/other/fmt/format.h"),
        c_file("test", "test/format_test.cc"),
        c_file("config_a", "lib/a/config.h"),
        c_file("config_b", "lib/b/config.h"),
        c_file("user", "lib/b/sub/user.c"),
        c_file("python", "tools/fmt/format.h.py"),
    ]
    symbols = [parts.symbol(f.relative_path, "module", f.file_id) for f in files]
    graph = build_graph(
        files,
        symbols,
        [],
        [
            # `#include "fmt/format.h"` in test/: no test/fmt/format.h, so -Iinclude's (and the
            # vendored copy's: both end with what was written, equally far from test/).
            parts.dependency("test", "test/fmt/format.h"),
            # `#include <config.h>` in lib/b/sub/: the nearest of two is lib/b's.
            parts.dependency("user", "<config.h>"),
            # `#include "vector.h"` in lib/b/sub/: no file of the project.
            parts.dependency("user", "lib/b/sub/vector.h"),
        ],
    )

    assert graph.outgoing["n:test/format_test.cc"] == [
        ("imports", "n:include/fmt/format.h"),
        ("imports", "n:third_party/other/fmt/format.h"),
    ]
    assert graph.outgoing["n:lib/b/sub/user.c"] == [("imports", "n:lib/b/config.h")]
    # Other languages import modules, not paths: a Python file's dependency stays unresolved.
    python = GraphFile("py", "tools/run.py", "tools.run", language="python")
    graph = build_graph(
        [*files, python],
        [*symbols, parts.symbol("tools.run", "module", "py")],
        [],
        [parts.dependency("py", "fmt/format.h")],
    )
    assert "n:tools.run" not in graph.outgoing


def test_rows_of_files_the_graph_does_not_hold_are_ignored(
    parts: Any, uploads_files: Files, uploads_symbols: Symbols
) -> None:
    orphan = parts.symbol("ghost.mod", "module", "deleted-file")

    graph = build_graph(uploads_files, [*uploads_symbols, orphan], [], [])

    assert "n:ghost.mod" not in graph.symbols


@pytest.mark.parametrize(
    ("path", "module", "language", "expected"),
    [
        ("src/uploads/client.py", "uploads.client", "python", "uploads"),
        ("src/uploads/__init__.py", "uploads", "python", "uploads"),
        ("web/static/app.js", "", "javascript", "web"),
        ("setup.py", "", "python", ""),
        # Other languages' module names do not tell the project's parts apart: directories do.
        ("billing/src/main/java/com/acme/Invoice.java", "com.acme", "java", "billing"),
        ("shop/src/main/java/com/acme/Cart.java", "com.acme", "java", "shop"),
        ("internal/billing/invoice.go", "github.com/acme/shop/internal/billing", "go", "internal"),
        ("packages/ui/src/button.ts", "@acme/ui/src/button", "typescript", "packages"),
        ("src/api/client.ts", "src/api/client", "typescript", "src"),
        ("main.go", "github.com/acme/shop", "go", ""),
    ],
)
def test_the_subsystem_is_a_python_files_top_level_package_else_its_top_directory(
    path: str, module: str, language: str, expected: str
) -> None:
    file = GraphFile(file_id="f", relative_path=path, module_name=module, language=language)
    assert subsystem_for(file) == expected


# ---- Overrides -----------------------------------------------------------------------------


def _dispatch_graph(parts: Any, *extra: Any) -> CodeGraph:
    """A Java-like project: `Repo` declares `save` (a signature), `SqlRepo implements Repo` and
    `CachedRepo extends SqlRepo` define it, `Service.store` calls it through a `Repo`."""
    files = [
        parts.file("repo", "Repo.java", "Repo.java"),
        parts.file("sql", "SqlRepo.java", "SqlRepo.java"),
        parts.file("cached", "CachedRepo.java", "CachedRepo.java"),
        parts.file("service", "Service.java", "Service.java"),
    ]
    symbols = [
        parts.symbol("acme.Repo", "interface", "repo"),
        parts.symbol("acme.Repo.save", "signature", "repo", parent="acme.Repo"),
        parts.symbol("acme.Repo.load", "signature", "repo", parent="acme.Repo"),
        parts.symbol("acme.SqlRepo", "class", "sql"),
        parts.symbol("acme.SqlRepo.save", "method", "sql", parent="acme.SqlRepo"),
        parts.symbol("acme.SqlRepo.close", "method", "sql", parent="acme.SqlRepo"),
        parts.symbol("acme.CachedRepo", "class", "cached"),
        parts.symbol("acme.CachedRepo.save", "method", "cached", parent="acme.CachedRepo"),
        parts.symbol("acme.Service", "class", "service"),
        parts.symbol("acme.Service.store", "method", "service", parent="acme.Service"),
    ]
    relations = [
        parts.relation("inherits", "acme.SqlRepo", "acme.Repo", "sql"),
        parts.relation("inherits", "acme.CachedRepo", "acme.SqlRepo", "cached"),
        parts.relation("calls", "acme.Service.store", "acme.Repo.save", "service"),
        *extra,
    ]
    return build_graph(files, symbols, relations, [])


def test_a_method_overrides_the_nearest_method_of_its_name_up_its_bases(parts: Any) -> None:
    graph = _dispatch_graph(parts)

    overrides = {
        (source, target)
        for source, edges in graph.outgoing.items()
        for kind, target in edges
        if kind == "overrides"
    }
    assert overrides == {
        ("n:acme.SqlRepo.save", "n:acme.Repo.save"),  # implements the interface's signature
        ("n:acme.CachedRepo.save", "n:acme.SqlRepo.save"),  # the nearest, not Repo.save too
    }
    # Members no base defines (close) and declarations nobody implements (load) override
    # nothing.
    assert "n:acme.SqlRepo.close" not in graph.outgoing
    assert ("overrides", "n:acme.SqlRepo.save") in graph.incoming["n:acme.Repo.save"]


def test_a_cycle_of_bases_ends(parts: Any) -> None:
    cycle = parts.relation("inherits", "acme.Repo", "acme.CachedRepo", "repo")

    graph = _dispatch_graph(parts, cycle)

    overrides = {
        (source, target)
        for source, edges in graph.outgoing.items()
        for kind, target in edges
        if kind == "overrides"
    }
    assert ("n:acme.SqlRepo.save", "n:acme.Repo.save") in overrides
    assert ("n:acme.Repo.save", "n:acme.CachedRepo.save") in overrides


def test_members_defined_in_another_file_than_their_type_override_too(parts: Any) -> None:
    """A Go method or a Rust impl's method may live in another file than its type: the member
    comes from the symbol's parent, not from containment (which stays within a file)."""
    files = [
        parts.file("shape", "src/shape.rs", "crate::shape"),
        parts.file("circle", "src/circle.rs", "crate::circle"),
        parts.file("impls", "src/impls.rs", "crate::impls"),
    ]
    symbols = [
        parts.symbol("crate.shape.Shape", "trait", "shape"),
        parts.symbol("crate.shape.Shape.area", "signature", "shape", parent="crate.shape.Shape"),
        parts.symbol("crate.circle.Circle", "struct", "circle"),
        parts.symbol("crate.circle.Circle.area", "method", "impls", parent="crate.circle.Circle"),
    ]
    inherits = parts.relation("inherits", "crate.circle.Circle", "crate.shape.Shape", "impls")

    graph = build_graph(files, symbols, [inherits], [])

    assert graph.outgoing["n:crate.circle.Circle.area"] == [
        ("overrides", "n:crate.shape.Shape.area")
    ]


def test_a_call_of_a_member_its_type_inherits_resolves_to_the_nearest_base(parts: Any) -> None:
    """`self.store()` in `CachedRepo` (ast names it `acme.CachedRepo.store`): `CachedRepo`
    defines no `store`, `SqlRepo` neither, `Repo` does; `save` is found in `SqlRepo`, nearer
    than `Repo`; a member no base has stays unresolved."""
    files = [parts.file("a", "a.py", "acme")]
    symbols = [
        parts.symbol("acme.Repo", "class", "a"),
        parts.symbol("acme.Repo.store", "method", "a", parent="acme.Repo"),
        parts.symbol("acme.Repo.save", "method", "a", parent="acme.Repo"),
        parts.symbol("acme.SqlRepo", "class", "a"),
        parts.symbol("acme.SqlRepo.save", "method", "a", parent="acme.SqlRepo"),
        parts.symbol("acme.CachedRepo", "class", "a"),
        parts.symbol("acme.CachedRepo.flush", "method", "a", parent="acme.CachedRepo"),
    ]
    relations = [
        parts.relation("inherits", "acme.SqlRepo", "acme.Repo", "a"),
        parts.relation("inherits", "acme.CachedRepo", "acme.SqlRepo", "a"),
        parts.relation("calls", "acme.CachedRepo.flush", "acme.CachedRepo.store", "a"),
        parts.relation("calls", "acme.CachedRepo.flush", "acme.CachedRepo.save", "a"),
        parts.relation("calls", "acme.CachedRepo.flush", "acme.CachedRepo.vanish", "a"),
    ]

    graph = build_graph(files, symbols, relations, [])

    calls = [
        target for kind, target in graph.outgoing["n:acme.CachedRepo.flush"] if kind == "calls"
    ]
    assert sorted(calls) == ["n:acme.Repo.store", "n:acme.SqlRepo.save"]
    assert graph.unresolved_relations == 1  # vanish


def test_an_overload_overrides_the_base_overloads_with_as_many_parameters(parts: Any) -> None:
    files = [parts.file("a", "Log.cs", "Log.cs")]

    def with_signature(symbol: GraphSymbol, signature: str) -> GraphSymbol:
        return dataclasses.replace(symbol, signature=signature)

    symbols = [
        parts.symbol("Acme.ILogger", "interface", "a"),
        with_signature(
            parts.symbol("Acme.ILogger.Write", "signature", "a", parent="Acme.ILogger"),
            "void Write(LogEvent logEvent)",
        ),
        with_signature(
            dataclasses.replace(
                parts.symbol(
                    "Acme.ILogger.Write(string t, Dictionary<string, object> p)",
                    "signature",
                    "a",
                    parent="Acme.ILogger",
                ),
                name="Write",
            ),
            "void Write(string t, Dictionary<string, object> p)",
        ),
        parts.symbol("Acme.Logger", "class", "a"),
        with_signature(
            parts.symbol("Acme.Logger.Write", "method", "a", parent="Acme.Logger"),
            "public void Write(LogEvent e)",
        ),
    ]
    inherits = parts.relation("inherits", "Acme.Logger", "Acme.ILogger", "a")

    graph = build_graph(files, symbols, [inherits], [])

    # Two parameters, though one type has a comma of its own: not the one-parameter Write.
    assert graph.outgoing["n:Acme.Logger.Write"] == [("overrides", "n:Acme.ILogger.Write")]


def test_a_bare_call_in_a_java_method_names_an_inherited_member(parts: Any) -> None:
    """`helper()` in `Child.run` (ast: `acme.helper`, the package's guess) is the `helper`
    that `Child` inherits from `Base`; in Python a bare name is never a member."""
    java = dataclasses.replace(parts.file("a", "Child.java", "Child.java"), language="java")
    python = parts.file("b", "child.py", "child")
    symbols = [
        parts.symbol("acme.Base", "class", "a"),
        parts.symbol("acme.Base.helper", "method", "a", parent="acme.Base"),
        parts.symbol("acme.Child", "class", "a"),
        parts.symbol("acme.Child.run", "method", "a", parent="acme.Child"),
        parts.symbol("child.Kid", "class", "b"),
        parts.symbol("child.Kid.run", "method", "b", parent="child.Kid"),
    ]
    relations = [
        parts.relation("inherits", "acme.Child", "acme.Base", "a"),
        dataclasses.replace(
            parts.relation("calls", "acme.Child.run", "acme.helper", "a"), target_name="helper"
        ),
        parts.relation("inherits", "child.Kid", "acme.Base", "b"),
        dataclasses.replace(
            parts.relation("calls", "child.Kid.run", "child.helper", "b"), target_name="helper"
        ),
    ]

    graph = build_graph([java, python], symbols, relations, [])

    assert graph.outgoing["n:acme.Child.run"] == [("calls", "n:acme.Base.helper")]
    assert "n:child.Kid.run" not in graph.outgoing


def test_a_go_type_with_an_interfaces_methods_implements_it_undeclared(parts: Any) -> None:
    go = dataclasses.replace(parts.file("g", "discount.go", "discount"), language="go")
    symbols = [
        parts.symbol("discount.Rule", "interface", "g"),
        parts.symbol("discount.Rule.Apply", "signature", "g", parent="discount.Rule"),
        parts.symbol("discount.Named", "interface", "g"),
        parts.symbol("discount.Named.Apply", "signature", "g", parent="discount.Named"),
        parts.symbol("discount.Named.Name", "signature", "g", parent="discount.Named"),
        parts.symbol("discount.PercentRule", "struct", "g"),
        parts.symbol("discount.PercentRule.Apply", "method", "g", parent="discount.PercentRule"),
        parts.symbol("discount.Flat", "struct", "g"),
        parts.symbol("discount.Flat.Amount", "method", "g", parent="discount.Flat"),
    ]

    graph = build_graph([go], symbols, [], [])

    # PercentRule has Rule's one method, not Named's two; Flat has neither.
    assert graph.outgoing["n:discount.PercentRule.Apply"] == [
        ("overrides", "n:discount.Rule.Apply")
    ]
    assert "n:discount.Flat.Amount" not in graph.outgoing
    # In a language whose types declare what they implement, the same shapes are no edge.
    declared = build_graph([parts.file("g", "discount.py", "discount")], symbols, [], [])
    assert "n:discount.PercentRule.Apply" not in declared.outgoing


def _c_project(parts: Any, language: str = "c") -> tuple[Files, Symbols, list[Any]]:
    """A header's prototype, its definition in a `.c`, a caller including the header."""

    def c_file(file_id: str, path: str) -> GraphFile:
        return GraphFile(file_id=file_id, relative_path=path, module_name=path, language=language)

    def placed(qualified_name: str, kind: Any, file_id: str, signature: str) -> GraphSymbol:
        made = parts.symbol(qualified_name, kind, file_id, parent=paths[file_id])
        return dataclasses.replace(
            made, node_id=f"n:{file_id}:{qualified_name}", signature=signature, scope_name=""
        )

    paths = {"h": "lib/zstd.h", "c": "lib/compress.c", "cli": "programs/cli.c"}
    files = [c_file(file_id, path) for file_id, path in paths.items()]
    symbols = [
        *(parts.symbol(path, "module", file_id) for file_id, path in paths.items()),
        placed("compress", "signature", "h", "size_t compress(void* dst, size_t n)"),
        placed("compress", "function", "c", "size_t compress(void* dst, size_t n)"),
        placed("main", "function", "cli", "int main(void)"),
    ]
    relations = [
        parts.relation("contains", "lib/zstd.h", "compress", "h"),
        parts.relation("contains", "lib/compress.c", "compress", "c"),
        dataclasses.replace(
            parts.relation("calls", "main", "compress", "cli"), source_node_id="n:cli:main"
        ),
    ]
    return files, symbols, relations


def test_a_c_definition_overrides_the_prototypes_of_its_name_in_other_files(parts: Any) -> None:
    files, symbols, relations = _c_project(parts)

    graph = build_graph(files, symbols, relations, [])

    assert graph.outgoing["n:c:compress"] == [("overrides", "n:h:compress")]
    # A call by name reaches both; each file contains only what is written in it, though C's
    # global names resolve across the project.
    assert graph.outgoing["n:cli:main"] == [("calls", "n:c:compress"), ("calls", "n:h:compress")]
    assert graph.outgoing["n:lib/zstd.h"] == [("contains", "n:h:compress")]
    assert graph.outgoing["n:lib/compress.c"] == [("contains", "n:c:compress")]
    # Languages that do not declare apart link no namesakes.
    python, _, _ = _c_project(parts, language="python")
    assert "n:c:compress" not in build_graph(python, symbols, relations, []).outgoing
