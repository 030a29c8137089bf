"""What a file is for, judged from its path: source, tests, docs, examples, vendored or generated
code, benchmarks, notebooks, issue and pull-request templates, CI and build configuration. The
ranking learns how much each role matters (a feature); the hand ranking de-ranks everything that
is not source unless the question asks for it."""

from __future__ import annotations

import functools
import re
from enum import StrEnum


class PathRole(StrEnum):
    SOURCE = "source"
    TEST = "test"
    DOCS = "docs"
    EXAMPLE = "example"
    VENDORED = "vendored"
    GENERATED = "generated"
    BENCHMARK = "benchmark"  # benchmarks/, asv_bench/, bench_*.py
    NOTEBOOK = "notebook"  # .ipynb
    TEMPLATE = "template"  # issue and pull-request templates (.github/ISSUE_TEMPLATE/...)
    CI = "ci"  # CI workflows and settings (.github/workflows, .gitlab-ci.yml, .circleci, ...)
    BUILD = "build"  # build and packaging configuration (setup.py, pyproject.toml, Makefile, ...)


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
    {
        "test",
        "tests",
        "testing",
        "__tests__",
        "__test__",
        "__mocks__",
        "spec",
        "specs",
        "e2e",
        "testdata",
    }
)
# A .NET test project: Shop.Tests, Shop.UnitTests, Shop.IntegrationTests, Shop.Specs.
_TEST_PROJECT_DIR = re.compile(
    r"^.+\.(?:unit|integration|functional|acceptance)?(?:tests?|specs?)$"
)
# A Maven/Gradle source set other than main whose name has "test" in it, above its language
# directory: src/test/java, src/integrationTest/kotlin, src/integration-test/java,
# src/testFixtures/java, src/androidTest/java.
_JVM_LANGUAGE_DIRS = frozenset({"java", "kotlin", "scala", "groovy", "clojure", "resources"})
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos"})
_DOCS_DIRS = frozenset({"doc", "docs", "documentation", "man"})
_DOCS_EXTENSIONS = (".md", ".rst", ".adoc", ".markdown")
# Project prose without a docs extension: CHANGES, CHANGELOG.txt, NEWS, AUTHORS, LICENSE, ...
_DOCS_FILE = re.compile(
    r"^(?:changes|changelog|history|news|authors|contributors|contributing|license|licence"
    r"|copying|notice|readme|releasenotes|release-notes)(?:\.(?:txt|rst|md))?$",
    re.I,
)
# Test files by name: test_x.py, test_x.c, x_test.go, x_test.rs, x_test.rb, x_spec.rb,
# x_unittest.cc, x.test.ts, x.spec.js, XTest.java, XTests.cs, XIT.java, XSpec.scala, XTest.php,
# conftest.py, and the tests modules of Rust (tests.rs, test.rs) and Django (tests.py).
_TEST_FILE = re.compile(
    r"^(?:test_.+\.(?:py|c|cc|cpp|cxx)|.+_tests?\.(?:py|go|rs|rb|exs)|.+_spec\.rb"
    r"|.+_(?:unit)?tests?\.(?:c|cc|cpp|cxx|h|hh|hpp)|.+\.(?:test|spec)\.\w+"
    r"|.+(?:Test|Tests|TestCase|IT|Spec)\.(?:java|kt|scala|groovy|cs|swift|php)"
    r"|tests?\.rs|tests\.py|conftest\.py)$"
)
# protoc/grpc output, minified bundles, lock files: generated, never the place to change.
_GENERATED_FILE = re.compile(
    r"(?:_pb2(?:_grpc)?\.pyi?|\.pb\.go|_grpc\.pb\.go|\.pb\.(?:cc|h)|\.min\.js|\.lock"
    r"|package-lock\.json|\.generated\.\w+)$"
)


_BENCHMARK_DIRS = frozenset({"benchmark", "benchmarks", "bench", "benches", "asv_bench", "perf"})
_BENCHMARK_FILE = re.compile(r"^(?:bench_.+|.+_bench(?:mark)?)\.\w+$|^benchmarks?\.\w+$", re.I)
_TEMPLATE_DIRS = frozenset({"issue_template", "pull_request_template", "discussion_template"})
_TEMPLATE_FILE = re.compile(
    r"^(?:issue_template|pull_request_template|bug_report|feature_request)(?:\.\w+)?$", re.I
)
_CI_DIRS = frozenset({".circleci", ".buildkite", ".azure-pipelines", ".ci"})
_CI_FILE = re.compile(
    r"^(?:\.gitlab-ci\.ya?ml|\.travis\.ya?ml|appveyor\.ya?ml|azure-pipelines\.ya?ml"
    r"|jenkinsfile|\.pre-commit-config\.ya?ml|codecov\.ya?ml|\.codecov\.ya?ml|tox\.ini"
    r"|noxfile\.py|dependabot\.ya?ml|\.readthedocs\.ya?ml|readthedocs\.ya?ml)$",
    re.I,
)
_BUILD_FILE = re.compile(
    r"^(?:setup\.py|setup\.cfg|pyproject\.toml|manifest\.in|makefile|gnumakefile|cmakelists\.txt"
    r"|.+\.cmake|dockerfile|.+\.dockerfile|docker-compose\.ya?ml|compose\.ya?ml"
    r"|requirements(?:[-_.]\w+)?\.(?:txt|in)|pipfile|environment\.ya?ml|package\.json"
    r"|tsconfig(?:\.\w+)?\.json|cargo\.toml|go\.mod|go\.sum|pom\.xml|build\.gradle(?:\.kts)?"
    r"|settings\.gradle(?:\.kts)?|gradle\.properties|meson\.build|configure\.ac|bazel|build\.bazel"
    r"|workspace|\.bazelrc|webpack\.config\.[cm]?js|rollup\.config\.[cm]?js|babel\.config\.\w+"
    r"|\.babelrc|\.eslintrc(?:\.\w+)?|\.prettierrc(?:\.\w+)?|\.flake8|\.pylintrc|pylintrc"
    r"|mypy\.ini|pytest\.ini|\.coveragerc|\.editorconfig|\.gitignore|\.gitattributes)$",
    re.I,
)


@functools.lru_cache(maxsize=1 << 16)  # ranking asks for the same candidate paths many times
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
    if any(d in _TEMPLATE_DIRS for d in lowered) or _TEMPLATE_FILE.match(filename):
        return PathRole.TEMPLATE
    if (
        lowered[:1] in ([".github"], [".gitlab"])
        or any(d in _CI_DIRS for d in lowered)
        or (_CI_FILE.match(filename))
    ):
        return PathRole.CI
    if filename.lower().endswith(".ipynb"):
        return PathRole.NOTEBOOK
    if _BUILD_FILE.match(filename) and len(directories) <= 1:
        return PathRole.BUILD
    if _is_test_path(lowered, filename):
        return PathRole.TEST
    if any(d in _EXAMPLE_DIRS for d in lowered):
        return PathRole.EXAMPLE
    if any(d in _BENCHMARK_DIRS for d in lowered) or _BENCHMARK_FILE.match(filename):
        return PathRole.BENCHMARK
    if (
        any(d in _DOCS_DIRS for d in lowered)
        or filename.lower().endswith(_DOCS_EXTENSIONS)
        or _DOCS_FILE.match(filename)
    ):
        return PathRole.DOCS
    return PathRole.SOURCE


def _is_test_path(directories: list[str], filename: str) -> bool:
    """``directories`` lower-cased."""
    if _TEST_FILE.match(filename):
        return True
    for index, directory in enumerate(directories):
        if directory in _TEST_DIRS or _TEST_PROJECT_DIR.match(directory):
            return True
        is_source_set = index > 0 and directories[index - 1] == "src" and directory != "main"
        below = directories[index + 1] if index + 1 < len(directories) else ""
        if is_source_set and "test" in directory and below in _JVM_LANGUAGE_DIRS:
            return True
    return False


VALUE_CLASSES = ("source", "test", "docs", "vendored")
_VALUE_CLASS = {
    PathRole.SOURCE: "source",
    PathRole.TEST: "test",
    PathRole.DOCS: "docs",
    PathRole.EXAMPLE: "docs",
    PathRole.VENDORED: "vendored",
    PathRole.GENERATED: "vendored",
    PathRole.BENCHMARK: "test",
    PathRole.NOTEBOOK: "docs",
    PathRole.TEMPLATE: "docs",
    PathRole.CI: "docs",
    PathRole.BUILD: "docs",
}


def value_class(relative_path: str) -> str:
    """How much a file's vectors are worth, as one of ``VALUE_CLASSES`` (most valuable first):
    source, then tests, then docs and examples, then vendored and generated code."""
    return _VALUE_CLASS[classify_path(relative_path)]
