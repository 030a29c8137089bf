from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from locus.ingestion.adapters.git import tracked_paths
from locus.ingestion.domain.ignore_rules import IgnoreRules
from locus.ingestion.domain.model import ScannedFile
from locus.ingestion.domain.scanner import walk_source

from .conftest import WriteFile

pytestmark = pytest.mark.unit


def scanned_paths(root: Path) -> list[str]:
    return [
        item.relative_path
        for item in walk_source(root, max_file_bytes=1024 * 1024)
        if isinstance(item, ScannedFile)
    ]


def test_a_nested_gitignore_applies_only_to_its_own_subtree(
    tmp_path: Path, write_file: WriteFile
) -> None:
    write_file(tmp_path, ".gitignore", "*.log\n")
    write_file(tmp_path, "sub/.gitignore", "*.tmp\n/anchored.py\n")
    for path in ["a.tmp", "a.log", "anchored.py", "sub/b.tmp", "sub/c.log", "sub/d.py"]:
        write_file(tmp_path, path, "x\n")
    write_file(tmp_path, "sub/anchored.py", "x\n")
    write_file(tmp_path, "sub/deeper/anchored.py", "x\n")

    assert scanned_paths(tmp_path) == [
        ".gitignore",
        "a.tmp",
        "anchored.py",
        "sub/.gitignore",
        "sub/d.py",
        "sub/deeper/anchored.py",
    ]


def test_negation_re_includes_as_in_git(tmp_path: Path, write_file: WriteFile) -> None:
    write_file(tmp_path, ".gitignore", "*.py\n!keep.py\n*.txt\n")
    write_file(tmp_path, "docs/.gitignore", "!notes.txt\n")
    for path in ["drop.py", "keep.py", "lib/keep.py", "lib/drop.py", "docs/notes.txt", "a.txt"]:
        write_file(tmp_path, path, "x\n")

    assert scanned_paths(tmp_path) == [
        ".gitignore",
        "docs/.gitignore",
        "docs/notes.txt",
        "keep.py",
        "lib/keep.py",
    ]


def test_a_file_cannot_be_re_included_when_its_directory_is_ignored(
    tmp_path: Path, write_file: WriteFile
) -> None:
    write_file(tmp_path, ".gitignore", "logs/\n!logs/important.log\n")
    write_file(tmp_path, "logs/important.log", "x\n")

    assert scanned_paths(tmp_path) == [".gitignore"]


def test_locusignore_files_use_the_same_syntax_at_any_level(
    tmp_path: Path, write_file: WriteFile
) -> None:
    write_file(tmp_path, ".locusignore", "secrets/\n")
    write_file(tmp_path, "app/.locusignore", "*.sql\n!schema.sql\n")
    for path in ["secrets/key.pem", "app/dump.sql", "app/schema.sql", "dump.sql"]:
        write_file(tmp_path, path, "x\n")

    assert scanned_paths(tmp_path) == [
        ".locusignore",
        "app/.locusignore",
        "app/schema.sql",
        "dump.sql",
    ]


def test_locusignore_can_re_include_what_gitignore_ignores(
    tmp_path: Path, write_file: WriteFile
) -> None:
    write_file(tmp_path, ".gitignore", "generated/\n")
    write_file(tmp_path, ".locusignore", "!generated/\n")
    write_file(tmp_path, "generated/schema.py", "x = 1\n")

    assert "generated/schema.py" in scanned_paths(tmp_path)


@pytest.mark.parametrize(
    "relative_path",
    [
        ".git/config",
        ".hg/hgrc",
        ".svn/entries",
        "web/node_modules/react/index.js",
        "pkg/__pycache__/mod.py",
        ".venv/lib/site.py",
        "venv/lib/site.py",
        ".tox/py311/x.py",
        ".mypy_cache/x.json",
        ".pytest_cache/README.md",
        "dist/app.js",
        "build/lib/app.py",
        ".locus/state.json",
        "pkg/thing.egg-info/PKG-INFO",
    ],
)
def test_built_in_excludes_apply_at_any_depth(
    tmp_path: Path, write_file: WriteFile, relative_path: str
) -> None:
    write_file(tmp_path, relative_path, "x\n")
    write_file(tmp_path, "kept.py", "x\n")

    assert scanned_paths(tmp_path) == ["kept.py"]


def test_default_excludes_can_be_re_included_but_vcs_metadata_cannot(
    tmp_path: Path, write_file: WriteFile
) -> None:
    write_file(tmp_path, ".locusignore", "!build/\n!.git/\n!.locus/\n")
    write_file(tmp_path, "build/rules.py", "x\n")
    write_file(tmp_path, ".git/config", "x\n")
    write_file(tmp_path, ".locus/state.json", "{}\n")

    assert scanned_paths(tmp_path) == [".locusignore", "build/rules.py"]


def test_git_info_exclude_is_honoured(tmp_path: Path, write_file: WriteFile) -> None:
    write_file(tmp_path, ".git/info/exclude", "scratch.py\n")
    write_file(tmp_path, "scratch.py", "x\n")
    write_file(tmp_path, "kept.py", "x\n")

    assert scanned_paths(tmp_path) == ["kept.py"]


def test_ignored_directories_are_pruned_without_descending(
    tmp_path: Path, write_file: WriteFile
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "repo"
    write_file(root, ".gitignore", "vendor/\n")
    write_file(root, "vendor/lib.py", "x\n")
    # Descending into vendor/ would report this escaping symlink.
    (root / "vendor" / "escape").symlink_to(outside, target_is_directory=True)

    reported = [item.relative_path for item in walk_source(root, max_file_bytes=1024)]

    assert reported == [".gitignore"]


def test_is_ignored_checks_parent_directories_and_anchors_layers_at_their_base() -> None:
    rules = (
        IgnoreRules.defaults()
        .with_patterns("", ".gitignore", ["logs/", "!logs/keep.log"])
        .with_patterns("sub", "sub/.gitignore", ["/only-here.py"])
    )

    assert rules.is_ignored("logs/keep.log", is_dir=False)
    assert rules.is_ignored("a/node_modules/x/y.js", is_dir=False)
    assert rules.is_ignored("sub/only-here.py", is_dir=False)
    assert not rules.is_ignored("only-here.py", is_dir=False)
    assert not rules.is_ignored("sub/deeper/only-here.py", is_dir=False)
    assert not rules.is_ignored("other/sub/only-here.py", is_dir=False)


def test_directory_only_patterns_do_not_match_files() -> None:
    rules = IgnoreRules.defaults()

    assert rules.is_excluded_entry("build", is_dir=True)
    assert not rules.is_excluded_entry("build", is_dir=False)


def test_invalid_patterns_are_dropped_and_the_rest_still_apply(
    tmp_path: Path, write_file: WriteFile
) -> None:
    write_file(tmp_path, ".gitignore", "!\n*.log\n\\\n")
    write_file(tmp_path, "debug.log", "x\n")
    write_file(tmp_path, "app.py", "x\n")

    assert scanned_paths(tmp_path) == [".gitignore", "app.py"]


WHITELIST = """*
!*.py
!*.md
!lib/
!lib/*
!scripts
!plugins/
!plugins/*
!tools
*.pyc
notes/
"""


def test_a_whitelist_gitignore_re_includes_its_directories_as_git_does(
    tmp_path: Path, write_file: WriteFile
) -> None:
    """`*` then `!lib/`: git descends into lib/ and keeps its .py files (faceswap's layout).
    Every path's fate is checked against git itself (`git check-ignore --no-index`)."""
    write_file(tmp_path, ".gitignore", WHITELIST)
    paths = [
        "run.py",
        "README.md",
        "data.bin",
        "lib/utils.py",
        "lib/gui/display.py",
        "lib/gui/icon.png",
        "lib/cache.pyc",
        "scripts/train.py",
        "plugins/extract/align.py",
        "tools/sort.py",
        "notes/idea.py",
        "other/x.py",
    ]
    for path in paths:
        write_file(tmp_path, path, "x\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=tmp_path,
        input="\n".join(paths) + "\n",
        capture_output=True,
        text=True,
        check=False,
    )
    ignored_by_git = set(checked.stdout.split())
    assert ignored_by_git >= {"data.bin", "lib/cache.pyc", "notes/idea.py", "other/x.py"}
    assert set(scanned_paths(tmp_path)) == set(paths) - ignored_by_git
    assert "lib/utils.py" in scanned_paths(tmp_path)


def test_files_git_tracks_are_indexed_whatever_gitignore_says(
    tmp_path: Path, write_file: WriteFile
) -> None:
    """As in git, .gitignore only hides untracked files: one force-added (or added before the
    pattern) is indexed; .locusignore still hides what it names, tracked or not."""
    write_file(tmp_path, ".gitignore", "*.gen.py\nplayground/\n")
    write_file(tmp_path, ".locusignore", "secret_tracked.py\n")
    for path in (
        "app.py",
        "schema.gen.py",
        "other.gen.py",
        "playground/try.py",
        "playground/scratch.py",
        "secret_tracked.py",
    ):
        write_file(tmp_path, path, "x = 1\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    subprocess.run(
        ["git", "add", "-f", "app.py", "schema.gen.py", "playground/try.py", "secret_tracked.py"],
        cwd=tmp_path,
        check=True,
        env=env,
    )
    tracked = tracked_paths(tmp_path, timeout=30)
    assert tracked == {"app.py", "schema.gen.py", "playground/try.py", "secret_tracked.py"}
    found = [
        item.relative_path
        for item in walk_source(tmp_path, max_file_bytes=1024 * 1024, tracked=tracked)
        if isinstance(item, ScannedFile)
    ]
    assert found == [".gitignore", ".locusignore", "app.py", "playground/try.py", "schema.gen.py"]
    # Without git's list (not a work tree) the patterns hide them as before.
    assert "schema.gen.py" not in scanned_paths(tmp_path)
    assert tracked_paths(tmp_path / "playground", timeout=30) == {"try.py"}
