"""The ingestion service in-process over real gRPC and a real nats-server: projects, sources,
scans with nothing downstream required, content by hash, and every bad-input status."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest

from locus.ingestion.main import build
from locus.ingestion.settings import IngestionSettings
from locus.messaging import EmbeddedNatsServer
from locus.rpc import make_channel
from locus.v1 import common_pb2, ingestion_pb2, ingestion_pb2_grpc

pytestmark = pytest.mark.integration

Stub = ingestion_pb2_grpc.IngestionServiceStub


@asynccontextmanager
async def serving(
    nats_server: EmbeddedNatsServer, tmp_path: Path, **settings: Any
) -> AsyncIterator[tuple[Stub, Path]]:
    """The service with nothing downstream required, its sources allowed under tmp/repos."""
    allowed = tmp_path / "repos"
    allowed.mkdir(exist_ok=True)
    runtime = build(
        IngestionSettings(
            nats_url=nats_server.url,
            grpc_port=0,
            data_dir=tmp_path / "data",
            allowed_bases=[allowed],
            required_stages=[],
            **settings,
        )
    )
    await runtime.start()
    try:
        async with make_channel(runtime.address, None) as channel:
            yield Stub(channel), allowed
    finally:
        await runtime.stop()


@pytest.fixture
async def stub(nats_server: EmbeddedNatsServer, tmp_path: Path) -> AsyncIterator[tuple[Stub, Path]]:
    async with serving(nats_server, tmp_path) as served:
        yield served


async def code_of(call: object) -> tuple[grpc.StatusCode, str]:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    raise AssertionError("the call succeeded")


async def wait_done(stub: Stub, job_id: str) -> ingestion_pb2.ScanJob:
    for _ in range(200):
        job = await stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job_id))
        if job.state in (ingestion_pb2.SCAN_STATE_COMPLETED, ingestion_pb2.SCAN_STATE_FAILED):
            return job
        await asyncio.sleep(0.05)
    raise AssertionError("scan did not finish")


async def test_project_validation(stub: tuple[Stub, Path]) -> None:
    api, _ = stub
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="shop", subsystem="billing"))
    cases = {
        "": grpc.StatusCode.INVALID_ARGUMENT,
        "x" * 101: grpc.StatusCode.INVALID_ARGUMENT,
        "two words": grpc.StatusCode.INVALID_ARGUMENT,
        "shop": grpc.StatusCode.ALREADY_EXISTS,
    }
    for name, expected in cases.items():
        code, message = await code_of(
            api.CreateProject(ingestion_pb2.CreateProjectRequest(name=name))
        )
        assert code == expected, (name, message)
        assert message
    code, message = await code_of(
        api.GetProject(ingestion_pb2.GetProjectRequest(project_id="nope"))
    )
    assert (code, "create it first" in message) == (grpc.StatusCode.NOT_FOUND, True)
    by_name = await api.GetProject(ingestion_pb2.GetProjectRequest(project_id="shop"))
    assert by_name.subsystem == "billing"


async def test_source_roots_never_escape_the_allowed_bases(
    stub: tuple[Stub, Path], tmp_path: Path
) -> None:
    api, allowed = stub
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))
    outside = tmp_path / "outside"
    outside.mkdir()
    escape = allowed / "sneaky"
    escape.symlink_to(outside)
    for path in (str(outside), str(escape), "/etc"):
        code, message = await code_of(
            api.AddSource(ingestion_pb2.AddSourceRequest(project_id="p", path=path))
        )
        assert code == grpc.StatusCode.PERMISSION_DENIED, path
        assert "LOCUS_INGESTION_ALLOWED_BASES" in message
    code, _ = await code_of(
        api.AddSource(ingestion_pb2.AddSourceRequest(project_id="p", path=str(allowed / "absent")))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _ = await code_of(
        api.AddSource(ingestion_pb2.AddSourceRequest(project_id="ghost", path=str(allowed)))
    )
    assert code == grpc.StatusCode.NOT_FOUND


async def test_a_source_root_the_system_cannot_read_is_invalid_not_internal(
    stub: tuple[Stub, Path],
) -> None:
    """An OS error on the path (here ENAMETOOLONG; /proc/1/root gives EACCES) was INTERNAL."""
    api, allowed = stub
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))
    code, message = await code_of(
        api.AddSource(
            ingestion_pb2.AddSourceRequest(project_id="p", path=str(allowed / ("a" * 300)))
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "cannot be read (File name too long)" in message


async def test_scan_records_files_skips_with_reasons_and_serves_content(
    stub: tuple[Stub, Path],
) -> None:
    api, allowed = stub
    repo = allowed / "repo"
    (repo / "pkg").mkdir(parents=True)
    source = "def retry_limit():\n    return 3\n"
    (repo / "pkg" / "policy.py").write_text(source)
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (repo / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (repo / ".gitignore").write_text("ignored/\n")
    (repo / "ignored").mkdir()
    (repo / "ignored" / "x.py").write_text("x = 1\n")
    credentials = "AWS_SECRET_ACCESS_KEY=hunter2secretvalue\n"
    (repo / ".env").write_text(credentials)  # untracked, not ignored: still never stored
    (repo / "deploy_identity").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n")
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))
    code, _ = await code_of(api.StartScan(ingestion_pb2.StartScanRequest(project_id="p")))
    assert code == grpc.StatusCode.FAILED_PRECONDITION  # no source yet
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="p", path=str(repo)))
    job = await wait_done(
        api, (await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))).job_id
    )
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED
    assert job.stats.files_added == 2  # policy.py and .gitignore
    skipped = await api.ListSkippedFiles(ingestion_pb2.ListSkippedFilesRequest(job_id=job.job_id))
    reasons = {f.relative_path: f.reason for f in skipped.files}
    assert reasons == {
        "latin1.txt": "undecodable",
        "logo.png": "binary",
        ".env": "secret",
        "deploy_identity": "secret",
    }
    code, _ = await code_of(  # the credentials' content was never stored
        api.GetFileContent(
            ingestion_pb2.GetFileContentRequest(
                sha256=hashlib.sha256(credentials.encode()).hexdigest()
            )
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND
    files = await api.ListFiles(ingestion_pb2.ListFilesRequest(project_id="p", path_prefix="pkg/"))
    assert [f.relative_path for f in files.files] == ["pkg/policy.py"]
    sha = hashlib.sha256(source.encode()).hexdigest()
    assert files.files[0].sha256 == sha
    content = await api.GetFileContent(
        ingestion_pb2.GetFileContentRequest(sha256=sha, start_line=2, end_line=2)
    )
    assert (content.text, content.total_lines) == ("    return 3\n", 2)
    bad = {
        "nothex": grpc.StatusCode.INVALID_ARGUMENT,
        "0" * 64: grpc.StatusCode.NOT_FOUND,
    }
    for digest, expected in bad.items():
        code, _ = await code_of(
            api.GetFileContent(ingestion_pb2.GetFileContentRequest(sha256=digest))
        )
        assert code == expected
    code, _ = await code_of(
        api.GetFileContent(
            ingestion_pb2.GetFileContentRequest(sha256=sha, start_line=3, end_line=1)
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT


async def test_many_contents_come_in_one_call_in_the_order_asked(
    stub: tuple[Stub, Path],
) -> None:
    api, allowed = stub
    repo = allowed / "repo"
    repo.mkdir()
    texts = {name: f"# {name}\n" + "x = 1\n" * size for name, size in (("a.py", 3), ("b.py", 5))}
    for name, text in texts.items():
        (repo / name).write_text(text)
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="p", path=str(repo)))
    job = await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))
    await wait_done(api, job.job_id)
    sha = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in texts.items()}
    unknown = "0" * 64
    reply = await api.GetFileContents(
        ingestion_pb2.GetFileContentsRequest(
            sha256=[sha["b.py"], unknown, sha["a.py"], sha["b.py"].upper()]
        )
    )
    assert [(c.sha256, c.text, c.total_lines) for c in reply.contents] == [
        (sha["b.py"], texts["b.py"], 6),
        (sha["a.py"], texts["a.py"], 4),
    ]
    assert list(reply.missing_sha256) == [unknown]
    assert not reply.deferred_sha256
    for request, detail in (
        (["nothex"], "64 hexadecimal"),
        ([unknown] * 257, "at most 256"),
    ):
        code, message = await code_of(
            api.GetFileContents(ingestion_pb2.GetFileContentsRequest(sha256=request))
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert detail in message


async def test_contents_over_the_reply_limit_are_deferred_to_the_next_call(
    nats_server: EmbeddedNatsServer, tmp_path: Path
) -> None:
    async with serving(nats_server, tmp_path, contents_reply_bytes=400) as (api, allowed):
        repo = allowed / "repo"
        repo.mkdir()
        texts = [f"# file {n}\n" + "y = 2\n" * 40 for n in range(3)]  # about 250 bytes each
        for n, text in enumerate(texts):
            (repo / f"m{n}.py").write_text(text)
        await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))
        await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="p", path=str(repo)))
        job = await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))
        await wait_done(api, job.job_id)
        wanted = [hashlib.sha256(text.encode()).hexdigest() for text in texts]
        received: list[str] = []
        calls = 0
        while wanted:
            reply = await api.GetFileContents(ingestion_pb2.GetFileContentsRequest(sha256=wanted))
            calls += 1
            assert reply.contents  # at least one file comes each time
            received += [content.text for content in reply.contents]
            wanted = list(reply.deferred_sha256)
    assert received == texts
    assert calls == 3  # one file per reply: two would pass the 400 bytes


async def test_rescan_is_incremental(stub: tuple[Stub, Path]) -> None:
    api, allowed = stub
    repo = allowed / "repo"
    repo.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (repo / name).write_text(f"# {name}\n")
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="p", path=str(repo)))
    first = await wait_done(
        api, (await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))).job_id
    )
    assert first.stats.files_added == 3
    (repo / "a.py").write_text("# changed\n")
    os.remove(repo / "b.py")
    (repo / "d.py").write_text("# new\n")
    second = await wait_done(
        api, (await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))).job_id
    )
    stats = second.stats
    assert (
        stats.files_added,
        stats.files_modified,
        stats.files_deleted,
        stats.files_unchanged,
    ) == (
        1,
        1,
        1,
        1,
    )
    listed = await api.ListFiles(
        ingestion_pb2.ListFilesRequest(project_id="p", page=common_pb2.PageRequest(page_size=2))
    )
    assert [f.relative_path for f in listed.files] == ["a.py", "c.py"]
    rest = await api.ListFiles(
        ingestion_pb2.ListFilesRequest(
            project_id="p", page=common_pb2.PageRequest(page_token=listed.next_page_token)
        )
    )
    assert [f.relative_path for f in rest.files] == ["d.py"]
    third = await wait_done(
        api, (await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))).job_id
    )
    assert (third.stats.files_added, third.stats.files_modified, third.stats.files_deleted) == (
        0,
        0,
        0,
    )
    project = await api.GetProject(ingestion_pb2.GetProjectRequest(project_id="p"))
    assert project.latest_snapshot_id == third.snapshot_id


async def test_a_file_that_becomes_a_private_key_is_retracted(stub: tuple[Stub, Path]) -> None:
    api, allowed = stub
    repo = allowed / "repo"
    repo.mkdir()
    (repo / "main.py").write_text("print('hi')\n")
    (repo / "identity").write_text("placeholder\n")
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="p", path=str(repo)))
    first = await wait_done(
        api, (await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))).job_id
    )
    assert first.stats.files_added == 2
    (repo / "identity").write_text("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n")
    second = await wait_done(
        api, (await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))).job_id
    )
    assert (second.stats.files_deleted, second.stats.files_skipped) == (1, 1)
    listed = await api.ListFiles(ingestion_pb2.ListFilesRequest(project_id="p"))
    assert [f.relative_path for f in listed.files] == ["main.py"]


async def test_a_rescan_reads_only_the_files_that_changed(stub: tuple[Stub, Path]) -> None:
    """Files unchanged since the last scan read them are not read again (their status is the
    same); an edit is read, whatever its size and modification time."""
    api, allowed = stub
    repo = allowed / "settled"
    repo.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (repo / name).write_text(f"# {name}\n")
    await asyncio.sleep(1.1)  # changed more than a second before the read: safe to remember
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="settled"))
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="settled", path=str(repo)))

    async def scan() -> Any:
        started = await api.StartScan(ingestion_pb2.StartScanRequest(project_id="settled"))
        return (await wait_done(api, started.job_id)).stats

    assert (await scan()).bytes_read == 3 * len("# a.py\n")
    unchanged = await scan()
    assert (unchanged.bytes_read, unchanged.files_unchanged) == (0, 3)
    edited = repo / "b.py"
    before = os.stat(edited)
    edited.write_text("# b.p!\n")  # same size, modification time put back
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = await scan()
    assert (after.bytes_read, after.files_modified, after.files_unchanged) == (7, 1, 2)


def _write_names_that_are_not_utf8(directory: Path) -> None:
    base = os.fsencode(directory)
    os.makedirs(base + b"/d\xffir")
    Path(os.fsdecode(base + b"/d\xffir/inner.py")).write_text("y = 2\n")
    Path(os.fsdecode(base + b"/bad\xfe.py")).write_bytes(b"z = 3\n")


async def test_a_file_name_that_is_not_utf8_is_skipped_and_the_scan_completes(
    stub: tuple[Stub, Path],
) -> None:
    """One such name used to dead-letter the scan request and leave the job SCANNING (and
    every later scan refused): it is now a skipped file, and the next scan starts at once."""
    api, allowed = stub
    repo = allowed / "names"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "ok.py").write_text("x = 1\n")
    _write_names_that_are_not_utf8(repo / "pkg")
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="names"))
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="names", path=str(repo)))
    started = await api.StartScan(ingestion_pb2.StartScanRequest(project_id="names"))
    job = await wait_done(api, started.job_id)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED
    assert (job.stats.files_added, job.stats.files_skipped) == (1, 2)
    skipped = await api.ListSkippedFiles(ingestion_pb2.ListSkippedFilesRequest(job_id=job.job_id))
    assert {(f.relative_path, f.reason) for f in skipped.files} == {
        ("pkg/bad\\xfe.py", "undecodable"),
        ("pkg/d\\xffir", "undecodable"),
    }
    again = await api.StartScan(ingestion_pb2.StartScanRequest(project_id="names"))
    assert (await wait_done(api, again.job_id)).state == ingestion_pb2.SCAN_STATE_COMPLETED


async def test_hostile_list_requests_get_invalid_argument_or_literal_matches(
    stub: tuple[Stub, Path],
) -> None:
    """Probed defects: a page token holding a huge number was INTERNAL (OverflowError in the
    store), a 70,000-character prefix INTERNAL (SQLite: pattern too complex), and % in a prefix
    was a LIKE wildcard."""
    api, allowed = stub
    repo = allowed / "hostile"
    (repo / "100%").mkdir(parents=True)
    (repo / "100%" / "a.py").write_text("a = 1\n")
    (repo / "100x").mkdir()
    (repo / "100x" / "b.py").write_text("b = 2\n")
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="h"))
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="h", path=str(repo)))
    job = await wait_done(
        api, (await api.StartScan(ingestion_pb2.StartScanRequest(project_id="h"))).job_id
    )
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED

    literal = await api.ListFiles(
        ingestion_pb2.ListFilesRequest(project_id="h", path_prefix="100%")
    )
    assert [f.relative_path for f in literal.files] == ["100%/a.py"]
    underscore = await api.ListFiles(
        ingestion_pb2.ListFilesRequest(project_id="h", path_prefix="100_")
    )
    assert list(underscore.files) == []

    huge = base64.urlsafe_b64encode(str(10**30).encode()).decode()
    for request in (
        ingestion_pb2.ListFilesRequest(
            project_id="h", page=common_pb2.PageRequest(page_token=huge)
        ),
        ingestion_pb2.ListFilesRequest(project_id="h", path_prefix="a" * 70_000),
    ):
        code, message = await code_of(api.ListFiles(request))
        assert code == grpc.StatusCode.INVALID_ARGUMENT, message
    code, _ = await code_of(
        api.ListSkippedFiles(
            ingestion_pb2.ListSkippedFilesRequest(
                job_id=job.job_id, page=common_pb2.PageRequest(page_token=huge)
            )
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_dead_lettered_scan_request_fails_its_job_at_once_with_the_reason(
    nats_server: EmbeddedNatsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan request that cannot be processed (here: a fault injected into the walk, standing
    for any bug) is dead-lettered after its deliveries; its job used to stay SCANNING, refusing
    every later scan until it went stale an hour later. It now fails at once, saying why."""
    from locus.ingestion.scanning import Ingestion

    original = Ingestion._walk_and_record
    broken = {"on": True}

    async def walk(self: Ingestion, job: Any) -> None:
        if broken["on"]:
            raise RuntimeError("injected fault in the walk")
        await original(self, job)

    monkeypatch.setattr(Ingestion, "_walk_and_record", walk)
    async with serving(nats_server, tmp_path, max_deliver=2) as (api, allowed):
        repo = allowed / "dead"
        repo.mkdir()
        (repo / "a.py").write_text("a = 1\n")
        await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="dead"))
        await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="dead", path=str(repo)))
        started = await api.StartScan(ingestion_pb2.StartScanRequest(project_id="dead"))
        job = await wait_done(api, started.job_id)
        assert job.state == ingestion_pb2.SCAN_STATE_FAILED
        assert "injected fault in the walk" in job.error
        broken["on"] = False
        again = await api.StartScan(ingestion_pb2.StartScanRequest(project_id="dead"))
        assert (await wait_done(api, again.job_id)).state == ingestion_pb2.SCAN_STATE_COMPLETED


async def test_overlapping_sources_of_a_project_are_refused(stub: tuple[Stub, Path]) -> None:
    """Two sources of one project, one inside the other, indexed every file under the inner
    one twice; they are refused, either way round. Siblings and other projects are fine."""
    api, allowed = stub
    outer = allowed / "mono"
    (outer / "svc" / "a").mkdir(parents=True)
    (outer / "lib").mkdir()
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="mono"))
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="mono", path=str(outer / "svc")))
    for path, word in ((outer / "svc" / "a", "inside"), (outer, "around")):
        code, message = await code_of(
            api.AddSource(ingestion_pb2.AddSourceRequest(project_id="mono", path=str(path)))
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT, path
        assert f"is {word} source" in message
        assert "indexed twice" in message
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="mono", path=str(outer / "lib")))
    await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="other"))
    await api.AddSource(ingestion_pb2.AddSourceRequest(project_id="other", path=str(outer)))
    listed = await api.ListSources(ingestion_pb2.ListSourcesRequest(project_id="mono"))
    assert sorted(Path(s.path).name for s in listed.sources) == ["lib", "svc"]


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


async def test_file_history_of_a_git_source_and_its_bad_requests(stub: tuple[Stub, Path]) -> None:
    api, allowed = stub
    repo = allowed / "shop"
    (repo / "billing").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for message, name, text in (
        ("Add invoices", "billing/invoice.py", "x = 1\n"),
        ("Add the dates helper", "dates.py", "d = 1\n"),
        ("Round invoice totals half up", "billing/invoice.py", "x = 2\n"),
    ):
        (repo / name).write_text(text)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", message)
    plain = allowed / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("a = 1\n")
    for name, root in (("shop", repo), ("plain", plain)):
        await api.CreateProject(ingestion_pb2.CreateProjectRequest(name=name))
        await api.AddSource(ingestion_pb2.AddSourceRequest(project_id=name, path=str(root)))

    found = await api.ScoreFileHistory(
        ingestion_pb2.ScoreFileHistoryRequest(
            project_id="shop",
            question="invoice totals are rounded down",
            relative_paths=["dates.py", "billing/invoice.py", "absent.py", "dates.py"],
        )
    )
    assert found.commits_read == 3
    assert [f.relative_path for f in found.files] == ["dates.py", "billing/invoice.py"]
    dates, invoice = found.files
    assert (invoice.commits, invoice.last_change, dates.commits, dates.last_change) == (2, 0, 1, 1)
    assert invoice.message_score > dates.message_score == 0
    assert invoice.change_percentile == 1.0

    outside_git = await api.ScoreFileHistory(
        ingestion_pb2.ScoreFileHistoryRequest(project_id="plain", relative_paths=["a.py"])
    )
    assert outside_git.commits_read == 0
    assert not outside_git.files

    cases = {
        "project": (ingestion_pb2.ScoreFileHistoryRequest(), grpc.StatusCode.INVALID_ARGUMENT),
        "unknown": (
            ingestion_pb2.ScoreFileHistoryRequest(project_id="ghost", relative_paths=["a.py"]),
            grpc.StatusCode.NOT_FOUND,
        ),
        "too many paths": (
            ingestion_pb2.ScoreFileHistoryRequest(
                project_id="shop", relative_paths=[f"f{i}.py" for i in range(2001)]
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        "empty path": (
            ingestion_pb2.ScoreFileHistoryRequest(project_id="shop", relative_paths=[""]),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        "long question": (
            ingestion_pb2.ScoreFileHistoryRequest(project_id="shop", question="x" * 250_001),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    }
    for name, (request, expected) in cases.items():
        code, message = await code_of(api.ScoreFileHistory(request))
        assert code == expected, name
        assert message, name
    code, message = await code_of(
        api.ScoreFileHistory(
            ingestion_pb2.ScoreFileHistoryRequest(
                project_id="shop", relative_paths=[f"f{i}.py" for i in range(2001)]
            )
        )
    )
    assert "at most 2000" in message
