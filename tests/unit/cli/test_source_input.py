"""`locus source add` input: git URLs told apart from local directories, polling durations."""

from __future__ import annotations

import pytest

from locus.cli.source_input import duration_seconds, is_git_url

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "text",
    [
        "https://github.com/org/repo.git",
        "ssh://git@example.com/org/repo.git",
        "git@github.com:org/repo.git",
        "git://127.0.0.1/repo.git",
        "file:///srv/repos/repo.git",
    ],
)
def test_git_urls_are_recognised(text: str) -> None:
    assert is_git_url(text)


@pytest.mark.parametrize("text", ["/srv/code", "./repo", "repo", "C:\\code", "me@home"])
def test_local_directories_are_not_urls(text: str) -> None:
    assert not is_git_url(text)


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("30s", 30), ("5m", 300), ("1h", 3600), ("2d", 172800)]
)
def test_durations(text: str, seconds: int) -> None:
    assert duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "5 minutes", "-1", "1.5h", "m"])
def test_bad_durations_say_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError, match=r"e\.g\. 90, 30s, 5m or 1h"):
        duration_seconds(text)
