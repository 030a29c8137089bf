from collections.abc import Callable

import pytest

from locus.ast.domain import FileAnalysis, FileDependency, Relation, extract

pytestmark = pytest.mark.unit

AnalyseFile = Callable[[str], FileAnalysis]


def relations_of(analysis: FileAnalysis, kind: str) -> list[tuple[str, str, str | None, int]]:
    return [
        (r.source_qualified_name, r.target_name, r.target_qualified_name, r.line)
        for r in analysis.relations
        if r.kind == kind
    ]


def test_calls_resolve_self_calls_cls_calls_relative_imports_and_module_names(
    analyse_uploads_file: AnalyseFile,
) -> None:
    calls = relations_of(analyse_uploads_file("client.py"), "calls")

    client = "uploads.client.UploadClient"
    assert calls == [
        ("uploads.client", "logging.getLogger", "logging.getLogger", 10),
        ("uploads.client.traced.wrapper", "LOGGER.debug", None, 17),
        ("uploads.client.traced.wrapper", "operation", None, 18),
        (f"{client}.from_environment", "cls", None, 36),
        (f"{client}.from_environment", "os.environ.get", "os.environ.get", 36),
        (f"{client}.from_environment", "cls.default_endpoint", f"{client}.default_endpoint", 36),
        (f"{client}.upload", "os.path.getsize", "os.path.getsize", 49),
        (f"{client}.upload", "LOGGER.info", None, 50),
        (f"{client}.upload", "self._retry", f"{client}._retry", 51),
        (f"{client}.upload", "enforce_retry_limit", "uploads.policy.enforce_retry_limit", 51),
        (f"{client}._retry", "range", None, 54),
        (f"{client}._retry", "self._send", f"{client}._send", 55),
        (f"{client}._retry", "LOGGER.warning", None, 57),
        (f"{client}._retry", "RetryExhausted", "uploads.errors.RetryExhausted", 58),
        (f"{client}._send", "os.path.exists", "os.path.exists", 61),
        ("uploads.client", "UploadClient.from_environment", f"{client}.from_environment", 64),
    ]


def test_calls_are_deduplicated_per_caller_keeping_the_first_line() -> None:
    source = b"""def ping():
    pass


def twice():
    ping()
    ping()


def once():
    ping()
"""
    calls = relations_of(extract("net.py", source, "python"), "calls")

    assert calls == [
        ("net.twice", "ping", "net.ping", 6),
        ("net.once", "ping", "net.ping", 11),
    ]


def test_imported_names_resolve_through_aliases_and_dotted_modules() -> None:
    source = b"""import json
import pkg.util as u
import xml.etree.ElementTree
from pkg.util import helper as h


def run():
    h()
    u.helper()
    json.dumps({})
    xml.etree.ElementTree.parse("a.xml")
    self.missing()
    unknown()
"""
    calls = relations_of(extract("pkg/mod.py", source, "python"), "calls")

    assert [(target, resolved) for _, target, resolved, _ in calls] == [
        ("h", "pkg.util.helper"),
        ("u.helper", "pkg.util.helper"),
        ("json.dumps", "json.dumps"),
        ("xml.etree.ElementTree.parse", "xml.etree.ElementTree.parse"),
        ("self.missing", None),
        ("unknown", None),
    ]


def test_self_calls_name_the_enclosing_class_even_for_a_method_it_may_inherit() -> None:
    source = b"""class Worker:
    def run(self):
        def step():
            return self.finish()

        self.helper.start()
        finish()
        return self.undefined()

    def finish(self):
        return step()


def step():
    pass


def finish():
    pass
"""
    calls = relations_of(extract("jobs.py", source, "python"), "calls")

    assert [(caller, target, resolved) for caller, target, resolved, _ in calls] == [
        ("jobs.Worker.run.step", "self.finish", "jobs.Worker.finish"),
        ("jobs.Worker.run", "self.helper.start", None),
        # A bare name inside a method never means a sibling method (class scope is skipped).
        ("jobs.Worker.run", "finish", "jobs.finish"),
        # Not defined here: perhaps inherited; impact looks `undefined` up in Worker's bases.
        ("jobs.Worker.run", "self.undefined", "jobs.Worker.undefined"),
        # Inside `finish`, `step` is the module function, not the one nested in `run`.
        ("jobs.Worker.finish", "step", "jobs.step"),
    ]


def test_nested_function_calls_resolve_to_the_enclosing_functions_definition() -> None:
    source = b"""def outer():
    def inner():
        pass

    inner()
"""
    calls = relations_of(extract("scopes.py", source, "python"), "calls")

    assert calls == [("scopes.outer", "inner", "scopes.outer.inner", 5)]


def test_class_level_and_decorator_calls_are_attributed_to_the_module() -> None:
    source = b"""def option(default):
    return default


class Settings:
    retries = option(3)

    @register("settings")
    def load(self):
        pass
"""
    calls = relations_of(extract("config.py", source, "python"), "calls")

    assert calls == [
        ("config", "option", "config.option", 6),
        ("config", "register", None, 8),
    ]


def test_relative_imports_resolve_against_the_module_and_package(
    analyse_uploads_file: AnalyseFile,
) -> None:
    package_imports = relations_of(analyse_uploads_file("__init__.py"), "imports")
    client_imports = relations_of(analyse_uploads_file("client.py"), "imports")

    assert package_imports == [
        ("uploads", ".policy", "uploads.policy", 3),
        ("uploads", ".client.UploadClient", "uploads.client.UploadClient", 4),
        ("uploads", ".errors.UploadError", "uploads.errors.UploadError", 5),
    ]
    assert client_imports == [
        ("uploads.client", "logging", "logging", 3),
        ("uploads.client", "os", "os", 4),
        ("uploads.client", "collections.abc.Callable", "collections.abc.Callable", 5),
        ("uploads.client", ".errors.RetryExhausted", "uploads.errors.RetryExhausted", 7),
        ("uploads.client", ".policy.enforce_retry_limit", "uploads.policy.enforce_retry_limit", 8),
    ]


def test_relative_imports_climb_parent_packages_and_give_up_past_the_root() -> None:
    source = b"""from ..shared import tokens as shared_tokens
from ...outside import nothing
from .sibling import *
"""
    analysis = extract("app/api/routes.py", source, "python")

    assert relations_of(analysis, "imports") == [
        ("app.api.routes", "..shared.tokens", "app.shared.tokens", 1),
        ("app.api.routes", "...outside.nothing", None, 2),
        ("app.api.routes", ".sibling.*", "app.api.sibling", 3),
    ]
    assert analysis.dependencies == (
        FileDependency("app.shared", 1, ("tokens",)),
        FileDependency("app.api.sibling", 3, ()),
    )


def test_dependencies_are_absolute_modules_with_imported_names_merged(
    analyse_uploads_file: AnalyseFile,
) -> None:
    source = b"""import os.path
from pkg import alpha
from pkg import beta, alpha
from . import sibling


def lazy():
    import json
"""
    analysis = extract("pkg/sub/__init__.py", source, "python")

    assert analysis.dependencies == (
        FileDependency("os.path", 1, ()),
        FileDependency("pkg", 2, ("alpha", "beta")),
        FileDependency("pkg.sub", 4, ("sibling",)),
        FileDependency("json", 8, ()),
    )
    assert analyse_uploads_file("client.py").dependencies == (
        FileDependency("logging", 3, ()),
        FileDependency("os", 4, ()),
        FileDependency("collections.abc", 5, ("Callable",)),
        FileDependency("uploads.errors", 7, ("RetryExhausted",)),
        FileDependency("uploads.policy", 8, ("enforce_retry_limit",)),
    )


def test_inherits_links_each_positional_base_resolved_like_calls(
    analyse_uploads_file: AnalyseFile,
) -> None:
    inherits = relations_of(analyse_uploads_file("errors.py"), "inherits")

    assert inherits == [
        ("uploads.errors.UploadError", "Exception", None, 4),
        ("uploads.errors.RetryExhausted", "UploadError", "uploads.errors.UploadError", 8),
        ("uploads.errors.QuotaExceeded", "UploadError", "uploads.errors.UploadError", 16),
        ("uploads.errors.QuotaExceeded", "PermissionError", None, 16),
    ]


def test_inherits_skips_keywords_and_unwraps_generic_bases() -> None:
    source = b"""import abc
from typing import Generic, TypeVar

from .base import Repository as BaseRepository


class Store(BaseRepository, Generic[T], abc.ABC, metaclass=abc.ABCMeta):
    pass
"""
    inherits = relations_of(extract("data/store.py", source, "python"), "inherits")

    assert inherits == [
        ("data.store.Store", "BaseRepository", "data.base.Repository", 7),
        ("data.store.Store", "Generic", "typing.Generic", 7),
        ("data.store.Store", "abc.ABC", "abc.ABC", 7),
    ]


def test_contains_links_every_parent_to_its_children(analyse_uploads_file: AnalyseFile) -> None:
    contains = relations_of(analyse_uploads_file("errors.py"), "contains")

    assert contains == [
        ("uploads.errors", "UploadError", "uploads.errors.UploadError", 4),
        ("uploads.errors", "RetryExhausted", "uploads.errors.RetryExhausted", 8),
        ("uploads.errors.RetryExhausted", "__init__", "uploads.errors.RetryExhausted.__init__", 11),
        ("uploads.errors", "QuotaExceeded", "uploads.errors.QuotaExceeded", 16),
    ]


def test_every_relation_comes_from_a_symbol_of_the_file(analyse_uploads_file: AnalyseFile) -> None:
    for file_name in ("__init__.py", "client.py", "errors.py", "policy.py"):
        analysis = analyse_uploads_file(file_name)
        symbol_names = {symbol.qualified_name for symbol in analysis.symbols}

        assert {relation.source_qualified_name for relation in analysis.relations} <= symbol_names
        assert all(isinstance(relation, Relation) for relation in analysis.relations)
