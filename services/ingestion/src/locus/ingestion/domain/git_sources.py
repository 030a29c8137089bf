"""What a git source may be: an allowed URL (https, ssh, git; file only under the allowed bases;
http only when the operator allows it), a ref that cannot be read as an option or a refspec, and
a credential named (a file under the credential bases, or a variable with the agreed prefix),
never given. Pure checks; the file:// path is resolved by ``source_paths``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from locus.ingestion.domain.errors import InvalidRequest

MAX_URL_LENGTH = 2048
MAX_REF_LENGTH = 200
MAX_POLL_SECONDS = 7 * 24 * 3600
SCHEMES = ("https", "ssh", "git", "file")
# user@host:path, the scp-like form of an ssh URL (no scheme, a colon before the first slash).
_SCP_LIKE = re.compile(r"^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9.-]+:(?!//)[^\s]+$")
# A full or abbreviated commit id (SHA-1 or SHA-256).
_COMMIT_ID = re.compile(r"^[0-9a-f]{7,64}$")
_FORBIDDEN_IN_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")


@dataclass(frozen=True, slots=True)
class GitLocation:
    """A validated git URL: its scheme ("ssh" for the scp-like form) and, for file://, the
    local path it names."""

    url: str
    scheme: str
    local_path: str = ""


def validate_git_url(url: str, *, allow_http: bool = False) -> GitLocation:
    url = url.strip()
    if not url:
        raise InvalidRequest("git_url must not be empty")
    if len(url) > MAX_URL_LENGTH:
        raise InvalidRequest(f"git_url is longer than {MAX_URL_LENGTH} characters")
    if url.startswith("-") or any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        raise InvalidRequest("git_url must not start with '-' or hold spaces or control characters")
    allowed = (*SCHEMES, "http") if allow_http else SCHEMES
    if "://" not in url:
        if _SCP_LIKE.match(url) and "::" not in url:
            return GitLocation(url, "ssh")
        raise InvalidRequest(
            f"git_url {url!r} is not a URL; give https://, ssh://, git:// or file:// "
            "(a local directory goes in 'path' instead)"
        )
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in allowed:
        hint = " (plain http sends credentials in clear; use https)" if scheme == "http" else ""
        raise InvalidRequest(
            f"git_url scheme {scheme!r} is not allowed; use one of {', '.join(allowed)}{hint}"
        )
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise InvalidRequest("a file:// git_url names a local path: file:///path/to/repo")
        path = unquote(parts.path)
        if not path.startswith("/") or ".." in PurePosixPath(path).parts:
            raise InvalidRequest("a file:// git_url needs an absolute path without '..'")
        return GitLocation(url, scheme, path)
    if parts.password is not None:
        raise InvalidRequest(
            "git_url must not carry a password or token (it would be stored and shown); "
            "name a credential_file or credential_env instead"
        )
    if not parts.hostname:
        raise InvalidRequest(f"git_url {url!r} names no host")
    return GitLocation(url, scheme)


def validate_git_ref(ref: str) -> str:
    """A branch, tag, full ref name or commit id; empty stays empty (the remote's HEAD)."""
    ref = ref.strip()
    if len(ref) > MAX_REF_LENGTH:
        raise InvalidRequest(f"git_ref is longer than {MAX_REF_LENGTH} characters")
    if ref and (
        ref.startswith(("-", "/", "."))
        or ref.endswith(("/", ".", ".lock"))
        or _FORBIDDEN_IN_REF.search(ref)
    ):
        raise InvalidRequest(
            f"git_ref {ref!r} is not a valid branch, tag or commit "
            "(no spaces, '..', '~', '^', ':', '?', '*', '[' or '\\'; not starting with '-')"
        )
    return ref


def resolve_advertised(refs: Mapping[str, str], ref: str) -> str | None:
    """The commit a ref name points at among a remote's advertised refs (``git ls-remote``):
    "" is HEAD; a tag is peeled to its commit; a branch wins over a tag of the same name, as
    git's own lookup order has it. None when no advertised ref has that name."""
    if not ref:
        return refs.get("HEAD")
    candidates = (ref,) if ref.startswith("refs/") else (f"refs/heads/{ref}", f"refs/tags/{ref}")
    for name in candidates:
        if name in refs:
            return refs.get(f"{name}^{{}}", refs[name])
    return None


def is_commit_id(ref: str) -> bool:
    """Whether the ref reads as a commit id (hexadecimal, 7 to 64 characters)."""
    return bool(_COMMIT_ID.match(ref))


def validate_credential_env(name: str, prefix: str) -> str:
    name = name.strip()
    if not name:
        return ""
    if not _ENV_NAME.match(name):
        raise InvalidRequest(f"credential_env {name!r} is not an environment variable name")
    if not prefix or not name.startswith(prefix):
        raise InvalidRequest(
            f"credential_env {name!r} is refused: git tokens are read only from variables "
            f"starting with {prefix!r} (LOCUS_INGESTION_CREDENTIAL_ENV_PREFIX), so no other "
            "secret of the service can be sent to a git server"
        )
    return name


def validate_poll_seconds(seconds: int, minimum: float) -> int:
    if seconds < 0 or seconds > MAX_POLL_SECONDS:
        raise InvalidRequest(f"poll_seconds must be between 0 and {MAX_POLL_SECONDS}")
    if 0 < seconds < minimum:
        raise InvalidRequest(
            f"poll_seconds {seconds} is below the minimum of {minimum:g} "
            "(LOCUS_INGESTION_MIN_POLL_SECONDS)"
        )
    return seconds
