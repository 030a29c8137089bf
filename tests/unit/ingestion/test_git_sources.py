"""Git source checks: allowed URLs, refs that cannot act as options or refspecs, credential
names, polling bounds and resolving a ref among a remote's advertised refs."""

from __future__ import annotations

import pytest

from locus.ingestion.domain.errors import InvalidRequest
from locus.ingestion.domain.git_sources import (
    is_commit_id,
    resolve_advertised,
    validate_credential_env,
    validate_git_ref,
    validate_git_url,
    validate_poll_seconds,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("https://github.com/org/repo.git", "https"),
        ("ssh://git@example.com/org/repo.git", "ssh"),
        ("git@example.com:org/repo.git", "ssh"),
        ("git://127.0.0.1:9418/repo.git", "git"),
        ("file:///srv/repos/repo.git", "file"),
    ],
)
def test_allowed_urls_keep_their_scheme(url: str, scheme: str) -> None:
    assert validate_git_url(url).scheme == scheme


def test_a_file_url_names_its_decoded_local_path() -> None:
    assert validate_git_url("file:///srv/my%20repos/r.git").local_path == "/srv/my repos/r.git"


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        ("", "must not be empty"),
        ("ext::sh -c touch% /tmp/pwned", "spaces"),
        ("ext::sh%20-c%20touch", "is not a URL"),
        ("-uhttps://x/y", "must not start with '-'"),
        ("http://example.com/r.git", "use https"),
        ("ftp://example.com/r.git", "not allowed"),
        ("/srv/repos/r.git", "goes in 'path'"),
        ("file://otherhost/srv/r.git", "names a local path"),
        ("file:///srv/../etc/r.git", "without '..'"),
        ("https:///nohost", "names no host"),
        ("https://ci:s3cret@example.com/r.git", "must not carry a password"),
        ("https://x/" + "a" * 3000, "longer than"),
    ],
)
def test_bad_urls_are_refused_with_a_reason(url: str, hint: str) -> None:
    with pytest.raises(InvalidRequest, match=hint.replace("(", r"\(")):
        validate_git_url(url)


def test_http_is_allowed_only_when_the_operator_allows_it() -> None:
    assert validate_git_url("http://127.0.0.1:8080/r.git", allow_http=True).scheme == "http"


@pytest.mark.parametrize("ref", ["main", "release/1.2", "v1.0.0", "refs/heads/main", "", "a1b2c3d"])
def test_plain_refs_pass(ref: str) -> None:
    assert validate_git_ref(ref) == ref


@pytest.mark.parametrize(
    "ref",
    ["-upload-pack=x", "main:refs/x", "a..b", "bad ref", "x~1", "x^", "*", "x.lock", "/x", "@{1}"],
)
def test_refs_that_could_act_as_options_or_refspecs_are_refused(ref: str) -> None:
    with pytest.raises(InvalidRequest, match="not a valid branch, tag or commit"):
        validate_git_ref(ref)


def test_commit_ids_are_hexadecimal_from_7_to_64_characters() -> None:
    assert is_commit_id("a1b2c3d")
    assert is_commit_id("f" * 40)
    assert is_commit_id("0" * 64)
    assert not is_commit_id("a1b2c3")
    assert not is_commit_id("main")
    assert not is_commit_id("A" * 40)


def test_credential_variables_need_the_agreed_prefix() -> None:
    assert validate_credential_env("LOCUS_GIT_TOKEN_GITHUB", "LOCUS_GIT_TOKEN") == (
        "LOCUS_GIT_TOKEN_GITHUB"
    )
    assert validate_credential_env("", "LOCUS_GIT_TOKEN") == ""
    with pytest.raises(InvalidRequest, match="only from variables starting with"):
        validate_credential_env("LOCUS_SERVICE_TOKEN", "LOCUS_GIT_TOKEN")
    with pytest.raises(InvalidRequest, match="not an environment variable name"):
        validate_credential_env("LOCUS_GIT_TOKEN;rm", "LOCUS_GIT_TOKEN")


def test_polling_intervals_have_bounds() -> None:
    assert validate_poll_seconds(0, 30) == 0
    assert validate_poll_seconds(300, 30) == 300
    with pytest.raises(InvalidRequest, match="below the minimum"):
        validate_poll_seconds(5, 30)
    with pytest.raises(InvalidRequest, match="between 0 and"):
        validate_poll_seconds(-1, 30)


def test_a_ref_resolves_among_advertised_refs_branch_first_tags_peeled() -> None:
    refs = {
        "HEAD": "1" * 40,
        "refs/heads/main": "1" * 40,
        "refs/heads/both": "2" * 40,
        "refs/tags/both": "3" * 40,
        "refs/tags/v1": "4" * 40,  # an annotated tag object
        "refs/tags/v1^{}": "5" * 40,  # ... and the commit it points at
    }
    assert resolve_advertised(refs, "") == "1" * 40
    assert resolve_advertised(refs, "main") == "1" * 40
    assert resolve_advertised(refs, "both") == "2" * 40
    assert resolve_advertised(refs, "v1") == "5" * 40
    assert resolve_advertised(refs, "refs/tags/both") == "3" * 40
    assert resolve_advertised(refs, "nope") is None
