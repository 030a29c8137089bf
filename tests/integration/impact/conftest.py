"""A real nats-server, the impact service built in-process on its own subjects and stream, and
files.parsed events made by the ast domain's extractor from the `uploads` fixture package."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from stores import drop_everything

from locus.ast.domain import FileAnalysis, extract
from locus.ast.identifiers import node_id_for
from locus.database import Database
from locus.impact.adapters.store import ImpactStore
from locus.impact.main import ImpactRuntime, build
from locus.impact.settings import ImpactSettings
from locus.ingestion.scanning import file_id_for
from locus.messaging import EmbeddedNatsServer, EventBus, Subjects
from locus.telemetry import setup_telemetry
from locus.v1 import common_pb2, events_pb2, impact_pb2, impact_pb2_grpc

UPLOADS = Path(__file__).resolve().parents[2] / "unit" / "ast" / "fixtures" / "uploads"


def _kind(name: str) -> common_pb2.SymbolKind:
    """The contract's value of an extracted symbol's kind (`constant` → SYMBOL_KIND_CONSTANT)."""
    return common_pb2.SymbolKind.Value(f"SYMBOL_KIND_{name.upper()}")


_RELATIONS = {
    "contains": common_pb2.RELATION_KIND_CONTAINS,
    "calls": common_pb2.RELATION_KIND_CALLS,
    "imports": common_pb2.RELATION_KIND_IMPORTS,
    "inherits": common_pb2.RELATION_KIND_INHERITS,
}


SOURCE_ID = "src1"


def file_id_of(project_id: str, name: str) -> str:
    """The id ingestion gives `src/uploads/<name>` (its own function, never a copy)."""
    return file_id_for(project_id, SOURCE_ID, f"src/uploads/{name}")


def node_id_of(file_id: str, qualified_name: str, kind: str) -> str:
    """The id ast gives a symbol (its own function)."""
    return node_id_for(file_id, qualified_name, kind)


@dataclass
class ParsedUploads:
    """files.parsed events of one file of the uploads package, as the ast service sends them:
    node ids for the file's own symbols, targets in other files left to the consumer."""

    project_id: str
    name: str
    analysis: FileAnalysis
    file_id: str = ""
    sha256: str = ""

    def __post_init__(self) -> None:
        self.file_id = file_id_of(self.project_id, self.name)
        self.sha256 = hashlib.sha256((UPLOADS / self.name).read_bytes()).hexdigest()

    def node_id(self, qualified_name: str) -> str:
        kind = next(s.kind for s in self.analysis.symbols if s.qualified_name == qualified_name)
        return node_id_of(self.file_id, qualified_name, kind)

    def event(
        self, job_id: str, snapshot_seq: int, *, parts: int = 1
    ) -> list[events_pb2.FilesParsed]:
        path = f"src/uploads/{self.name}"
        location = common_pb2.CodeLocation(
            project_id=self.project_id,
            snapshot_id=f"s{snapshot_seq}",
            file_id=self.file_id,
            relative_path=path,
            language="python",
        )
        own = {
            s.qualified_name: node_id_of(self.file_id, s.qualified_name, s.kind)
            for s in self.analysis.symbols
        }
        symbols = []
        for s in self.analysis.symbols:
            symbol_location = common_pb2.CodeLocation()
            symbol_location.CopyFrom(location)
            symbol_location.start_line = s.start_line
            symbol_location.end_line = s.end_line
            symbol_location.node_id = own[s.qualified_name]
            symbols.append(
                common_pb2.Symbol(
                    node_id=own[s.qualified_name],
                    qualified_name=s.qualified_name,
                    scope_name=s.scope_name,
                    name=s.name,
                    kind=_kind(s.kind),
                    location=symbol_location,
                    signature=s.signature,
                    docstring=s.docstring or "",
                    parent_node_id=own.get(s.parent_qualified_name or "", ""),
                    parent_qualified_name=s.parent_qualified_name or "",
                )
            )
        relations = [
            common_pb2.Relation(
                kind=_RELATIONS[r.kind],
                source_node_id=own[r.source_qualified_name],
                source_qualified_name=r.source_qualified_name,
                target_name=r.target_name,
                target_qualified_name=r.target_qualified_name or "",
                target_node_id=own.get(r.target_qualified_name or "", ""),
                line=r.line,
                file_id=self.file_id,
            )
            for r in self.analysis.relations
        ]
        dependencies = [
            common_pb2.FileDependency(
                source_file_id=self.file_id, target_module=d.target_module, line=d.line
            )
            for d in self.analysis.dependencies
        ]
        changed = events_pb2.ChangedFile(
            file_id=self.file_id,
            source_id=SOURCE_ID,
            relative_path=path,
            change_type=common_pb2.CHANGE_TYPE_ADDED,
            sha256=self.sha256,
            language="python",
        )
        base = dict(
            job_id=job_id,
            project_id=self.project_id,
            snapshot_id=f"s{snapshot_seq}",
            snapshot_seq=snapshot_seq,
            file=changed,
            module_name=self.analysis.module_name,
            part_count=parts,
        )
        if parts == 1:
            return [
                events_pb2.FilesParsed(
                    **base, symbols=symbols, relations=relations, dependencies=dependencies
                )
            ]
        # symbols in the first part, relations and dependencies in the last one
        return [
            events_pb2.FilesParsed(**base, part_index=0, symbols=symbols),
            *[events_pb2.FilesParsed(**base, part_index=i) for i in range(1, parts - 1)],
            events_pb2.FilesParsed(
                **base, part_index=parts - 1, relations=relations, dependencies=dependencies
            ),
        ]

    def deleted(self, job_id: str, snapshot_seq: int) -> events_pb2.FilesParsed:
        return events_pb2.FilesParsed(
            job_id=job_id,
            project_id=self.project_id,
            snapshot_id=f"s{snapshot_seq}",
            snapshot_seq=snapshot_seq,
            file=events_pb2.ChangedFile(
                file_id=self.file_id,
                source_id=SOURCE_ID,
                relative_path=f"src/uploads/{self.name}",
                change_type=common_pb2.CHANGE_TYPE_DELETED,
                previous_sha256=self.sha256,
                language="python",
            ),
            module_name=self.analysis.module_name,
            part_count=1,
        )


def parse_uploads(project_id: str) -> dict[str, ParsedUploads]:
    return {
        name: ParsedUploads(
            project_id,
            name,
            extract(f"src/uploads/{name}", (UPLOADS / name).read_bytes(), "python"),
        )
        for name in ("__init__.py", "client.py", "errors.py", "policy.py")
    }


@dataclass
class Received:
    """Messages a core NATS subscription saw on one subject."""

    messages: list[Msg] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def on_message(self, message: Msg) -> None:
        self.messages.append(message)
        self.arrived.set()

    async def wait_for(self, predicate: object, within_seconds: float = 15.0) -> None:
        assert callable(predicate)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_seconds
        while not predicate(self.messages):
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"timed out; received {len(self.messages)} messages")
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), timeout=min(remaining, 0.5))


@dataclass
class ImpactHarness:
    settings: ImpactSettings
    runtime: ImpactRuntime
    publisher: EventBus
    channel: grpc.aio.Channel
    stub: impact_pb2_grpc.ImpactServiceStub
    reports: Received
    dead_letters: Received
    client: NatsClient
    project_id: str = field(default_factory=lambda: "p_" + uuid.uuid4().hex[:12])
    files: dict[str, ParsedUploads] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.files = parse_uploads(self.project_id)

    async def close(self) -> None:
        await self.channel.close()
        await self.client.close()
        await self.publisher.stop()
        await self.runtime.stop()

    async def publish(self, event: events_pb2.FilesParsed, *, message_id: str = "") -> None:
        message_id = message_id or (
            f"files.parsed:{event.job_id}:{event.file.file_id}:{event.file.sha256}:"
            f"{event.part_index}"
        )
        await self.publisher.publish(
            self.publisher.subjects.files_parsed, event, message_id=message_id
        )

    async def publish_files(self, job_id: str, snapshot_seq: int, *names: str) -> None:
        for name in names:
            for event in self.files[name].event(job_id, snapshot_seq):
                await self.publish(event)
        await self.wait_reported(*(self.files[name].file_id for name in names))

    async def compute(self, **request: object) -> impact_pb2.ComputeImpactResponse:
        request.setdefault("project_id", self.project_id)
        message = impact_pb2.ComputeImpactRequest(**request)  # type: ignore[arg-type]
        response: impact_pb2.ComputeImpactResponse = await self.stub.Compute(message, timeout=10)
        return response

    def statuses(self) -> dict[str, list[int]]:
        """file_id → statuses reported on index.updated, in order."""
        seen: dict[str, list[int]] = {}
        for message in self.reports.messages:
            update = events_pb2.IndexUpdated.FromString(message.data)
            for f in update.files:
                seen.setdefault(f.file_id, []).append(f.status)
        return seen

    async def wait_reported(self, *file_ids: str, count: int = 1) -> None:
        await self.reports.wait_for(
            lambda _: all(len(self.statuses().get(f, [])) >= count for f in file_ids)
        )


@pytest.fixture
async def impact_store(store_database_url: str) -> AsyncIterator[ImpactStore]:
    """A fresh, initialized store: an SQLite file, or a new database on PostgreSQL."""
    database = Database(store_database_url)
    if not database.is_sqlite:
        await drop_everything(database)
    store = ImpactStore(database)
    await store.initialize()
    try:
        yield store
    finally:
        if not database.is_sqlite:
            await drop_everything(database)
        await store.close()


@pytest.fixture
def uploads() -> dict[str, ParsedUploads]:
    return parse_uploads("p_" + uuid.uuid4().hex[:12])


@pytest.fixture(scope="module")
def nats_server() -> Iterator[EmbeddedNatsServer]:
    with EmbeddedNatsServer() as server:
        yield server


@pytest.fixture
def impact_settings(nats_server: EmbeddedNatsServer, tmp_path: Path) -> ImpactSettings:
    suffix = uuid.uuid4().hex[:10]
    return ImpactSettings(
        nats_url=nats_server.url,
        subject_prefix=f"t{suffix}.v1",
        stream_name=f"LOCUS_{suffix}",
        grpc_port=0,
        data_dir=tmp_path / "impact",
        max_deliver=2,
        ack_wait_seconds=5,
        shutdown_grace_seconds=1,
    )


async def open_impact(settings: ImpactSettings, project_id: str = "") -> ImpactHarness:
    """A started impact service (built in-process) with a publisher and report listeners."""
    runtime = build(settings)
    await runtime.start()
    publisher = EventBus(
        settings.nats_url,
        setup_telemetry("impact-test-publisher", from_environment=False, set_global=False),
        subjects=Subjects(settings.subject_prefix),
        stream_name=settings.stream_name,
    )
    await publisher.start()
    client = await nats.connect(settings.nats_url)
    reports, dead_letters = Received(), Received()
    subjects = publisher.subjects
    await client.subscribe(subjects.index_updated, cb=reports.on_message)
    await client.subscribe(subjects.dead_letter(subjects.files_parsed), cb=dead_letters.on_message)
    channel = grpc.aio.insecure_channel(runtime.address)
    harness = ImpactHarness(
        settings=settings,
        runtime=runtime,
        publisher=publisher,
        channel=channel,
        stub=impact_pb2_grpc.ImpactServiceStub(channel),
        reports=reports,
        dead_letters=dead_letters,
        client=client,
    )
    if project_id:
        harness.project_id = project_id
        harness.files = parse_uploads(project_id)
    return harness


@pytest.fixture
async def impact(impact_settings: ImpactSettings) -> AsyncIterator[ImpactHarness]:
    harness = await open_impact(impact_settings)
    try:
        yield harness
    finally:
        await harness.close()


@pytest.fixture
def start_impact() -> Callable[..., Awaitable[ImpactHarness]]:
    """``await start_impact(settings, project_id="")``; the test closes what it starts."""
    return open_impact
