from __future__ import annotations

import os
from pathlib import Path

import pytest

from locus.ingestion.domain.errors import (
    IngestionError,
    InvalidSourceRoot,
    PathEscapesRoot,
    SourceRootNotAllowed,
)
from locus.ingestion.domain.source_paths import resolve_source_root, safe_join

pytestmark = pytest.mark.unit


@pytest.fixture
def base(tmp_path: Path) -> Path:
    directory = tmp_path / "allowed"
    directory.mkdir()
    return directory


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    return directory


def test_accepts_a_directory_inside_an_allowed_base(base: Path) -> None:
    repository = base / "repo"
    repository.mkdir()

    assert resolve_source_root(str(repository), [base]) == repository.resolve()


def test_accepts_the_allowed_base_itself(base: Path) -> None:
    assert resolve_source_root(str(base), [base]) == base.resolve()


def test_resolves_a_relative_path_against_the_current_directory(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (base / "repo").mkdir()
    monkeypatch.chdir(base)

    assert resolve_source_root("repo", [base]) == (base / "repo").resolve()


def test_accepts_a_path_inside_a_base_given_through_a_symlink(tmp_path: Path, base: Path) -> None:
    (base / "repo").mkdir()
    base_link = tmp_path / "base-link"
    base_link.symlink_to(base, target_is_directory=True)

    assert resolve_source_root(str(base / "repo"), [base_link]) == (base / "repo").resolve()


def test_refuses_a_directory_outside_every_base_with_an_actionable_message(
    tmp_path: Path, base: Path, outside: Path
) -> None:
    other_base = tmp_path / "other"
    other_base.mkdir()

    with pytest.raises(SourceRootNotAllowed) as raised:
        resolve_source_root(str(outside), [base, other_base])

    message = str(raised.value)
    assert str(outside.resolve()) in message
    assert f"({base.resolve()}, {other_base.resolve()})" in message
    assert "LOCUS_INGESTION_ALLOWED_BASES" in message
    assert "locus up --allow-base DIR" in message  # what a local stack's user changes
    assert isinstance(raised.value, IngestionError)


def test_refuses_a_sibling_that_merely_shares_the_base_prefix(tmp_path: Path, base: Path) -> None:
    sibling = tmp_path / "allowed-evil"
    sibling.mkdir()

    with pytest.raises(SourceRootNotAllowed):
        resolve_source_root(str(sibling), [base])


def test_refuses_a_symlink_inside_a_base_that_points_outside(base: Path, outside: Path) -> None:
    link = base / "escape"
    link.symlink_to(outside, target_is_directory=True)

    with pytest.raises(SourceRootNotAllowed) as raised:
        resolve_source_root(str(link), [base])

    assert str(outside.resolve()) in str(raised.value)


def test_refuses_dot_dot_that_climbs_out_of_the_base(base: Path, outside: Path) -> None:
    with pytest.raises(SourceRootNotAllowed):
        resolve_source_root(f"{base}/../outside", [base])


def test_refuses_a_missing_directory(base: Path) -> None:
    with pytest.raises(InvalidSourceRoot, match="does not exist"):
        resolve_source_root(str(base / "missing"), [base])


def test_refuses_a_file(base: Path) -> None:
    file = base / "README.md"
    file.write_text("hello")

    with pytest.raises(InvalidSourceRoot, match="not a directory"):
        resolve_source_root(str(file), [base])


def test_does_not_reveal_whether_a_path_outside_the_bases_exists(base: Path, outside: Path) -> None:
    with pytest.raises(SourceRootNotAllowed):
        resolve_source_root(str(outside / "missing"), [base])


@pytest.mark.parametrize("path", ["", "   ", "/tmp/a\x00b"])
def test_refuses_empty_or_nul_paths(base: Path, path: str) -> None:
    with pytest.raises(InvalidSourceRoot):
        resolve_source_root(path, [base])


def test_refuses_everything_when_no_base_is_configured(base: Path) -> None:
    with pytest.raises(SourceRootNotAllowed, match="LOCUS_INGESTION_ALLOWED_BASES"):
        resolve_source_root(str(base), [])


def test_safe_join_returns_the_path_inside_the_root(base: Path) -> None:
    (base / "pkg").mkdir()
    (base / "pkg" / "module.py").write_text("x = 1\n")

    assert safe_join(base, "pkg/module.py") == (base / "pkg" / "module.py").resolve()
    assert safe_join(base, "pkg/not-yet-there.py") == (base / "pkg/not-yet-there.py").resolve()


@pytest.mark.parametrize(
    "relative_path", ["../x", "a/../../x", "a/../b", "..", "/etc/passwd", "a\x00b"]
)
def test_safe_join_refuses_paths_that_leave_the_root(base: Path, relative_path: str) -> None:
    with pytest.raises(PathEscapesRoot):
        safe_join(base, relative_path)


def test_safe_join_refuses_a_symlink_that_leaves_the_root(base: Path, outside: Path) -> None:
    (outside / "secret.txt").write_text("secret")
    (base / "link").symlink_to(outside, target_is_directory=True)

    with pytest.raises(PathEscapesRoot, match="outside the source root"):
        safe_join(base, "link/secret.txt")


def test_safe_join_allows_a_symlink_that_stays_inside_the_root(base: Path) -> None:
    (base / "real").mkdir()
    (base / "real" / "a.py").write_text("")
    os.symlink(base / "real", base / "alias")

    assert safe_join(base, "alias/a.py") == (base / "real" / "a.py").resolve()
