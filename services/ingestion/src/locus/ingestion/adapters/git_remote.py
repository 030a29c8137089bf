"""Git sources through the ``git`` CLI: one bare mirror per source under the data dir, a fetch of
the source's ref with at most ``history_commits`` commits of its history (the change history the
learned ranker reads; 1 when history is off), its commit's tree listed (``ls-tree``) and its blobs
read in batches (``cat-file --batch``) without a work tree.

A token reaches git only through the environment of the git process: an environment-scoped
credential helper (``GIT_CONFIG_*`` variables) prints it from a variable, so it is never on a
command line (``ps``), in a file or in the mirror's config. Git's stderr is redacted (and the
secret itself masked) before it goes into a log line or an error message. ``GIT_ALLOW_PROTOCOL``
keeps git to the allowed transports, even across redirects and helpers.
"""

from __future__ import annotations

import logging
import shlex
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from locus.config.redaction import safe_message
from locus.ingestion.adapters.git import GIT_OPTIONS, git_environment
from locus.ingestion.domain.errors import GitRefNotFound, GitSourceUnavailable
from locus.ingestion.domain.git_sources import is_commit_id
from locus.ingestion.domain.git_tree import TreeEntry, parse_tree_listing

log = logging.getLogger(__name__)

FETCHED_REF = "refs/locus/fetched"  # keeps the scanned commit reachable in the mirror
_HELPER = (
    '!f() { test "$1" = get || exit 0; '
    'printf "username=%s\\npassword=%s\\n" "$LOCUS_GIT_USERNAME" "$LOCUS_GIT_PASSWORD"; }; f'
)
_UNKNOWN_REF = (
    "couldn't find remote ref",
    "not our ref",
    "no such remote ref",
    "unadvertised object",
    "remote error: upload-pack: not our ref",
)
_AUTHENTICATION = (
    "authentication failed",
    "could not read username",
    "could not read password",
    "terminal prompts disabled",
    "http basic: access denied",
    "the requested url returned error: 401",
    "the requested url returned error: 403",
    "permission denied (publickey",
    "invalid username or password",
)


@dataclass(frozen=True)
class GitCredential:
    """What git may authenticate with: a token (``user:token`` or a bare token, sent with the
    user ``x-access-token``) for http(s), or an ssh private key file for ssh."""

    token: str = field(default="", repr=False)
    ssh_key_file: str = ""

    @property
    def username(self) -> str:
        return self.token.split(":", 1)[0] if ":" in self.token else "x-access-token"

    @property
    def password(self) -> str:
        return self.token.split(":", 1)[1] if ":" in self.token else self.token


class GitRemotes:
    """Bare mirrors of git sources under ``mirror_root`` (one per source id)."""

    def __init__(
        self,
        mirror_root: Path,
        *,
        timeout: float,
        protocols: Sequence[str],
        ssh_known_hosts: Path | None = None,
        history_commits: int = 1,
    ) -> None:
        self._root = mirror_root
        self._depth = max(1, history_commits)
        self._ssh = "ssh -o BatchMode=yes"
        if ssh_known_hosts is not None:
            self._ssh += f" -o UserKnownHostsFile={shlex.quote(str(ssh_known_hosts))}"
        self._timeout = timeout
        self._protocols = ":".join(protocols)
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def mirror(self, source_id: str) -> Path:
        return self._root / source_id

    def scanned_history(self, source_id: str) -> tuple[Path, str] | None:
        """Where the history of the commit the last scan fetched is: the source's bare mirror
        and the ref that keeps that commit (``FETCHED_REF``); None before the mirror exists
        (a mirror without the ref has no history to give: the reader finds no commit)."""
        mirror = self.mirror(source_id)
        return (mirror, FETCHED_REF) if (mirror / "HEAD").exists() else None

    def list_refs(self, url: str, credential: GitCredential) -> dict[str, str]:
        """Ref name → object id as the remote advertises them (raises when unreachable)."""
        output = self._git(
            ["ls-remote", "--end-of-options", url], url=url, credential=credential, ref=""
        )
        refs = {}
        for line in output.decode("utf-8", "replace").splitlines():
            object_id, _, name = line.partition("\t")
            if name:
                refs[name] = object_id
        return refs

    def fetch(self, source_id: str, url: str, ref: str, credential: GitCredential) -> str:
        """Fetch ``ref`` (a branch, tag, full ref or commit id; "" = HEAD) into the source's
        mirror with at most ``history_commits`` commits of history where the ref is a name or a
        full commit id (a later fetch brings only what is new); the commit's sha."""
        with self._lock(source_id):
            mirror = self._ensure_mirror(source_id)
            wanted = ref or "HEAD"
            try:
                self._git(
                    [
                        "fetch",
                        f"--depth={self._depth}",
                        "--no-tags",
                        "--end-of-options",
                        url,
                        wanted,
                    ],
                    mirror=mirror,
                    url=url,
                    credential=credential,
                    ref=wanted,
                )
                sha = self._rev_parse(mirror, "FETCH_HEAD^{commit}")
            except GitRefNotFound:
                if not is_commit_id(ref):
                    raise
                # An abbreviated id (or a server that refuses unadvertised ids): fetch every
                # branch and tag, then look the commit up among them.
                self._git(
                    [
                        "fetch",
                        "--no-tags",
                        "--end-of-options",
                        url,
                        "+refs/heads/*:refs/locus/all/heads/*",
                        "+refs/tags/*:refs/locus/all/tags/*",
                    ],
                    mirror=mirror,
                    url=url,
                    credential=credential,
                    ref=ref,
                )
                sha = self._rev_parse(mirror, f"{ref}^{{commit}}")
                if not sha:
                    raise GitRefNotFound(
                        f"git_ref {ref!r}: no commit, branch or tag of that name in "
                        f"{safe_message(url)}"
                    ) from None
            if not sha:
                raise GitRefNotFound(
                    f"git_ref {wanted!r} of {safe_message(url)} does not point at a commit"
                )
            self._git(["update-ref", FETCHED_REF, sha], mirror=mirror, url=url, ref=ref)
            return sha

    def tree(self, source_id: str, sha: str) -> list[TreeEntry]:
        mirror = self.mirror(source_id)
        output = self._git(
            ["ls-tree", "-r", "-z", "--long", "--full-tree", sha], mirror=mirror, url="", ref=sha
        )
        return parse_tree_listing(output)

    def read_blobs(self, source_id: str, object_ids: Sequence[str]) -> Mapping[str, bytes]:
        """Contents of the blobs (``cat-file --batch``); missing ones are left out."""
        if not object_ids:
            return {}
        output = self._git(
            ["cat-file", "--batch"],
            mirror=self.mirror(source_id),
            url="",
            ref="",
            stdin="".join(f"{object_id}\n" for object_id in object_ids).encode(),
        )
        found: dict[str, bytes] = {}
        position = 0
        while position < len(output):
            end = output.index(b"\n", position)
            header = output[position:end].decode("ascii", "replace").split()
            position = end + 1
            if len(header) != 3:  # "<id> missing"
                continue
            object_id, kind, size = header[0], header[1], int(header[2])
            if kind == "blob":
                found[object_id] = output[position : position + size]
            position += size + 1
        return found

    def remove_mirror(self, source_id: str) -> None:
        """Delete the source's bare mirror (its source was deleted)."""
        with self._lock(source_id):
            shutil.rmtree(self.mirror(source_id), ignore_errors=True)
        with self._locks_guard:
            self._locks.pop(source_id, None)

    # running git

    def _lock(self, source_id: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(source_id, threading.Lock())

    def _ensure_mirror(self, source_id: str) -> Path:
        mirror = self.mirror(source_id)
        if not (mirror / "HEAD").exists():
            mirror.mkdir(parents=True, exist_ok=True)
            self._git(["init", "--bare", "--quiet", str(mirror)], url="", ref="")
        return mirror

    def _rev_parse(self, mirror: Path, revision: str) -> str:
        try:
            output = self._git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", revision],
                mirror=mirror,
                url="",
                ref=revision,
            )
        except GitSourceUnavailable:
            return ""
        return output.decode().strip()

    def _git(
        self,
        arguments: list[str],
        *,
        url: str,
        ref: str,
        mirror: Path | None = None,
        credential: GitCredential | None = None,
        stdin: bytes | None = None,
    ) -> bytes:
        command = ["git"]
        if mirror is not None:
            command += ["--git-dir", str(mirror)]
        command += [*GIT_OPTIONS, "-c", "gc.auto=0", "-c", "fetch.recurseSubmodules=false"]
        command += arguments
        secret = credential.token if credential else ""
        try:
            done = subprocess.run(
                command,
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=self._timeout,
                env=self._environment(credential),
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise GitSourceUnavailable(
                f"git did not finish within {self._timeout:g} s for {safe_message(url)} "
                "(LOCUS_INGESTION_GIT_TIMEOUT_SECONDS); check that the server answers"
            ) from None
        except OSError as error:
            raise GitSourceUnavailable(f"git cannot run: {error.strerror}") from None
        if done.returncode == 0:
            return done.stdout
        raise _failure(url, ref, _redacted(done.stderr, secret))

    def _environment(self, credential: GitCredential | None) -> dict[str, str]:
        env = git_environment()
        env["GIT_ALLOW_PROTOCOL"] = self._protocols
        env["GIT_SSH_COMMAND"] = self._ssh
        if credential is None:
            return env
        if credential.ssh_key_file:
            key = shlex.quote(credential.ssh_key_file)
            env["GIT_SSH_COMMAND"] = f"{self._ssh} -o IdentitiesOnly=yes -i {key}"
        if credential.token:
            # An empty helper first drops the helpers of the user's configuration: only the
            # source's own token is offered.
            env.update(
                GIT_CONFIG_COUNT="2",
                GIT_CONFIG_KEY_0="credential.helper",
                GIT_CONFIG_VALUE_0="",
                GIT_CONFIG_KEY_1="credential.helper",
                GIT_CONFIG_VALUE_1=_HELPER,
                LOCUS_GIT_USERNAME=credential.username,
                LOCUS_GIT_PASSWORD=credential.password,
            )
        return env


def _redacted(stderr: bytes, secret: str) -> str:
    text = stderr.decode("utf-8", "replace")
    if secret:
        for part in {secret, *secret.split(":", 1)}:
            if len(part) >= 4:
                text = text.replace(part, "***")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return safe_message(" / ".join(lines[-4:]) or "no message", 600)


def _failure(url: str, ref: str, detail: str) -> Exception:
    lowered = detail.lower()
    shown = safe_message(url)
    if any(marker in lowered for marker in _UNKNOWN_REF):
        return GitRefNotFound(
            f"git_ref {ref!r} is not a branch, tag or commit of {shown} (git: {detail})"
        )
    if any(marker in lowered for marker in _AUTHENTICATION):
        return GitSourceUnavailable(
            f"the git server refused the credentials for {shown}: check the token in the "
            f"source's credential_file / credential_env (git: {detail})"
        )
    if url:
        return GitSourceUnavailable(
            f"cannot read the git repository {shown}: check that the URL names a repository "
            f"and the server is reachable from the ingestion service (git: {detail})"
        )
    return GitSourceUnavailable(f"git failed on the source's mirror: {detail}")
