from __future__ import annotations

import pytest

from locus.ingestion.domain.languages import detect_language

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("relative_path", "language"),
    [
        ("src/app.py", "python"),
        ("stubs/app.pyi", "python"),
        ("web/index.js", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/index.ts", "typescript"),
        ("web/types.d.ts", "typescript"),
        ("web/App.tsx", "tsx"),
        ("Main.java", "java"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("lib/x.c", "c"),
        ("lib/x.h", "c"),
        ("lib/x.cpp", "cpp"),
        ("lib/x.hpp", "cpp"),
        ("App.cs", "csharp"),
        ("app.rb", "ruby"),
        ("index.php", "php"),
        ("Main.kt", "kotlin"),
        ("Main.scala", "scala"),
        ("App.swift", "swift"),
        ("run.sh", "shell"),
        ("README.md", "markdown"),
        ("docs/index.rst", "restructuredtext"),
        ("ci.yml", "yaml"),
        ("ci.yaml", "yaml"),
        ("pyproject.toml", "toml"),
        ("package.json", "json"),
        ("schema.sql", "sql"),
        ("index.html", "html"),
        ("style.css", "css"),
        ("protos/locus/v1/events.proto", "protobuf"),
        ("SRC/APP.PY", "python"),
        ("Dockerfile", "dockerfile"),
        ("deploy/Dockerfile.prod", "dockerfile"),
        ("Makefile", "make"),
        ("CMakeLists.txt", "cmake"),
    ],
)
def test_detects_language_by_file_name_and_extension(relative_path: str, language: str) -> None:
    assert detect_language(relative_path, b"") == language


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#!/usr/bin/env python3\nprint(1)\n", "python"),
        (b"#!/usr/bin/python3.11\n", "python"),
        (b"#!/bin/bash\nset -e\n", "shell"),
        (b"#! /bin/sh\n", "shell"),
        (b"#!/usr/bin/env -S node --no-warnings\n", "javascript"),
        (b"#!/usr/bin/env LC_ALL=C ruby\n", "ruby"),
        (b"\xef\xbb\xbf#!/usr/bin/env perl\n", "perl"),
    ],
)
def test_detects_language_from_a_shebang_when_the_name_says_nothing(
    head: bytes, language: str
) -> None:
    assert detect_language("bin/tool", head) == language


def test_the_extension_wins_over_the_shebang() -> None:
    assert detect_language("scripts/build.py", b"#!/bin/sh\n") == "python"


@pytest.mark.parametrize(
    ("relative_path", "head"),
    [
        ("LICENSE", b"MIT License\n"),
        ("data.unknownext", b""),
        ("bin/tool", b"#!/usr/bin/env\n"),
        ("bin/tool", b"#!/usr/bin/env some-unknown-interpreter\n"),
        ("bin/tool", b"# not a shebang\n"),
    ],
)
def test_returns_none_when_the_language_is_unknown(relative_path: str, head: bytes) -> None:
    assert detect_language(relative_path, head) is None
