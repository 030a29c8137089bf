"""The locbench ranker protocol: parsing the harness's query, naming projects, and turning a
LocateResponse into ranked files and `path::Class.method` functions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from locus.cli.exit_codes import CliError
from locus.cli.locbench import function_id, parse_query, project_name_for, ranked_output
from locus.v1 import common_pb2, gateway_pb2

pytestmark = pytest.mark.unit


def query_json(repo_path: Path, **extra: object) -> str:
    return json.dumps(
        {
            "instance_id": "psf__requests-1142",
            "repo": "psf/requests",
            "base_commit": "22623bd8c265b78b161542663ee980738441c307",
            "repo_path": str(repo_path),
            "problem_statement": "requests.get is ALWAYS sending content length",
            "max_files": 100,
            "max_functions": 100,
        }
        | extra
    )


def test_a_harness_query_is_parsed(tmp_path: Path) -> None:
    query = parse_query(query_json(tmp_path, max_files=500, max_functions="x"))
    assert query.repo == "psf/requests"
    assert query.repo_path == tmp_path.resolve()
    assert query.max_files == 100  # the harness reads at most 100
    assert query.max_functions == 100


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("not json", "not one JSON object"),
        ("[1, 2]", "one JSON object"),
        (json.dumps({"repo_path": "/"}), "lacks problem_statement"),
        (json.dumps({"repo_path": "/no/such/dir", "problem_statement": "x"}), "not a directory"),
    ],
)
def test_a_bad_query_is_a_clear_error(raw: str, message: str) -> None:
    with pytest.raises(CliError, match=message):
        parse_query(raw)


def test_one_project_per_repository_or_per_commit(tmp_path: Path) -> None:
    query = parse_query(query_json(tmp_path))
    assert project_name_for(query, "locbench") == "locbench-psf-requests"
    assert project_name_for(query, "locbench", per_commit=True) == (
        "locbench-psf-requests-22623bd8c265"
    )
    odd = parse_query(query_json(tmp_path, repo="we ird/na+me"))
    assert project_name_for(odd, "lb") == "lb-we-ird-na-me"


def located_symbol(path: str, scope: str, kind: int) -> gateway_pb2.LocatedSymbol:
    return gateway_pb2.LocatedSymbol(
        symbol=common_pb2.Symbol(
            scope_name=scope,
            name=scope.rsplit(".", 1)[-1],
            kind=kind,
            location=common_pb2.CodeLocation(relative_path=path),
        )
    )


def test_functions_and_methods_become_harness_ids(tmp_path: Path) -> None:
    reply = gateway_pb2.LocateResponse(
        files=[
            gateway_pb2.LocatedFile(relative_path="requests/models.py"),
            gateway_pb2.LocatedFile(relative_path="requests/api.py"),
        ],
        symbols=[
            located_symbol(
                "requests/models.py",
                "PreparedRequest.prepare_content_length",
                common_pb2.SYMBOL_KIND_METHOD,
            ),
            located_symbol("requests/models.py", "PreparedRequest", common_pb2.SYMBOL_KIND_CLASS),
            located_symbol("requests/api.py", "get", common_pb2.SYMBOL_KIND_FUNCTION),
            located_symbol("requests/api.py", "", common_pb2.SYMBOL_KIND_MODULE),
            located_symbol(
                "requests/hooks.py", "Hooks.dispatch.inner", common_pb2.SYMBOL_KIND_FUNCTION
            ),
            located_symbol("requests/api.py", "get", common_pb2.SYMBOL_KIND_FUNCTION),
        ],
    )
    ranked = ranked_output(reply, parse_query(query_json(tmp_path, max_files=1)))
    assert ranked == {
        "files": ["requests/models.py"],
        "functions": [
            "requests/models.py::PreparedRequest.prepare_content_length",
            "requests/api.py::get",
            "requests/hooks.py::Hooks.dispatch",
        ],
    }


@pytest.mark.parametrize(
    ("kind", "scope", "path", "language", "expected"),
    [
        # Java: nested classes, constructors are Foo.Foo; a declared package is no part of scope
        ("method", "Outer.Inner.run", "src/main/java/a/Outer.java", "java", "Outer.Inner.run"),
        ("constructor", "Order.Order", "src/main/java/a/Order.java", "java", "Order.Order"),
        ("method", "Invoices.total", "src/main/kotlin/Invoices.kt", "kotlin", "Invoices.total"),
        # Go: the receiver type
        ("method", "Server.Serve", "net/http/server.go", "go", "Server.Serve"),
        ("function", "ListenAndServe", "net/http/server.go", "go", "ListenAndServe"),
        # Rust: impl type, `::` read as `.`, a `mod` left in is harmless
        ("method", "Parser::parse_expr", "src/parser.rs", "rust", "Parser.parse_expr"),
        ("method", "inner::Parser::parse", "src/lib.rs", "rust", "inner.Parser.parse"),
        # C++: namespace and out-of-line qualifier
        (
            "method",
            "fmt::basic_writer::write_fp",
            "fmt/format.h",
            "cpp",
            "fmt.basic_writer.write_fp",
        ),
        ("function", "main", "src/main.c", "c", "main"),
        # JS/TS: classes, objects bound to a name, constructors
        ("method", "Api.get", "lib/api.ts", "typescript", "Api.get"),
        ("constructor", "Cart.constructor", "lib/cart.js", "javascript", "Cart.constructor"),
        # PHP and Ruby members joined with `::`
        ("method", "Repo::find", "src/Repo.php", "php", "Repo.find"),
        ("method", "Accounts::Signup::call", "app/signup.rb", "ruby", "Accounts.Signup.call"),
        # A function inside a function: its own name elsewhere, the enclosing def in Python
        ("function", "Router.handle.next", "lib/router.js", "javascript", "next"),
        ("function", "outer::helper", "src/lib.rs", "rust", "helper"),
        ("function", "Hooks.dispatch.inner", "requests/hooks.py", "python", "Hooks.dispatch"),
        ("function", "Hooks.dispatch.inner", "requests/hooks.py", "", "Hooks.dispatch"),
    ],
)
def test_function_ids_in_every_language(
    kind: str, scope: str, path: str, language: str, expected: str
) -> None:
    assert function_id(kind, scope, path, language) == f"{path}::{expected}"


@pytest.mark.parametrize("kind", ["class", "interface", "struct", "enum", "trait", "namespace"])
def test_containers_are_no_functions(kind: str) -> None:
    assert function_id(kind, "Foo", "src/foo.rs", "rust") == ""


def test_constructors_and_languages_reach_the_harness_ids(tmp_path: Path) -> None:
    def symbol(path: str, scope: str, kind: int, language: str) -> gateway_pb2.LocatedSymbol:
        located = located_symbol(path, scope, kind)
        located.symbol.location.language = language
        return located

    reply = gateway_pb2.LocateResponse(
        symbols=[
            symbol("src/Order.java", "Order.Order", common_pb2.SYMBOL_KIND_CONSTRUCTOR, "java"),
            symbol("src/Order.java", "Order", common_pb2.SYMBOL_KIND_CLASS, "java"),
            symbol("src/lib.rs", "Store", common_pb2.SYMBOL_KIND_TRAIT, "rust"),
            symbol("src/lib.rs", "MemStore::get", common_pb2.SYMBOL_KIND_METHOD, "rust"),
            symbol("src/ns.cc", "ns", common_pb2.SYMBOL_KIND_NAMESPACE, "cpp"),
            symbol("lib/a.js", "load.parse", common_pb2.SYMBOL_KIND_FUNCTION, "javascript"),
        ],
    )
    assert ranked_output(reply, parse_query(query_json(tmp_path)))["functions"] == [
        "src/Order.java::Order.Order",
        "src/lib.rs::MemStore.get",
        "lib/a.js::parse",
    ]
