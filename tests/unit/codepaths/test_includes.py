"""Which file a C/C++ include names through the project's directories."""

import pytest

from locus.codepaths.includes import IncludeDirectories, is_system_header, written_include

pytestmark = pytest.mark.unit

PROJECT = IncludeDirectories(
    [
        "include/fmt/format.h",
        "include/fmt/core.h",
        "src/format.cc",
        "test/gtest/gtest.h",
        "lib/a/config.h",
        "lib/b/config.h",
        "lib/b/sub/user.c",
        "config.h.in",
        "net/base/io.h",
        "json/sub/other/json.h",
        "include/json/json.h",
    ]
)


def test_the_written_path_is_what_follows_the_includers_directory() -> None:
    assert written_include("test/fmt/core.h", "test/core_test.cc") == "fmt/core.h"
    assert written_include("fmt/core.h", "test/core_test.cc") == "fmt/core.h"  # an angle include
    assert written_include("lib/x.h", "lib/sub/y.c") == "lib/x.h"  # `../x.h` climbed out
    assert written_include("x.h", "main.c") == "x.h"  # an includer at the root
    # An angle include: its path in brackets, never below its includer's directory.
    assert written_include("<json/json.h>", "json/reader.cpp") == "json/json.h"


def test_a_header_is_found_below_any_directory_by_its_path_as_written() -> None:
    assert PROJECT.targets("test/fmt/core.h", "test/core_test.cc") == ["include/fmt/core.h"]
    assert PROJECT.targets("fmt/format.h", "src/format.cc") == ["include/fmt/format.h"]
    assert PROJECT.targets("gtest/gtest.h", "test/core_test.cc") == ["test/gtest/gtest.h"]


def test_the_nearest_of_several_wins_and_equals_are_all_kept() -> None:
    assert PROJECT.targets("config.h", "lib/b/sub/user.c") == ["lib/b/config.h"]
    assert PROJECT.targets("tools/config.h", "tools/run.c") == ["lib/a/config.h", "lib/b/config.h"]


def test_an_angle_include_is_looked_up_from_the_include_directories_only() -> None:
    # `<json/json.h>` in json/reader.cpp is not json/reader.cpp's neighbour json/json.h: the
    # nearest file ending with json/json.h is include/json/json.h.
    assert PROJECT.targets("<json/json.h>", "json/reader.cpp") == ["include/json/json.h"]
    assert PROJECT.targets("<fmt/core.h>", "test/core_test.cc") == ["include/fmt/core.h"]


def test_a_projects_own_header_in_a_directory_named_like_a_systems_is_found() -> None:
    # Chromium's layout: `#include "net/base/io.h"` from net/http/.
    assert PROJECT.targets("net/http/net/base/io.h", "net/http/a.cc") == ["net/base/io.h"]


def test_what_the_project_does_not_hold_names_nothing() -> None:
    assert PROJECT.targets("<vector>", "src/format.cc") == []
    assert PROJECT.targets("<stdio.h>", "src/format.cc") == []
    assert PROJECT.targets("src/other/format.h", "src/format.cc") == []  # no other/format.h
    assert PROJECT.targets("src/h", "src/format.cc") == []  # a file name is matched whole
    assert PROJECT.targets("", "src/format.cc") == []


@pytest.mark.parametrize(
    ("written", "system"),
    [
        ("stddef.h", True),
        ("vector", True),
        ("sys/types.h", True),
        ("netinet/in.h", True),
        ("linux/stddef.h", False),  # a kernel header: a project may hold the kernel's shims
        ("net/base/io.h", False),
        ("nlohmann/json.hpp", False),
        ("zstd.h", False),
    ],
)
def test_the_standard_and_system_headers_are_the_compilers(written: str, system: bool) -> None:
    assert is_system_header(written) is system


def test_an_include_never_names_its_own_file() -> None:
    assert IncludeDirectories(["a/x.h"]).targets("a/x.h", "a/x.h") == []
