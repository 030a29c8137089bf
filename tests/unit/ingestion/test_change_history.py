"""Change history from real ``git log`` output: counts, recency, the message match and its
limits, a source root below the repository top, and a tree outside git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from locus.ingestion.adapters.git_history import GitHistoryReader, read_history
from locus.ingestion.domain.change_history import (
    ChangeHistory,
    Commit,
    FileChanges,
    history_terms,
    merge_changes,
    parse_git_log,
)


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "HOME": str(repo),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def commit(repo: Path, message: str, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, "Add the billing module", {"billing/invoice.py": "x = 1\n", "README.md": "shop\n"})
    commit(
        root,
        "Fix timezone handling in parseDate\n\nDates lost their UTC offset.",
        {"app/dates.py": "a\n"},
    )
    commit(root, "Round invoice totals half up", {"billing/invoice.py": "x = 2\n"})
    commit(
        root, "Refactor invoice rendering", {"billing/invoice.py": "x = 3\n", "app/view.py": "v\n"}
    )
    return root


def test_terms_split_identifiers_and_drop_stop_words() -> None:
    assert history_terms("Fix parseHTTPDate for the UTC_offset") == [
        "fix",
        "parsehttpdate",
        "parse",
        "http",
        "date",
        "utc_offset",
        "utc",
        "offset",
    ]


def test_counts_recency_and_percentile_from_a_real_repository(repo: Path) -> None:
    history = read_history(str(repo), "HEAD", 100, 30)
    assert history is not None
    assert history.commits == 4
    found = history.changes("", ["billing/invoice.py", "app/dates.py", "README.md", "nope.py"])
    assert set(found) == {"billing/invoice.py", "app/dates.py", "README.md"}
    invoice, dates, readme = found["billing/invoice.py"], found["app/dates.py"], found["README.md"]
    assert (invoice.commits, invoice.last_change) == (3, 0)
    assert (dates.commits, dates.last_change) == (1, 2)
    assert (readme.commits, readme.last_change) == (1, 3)
    # 4 files in the history (invoice, dates, view, README): invoice changes most often.
    assert invoice.change_percentile == 1.0
    assert dates.change_percentile == 0.75
    assert invoice.message_score == 0.0  # no question, no match


def test_the_question_matches_the_messages_of_the_commits_that_changed_a_file(repo: Path) -> None:
    history = read_history(str(repo), "HEAD", 100, 30)
    assert history is not None
    paths = ["billing/invoice.py", "app/dates.py", "app/view.py"]
    found = history.changes("Dates parsed without their UTC offset (parse_date)", paths)
    assert found["app/dates.py"].message_score > 0
    assert found["billing/invoice.py"].message_score == 0
    totals = history.changes("invoice totals round the wrong way", paths)
    assert totals["billing/invoice.py"].message_score > totals["app/view.py"].message_score > 0


def test_max_commits_limits_what_is_read(repo: Path) -> None:
    history = read_history(str(repo), "HEAD", 2, 30)
    assert history is not None
    assert history.commits == 2
    assert "app/dates.py" not in history.changes("", ["app/dates.py"])


def test_a_source_below_the_repository_top_sees_its_own_paths(repo: Path) -> None:
    reader = GitHistoryReader(max_commits=100, timeout_seconds=30, cached_roots=4)
    history = reader.read(repo / "billing")
    assert history is not None
    assert history.commits == 3  # the commits that touched billing/
    assert set(history.changes("", ["invoice.py", "billing/invoice.py"])) == {"invoice.py"}


def test_a_tree_outside_git_has_no_history(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("a = 1\n")
    reader = GitHistoryReader(max_commits=100, timeout_seconds=30, cached_roots=4)
    assert reader.read(plain) is None
    assert read_history(str(plain / "absent"), "HEAD", 100, 30) is None


def test_the_reader_reads_again_only_when_head_moves(repo: Path) -> None:
    reader = GitHistoryReader(max_commits=100, timeout_seconds=30, cached_roots=4)
    first = reader.read(repo)
    assert first is not None
    assert reader.read(repo) is first
    commit(repo, "Document dates", {"app/dates.py": "b\n"})
    moved = reader.read(repo)
    assert moved is not None
    assert moved is not first
    assert moved.commits == 5
    assert moved.changes("", ["app/dates.py"])["app/dates.py"].last_change == 0


def test_no_history_when_switched_off(repo: Path) -> None:
    assert GitHistoryReader(max_commits=0, timeout_seconds=30, cached_roots=4).read(repo) is None


def test_parse_keeps_bodies_and_skips_broken_records() -> None:
    text = (
        "\x00abc\x1f1700000000\x1fFix a\x1fline one\nline two\x1e\n\nsrc/a.py\nsrc/b.py\n"
        "\x00broken record\n"
        "\x00def\x1f1600000000\x1fAdd b\x1f\x1e\n\nsrc/b.py\n"
    )
    commits = parse_git_log(text)
    assert commits == [
        Commit("abc", 1700000000, "Fix a\nline one\nline two", ("src/a.py", "src/b.py")),
        Commit("def", 1600000000, "Add b", ("src/b.py",)),
    ]
    history = ChangeHistory(commits)
    assert history.changes("", ["src/b.py"])["src/b.py"].commits == 2


def test_two_sources_sharing_a_path_keep_the_better_match() -> None:
    weak = FileChanges("a.py", 5, 0, 1.0, 0.5)
    strong = FileChanges("a.py", 1, 3, 0.5, 2.0)
    other = FileChanges("b.py", 1, 1, 0.5, 0.0)
    assert merge_changes([{"a.py": weak}, {"a.py": strong, "b.py": other}]) == {
        "a.py": strong,
        "b.py": other,
    }


def test_a_restarted_reader_uses_the_stored_history_of_the_same_head(
    repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    first = GitHistoryReader(max_commits=100, timeout_seconds=30, cached_roots=4, store_dir=store)
    read = first.read(repo)
    assert read is not None
    (stored,) = store.glob("*.json")
    # Mark the stored copy: a new reader (a restarted service) must answer from it.
    data = json.loads(stored.read_text())
    data["commits"] = 999
    stored.write_text(json.dumps(data))
    restarted = GitHistoryReader(
        max_commits=100, timeout_seconds=30, cached_roots=4, store_dir=store
    )
    again = restarted.read(repo)
    assert again is not None
    assert again.commits == 999
    paths = ["billing/invoice.py", "app/dates.py"]
    assert again.changes("invoice totals", paths) == read.changes("invoice totals", paths)

    # Another HEAD, another commit limit or a damaged file: git is read again.
    def commits_read(max_commits: int) -> int:
        history = GitHistoryReader(max_commits, 30, 4, store_dir=store).read(repo)
        assert history is not None
        return history.commits

    stored.write_text("{not json")
    assert commits_read(100) == 4
    assert commits_read(2) == 2
    commit(repo, "Document dates", {"app/dates.py": "b\n"})
    assert commits_read(100) == 5
    assert len(list(store.glob("*.json"))) == 1  # one file per root


def test_credentials_in_commit_messages_never_reach_the_stored_history(
    repo: Path, tmp_path: Path
) -> None:
    commit(
        repo,
        "Fix the upload client\n\nretried with https://ci:hunter2@example.com/x?token=abc123xyz",
        {"app/upload.py": "u\n"},
    )
    store = tmp_path / "store"
    history = GitHistoryReader(100, 30, 4, store_dir=store).read(repo)
    assert history is not None
    assert history.changes("upload client", ["app/upload.py"])["app/upload.py"].message_score > 0
    (stored,) = store.glob("*.json")
    text = stored.read_text()
    assert "hunter2" not in text
    assert "abc123xyz" not in text
    assert "upload" in text
