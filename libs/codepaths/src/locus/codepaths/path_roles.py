"""What a file is for, judged from its path: source, tests, docs, examples, vendored or generated
code. The ranking de-ranks everything that is not source unless the question asks for it."""

from __future__ import annotations

import re
from enum import StrEnum


class PathRole(StrEnum):
    SOURCE = "source"
    TEST = "test"
    DOCS = "docs"
    EXAMPLE = "example"
    VENDORED = "vendored"
    GENERATED = "generated"


_VENDORED_DIRS = frozenset(
    {
        "vendor",
        "vendored",
        "third_party",
        "third-party",
        "thirdparty",
        "node_modules",
        "site-packages",
        "bower_components",
        ".venv",
        "venv",
        "external",
        "extern",
    }
)
_TEST_DIRS = frozenset(
    {"test", "tests", "testing", "__tests__", "__test__", "spec", "specs", "e2e", "testdata"}
)
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos"})
_DOCS_DIRS = frozenset({"doc", "docs", "documentation", "man"})
_DOCS_EXTENSIONS = (".md", ".rst", ".adoc", ".markdown")
# Project prose without a docs extension: CHANGES, CHANGELOG.txt, NEWS, AUTHORS, LICENSE, ...
_DOCS_FILE = re.compile(
    r"^(?:changes|changelog|history|news|authors|contributors|contributing|license|licence"
    r"|copying|notice|readme|releasenotes|release-notes)(?:\.(?:txt|rst|md))?$",
    re.I,
)
# test_x.py, x_test.py, x_test.go, x.test.ts, x.spec.js, XTest.java, XTests.kt, conftest.py
_TEST_FILE = re.compile(
    r"^(?:test_.+\.py|.+_tests?\.(?:py|go|rs|rb|exs)|.+\.(?:test|spec)\.[cm]?[jt]sx?"
    r"|.+(?:Test|Tests|IT|Spec)\.(?:java|kt|scala|groovy|cs|swift)|conftest\.py)$"
)
# protoc/grpc output, minified bundles, lock files: generated, never the place to change.
_GENERATED_FILE = re.compile(
    r"(?:_pb2(?:_grpc)?\.pyi?|\.pb\.go|_grpc\.pb\.go|\.pb\.(?:cc|h)|\.min\.js|\.lock"
    r"|package-lock\.json|\.generated\.\w+)$"
)


def classify_path(relative_path: str) -> PathRole:
    path = relative_path.replace("\\", "/").strip("/")
    if not path:
        return PathRole.SOURCE
    *directories, filename = path.split("/")
    lowered = [d.lower() for d in directories]
    if any(d in _VENDORED_DIRS for d in lowered):
        return PathRole.VENDORED
    if _GENERATED_FILE.search(filename):
        return PathRole.GENERATED
    if any(d in _TEST_DIRS for d in lowered) or _TEST_FILE.match(filename):
        return PathRole.TEST
    if any(d in _EXAMPLE_DIRS for d in lowered):
        return PathRole.EXAMPLE
    if (
        any(d in _DOCS_DIRS for d in lowered)
        or filename.lower().endswith(_DOCS_EXTENSIONS)
        or _DOCS_FILE.match(filename)
    ):
        return PathRole.DOCS
    return PathRole.SOURCE


VALUE_CLASSES = ("source", "test", "docs", "vendored")
_VALUE_CLASS = {
    PathRole.SOURCE: "source",
    PathRole.TEST: "test",
    PathRole.DOCS: "docs",
    PathRole.EXAMPLE: "docs",
    PathRole.VENDORED: "vendored",
    PathRole.GENERATED: "vendored",
}


def value_class(relative_path: str) -> str:
    """How much a file's vectors are worth, as one of ``VALUE_CLASSES`` (most valuable first):
    source, then tests, then docs and examples, then vendored and generated code."""
    return _VALUE_CLASS[classify_path(relative_path)]
