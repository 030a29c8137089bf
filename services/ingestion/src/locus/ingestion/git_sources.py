"""Service layer of git sources: checking a new source (URL, ref, credential) against its
server, reading a source's commit for a scan, and polling refs for pushes.

A credential is named by the source (a file under ``credential_bases`` or a variable with
``credential_env_prefix``) and read each time git needs it, so the secret is never stored.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from locus.ingestion.adapters.git_remote import GitCredential, GitRemotes
from locus.ingestion.adapters.tables import SourceRow
from locus.ingestion.domain.errors import (
    CredentialUnavailable,
    GitRefNotFound,
    IngestionError,
    InvalidRequest,
)
from locus.ingestion.domain.git_sources import (
    GitLocation,
    is_commit_id,
    resolve_advertised,
    validate_credential_env,
    validate_git_ref,
    validate_git_url,
    validate_poll_seconds,
)
from locus.ingestion.domain.git_tree import TreeReadCache, walk_tree
from locus.ingestion.domain.model import ScannedFile, SkippedFile
from locus.ingestion.domain.source_paths import resolve_source_root
from locus.ingestion.settings import IngestionSettings

log = logging.getLogger(__name__)

MAX_CREDENTIAL_BYTES = 64 * 1024


@dataclass(frozen=True)
class GitSourceSpec:
    """A checked git source, as it is stored (the credential by name only)."""

    url: str
    ref: str
    credential_file: str
    credential_env: str
    poll_seconds: int


@dataclass(frozen=True)
class GitWalk:
    """One source's commit and its files (lazily: reading them reads the blobs)."""

    commit_sha: str
    files: Iterator[ScannedFile | SkippedFile]
    cache: TreeReadCache


class GitSources:
    def __init__(
        self,
        settings: IngestionSettings,
        remotes: GitRemotes,
        has_content: Callable[[str], bool],
    ) -> None:
        self._settings = settings
        self._remotes = remotes
        self._has_content = has_content
        self._caches: dict[str, TreeReadCache] = {}

    # adding a source

    def check_new(
        self,
        source_id: str,
        url: str,
        ref: str,
        credential_file: str,
        credential_env: str,
        poll_seconds: int,
    ) -> GitSourceSpec:
        """Validate the fields, then ask the server: the repository must answer with these
        credentials and know the ref (a commit id is fetched into the mirror to be sure)."""
        location = self._location(url)
        spec = GitSourceSpec(
            url=location.url,
            ref=validate_git_ref(ref),
            credential_file=self._credential_file(credential_file) if credential_file else "",
            credential_env=validate_credential_env(
                credential_env, self._settings.credential_env_prefix
            ),
            poll_seconds=validate_poll_seconds(poll_seconds, self._settings.min_poll_seconds),
        )
        if spec.credential_file and spec.credential_env:
            raise InvalidRequest("give credential_file or credential_env, not both")
        credential = self._credential(spec.url, spec.credential_file, spec.credential_env)
        refs = self._remotes.list_refs(spec.url, credential)
        if resolve_advertised(refs, spec.ref) is None:
            if not is_commit_id(spec.ref):
                raise GitRefNotFound(
                    f"git_ref {spec.ref or 'HEAD'!r} is not a branch or tag of {location.url}"
                    + (f" (it has {_some(refs)})" if refs else " (the repository is empty)")
                )
            self._remotes.fetch(source_id, spec.url, spec.ref, credential)
        return spec

    # scanning

    def walk(self, source: SourceRow) -> GitWalk:
        """Fetch the source's ref and walk its commit's tree (run in a worker thread)."""
        url = self._location(source.git_url).url  # a file:// repository still in the bases
        credential = self._credential(url, source.credential_file, source.credential_env)
        sha = self._remotes.fetch(source.source_id, url, source.git_ref, credential)
        entries = self._remotes.tree(source.source_id, sha)
        cache = self._caches.setdefault(
            source.source_id, TreeReadCache(has_content=self._has_content)
        )
        files = walk_tree(
            entries,
            partial(self._remotes.read_blobs, source.source_id),
            max_file_bytes=self._settings.max_file_bytes,
            cache=cache,
        )
        return GitWalk(sha, files, cache)

    def scanned_history(self, source_id: str) -> tuple[Path, str] | None:
        """(bare mirror, ref) of the commit the source's last scan read, whose history change
        history reads; None before a scan fetched."""
        return self._remotes.scanned_history(source_id)

    def forget(self, source_id: str) -> None:
        """The source was deleted: drop its mirror and read cache (run in a worker thread)."""
        self._caches.pop(source_id, None)
        self._remotes.remove_mirror(source_id)

    def remote_commit(self, source: SourceRow) -> str | None:
        """The commit the source's ref points at on its server now (None for a commit id
        ref, which never moves)."""
        url = self._location(source.git_url).url
        credential = self._credential(url, source.credential_file, source.credential_env)
        refs = self._remotes.list_refs(url, credential)
        found = resolve_advertised(refs, source.git_ref)
        if found is None and not is_commit_id(source.git_ref):
            raise GitRefNotFound(
                f"git_ref {source.git_ref or 'HEAD'!r} is no longer a branch or tag of "
                f"{source.git_url}"
            )
        return found

    # credentials

    def _location(self, url: str) -> GitLocation:
        location = validate_git_url(url, allow_http=self._settings.git_allow_http)
        if location.scheme == "file":
            root = resolve_source_root(location.local_path, self._settings.allowed_bases)
            return GitLocation(f"file://{root}", "file", str(root))
        return location

    def _credential_file(self, name: str) -> str:
        if len(name) > 4096 or "\x00" in name:
            raise InvalidRequest("credential_file must be a path of at most 4096 characters")
        bases = self._settings.credential_bases
        path = Path(os.path.realpath(Path(name).expanduser()))
        if not bases or not any(path.is_relative_to(base) for base in bases):
            listed = ", ".join(str(base) for base in bases) or "none configured"
            raise InvalidRequest(
                f"credential_file {name} is outside the credential directories ({listed}); "
                "put the token file in one, or set LOCUS_INGESTION_CREDENTIAL_BASES"
            )
        if not path.is_file():
            raise CredentialUnavailable(f"credential_file {path} is not a readable file")
        return str(path)

    def _credential(self, url: str, credential_file: str, credential_env: str) -> GitCredential:
        scheme = validate_git_url(url, allow_http=self._settings.git_allow_http).scheme
        if credential_file:
            if scheme == "ssh":
                return GitCredential(ssh_key_file=credential_file)
            try:
                with open(credential_file, "rb") as file:
                    data = file.read(MAX_CREDENTIAL_BYTES + 1)
            except OSError as error:
                raise CredentialUnavailable(
                    f"credential_file {credential_file} cannot be read ({error.strerror})"
                ) from None
            token = data.decode("utf-8", "replace").strip()
            if not token or len(data) > MAX_CREDENTIAL_BYTES:
                raise CredentialUnavailable(
                    f"credential_file {credential_file} holds no token (or more than 64 KiB)"
                )
            return GitCredential(token=token)
        if credential_env:
            token = os.environ.get(credential_env, "").strip()
            if not token:
                raise CredentialUnavailable(
                    f"credential_env {credential_env} is not set in the ingestion service's "
                    "environment"
                )
            return GitCredential(token=token)
        return GitCredential()


def _some(refs: dict[str, str]) -> str:
    names = sorted(
        name.removeprefix("refs/heads/").removeprefix("refs/tags/")
        for name in refs
        if name.startswith(("refs/heads/", "refs/tags/")) and not name.endswith("^{}")
    )
    shown = ", ".join(names[:10])
    return shown + (f" and {len(names) - 10} more" if len(names) > 10 else "")


class GitPolling:
    """Runtime component: checks the refs of polled git sources and starts a scan of each one
    whose ref moved. One task; a failing source is logged (redacted) and tried again at its
    next interval; stopped on shutdown."""

    def __init__(
        self,
        list_polled: Callable[[], Awaitable[list[SourceRow]]],
        check: Callable[[SourceRow], Awaitable[None]],
        *,
        tick_seconds: float,
    ) -> None:
        self._list_polled = list_polled
        self._check = check
        self._tick = tick_seconds
        self._task: asyncio.Task[None] | None = None
        self._due: dict[str, float] = {}

    async def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                for source in await self._list_polled():
                    now = loop.time()
                    due = self._due.setdefault(source.source_id, now + source.poll_seconds)
                    if due > now:
                        continue
                    self._due[source.source_id] = now + source.poll_seconds
                    try:
                        await self._check(source)
                    except IngestionError as error:
                        log.warning("polling git source %s: %s", source.source_id, error)
            except asyncio.CancelledError:
                raise
            except Exception:  # a store hiccup must not end polling
                log.exception("polling git sources failed; trying again")
            await asyncio.sleep(self._tick)
