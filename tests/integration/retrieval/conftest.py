"""Fixtures for the retrieval integration tests: a real nats-server, the service built in-process
with the real MiniLM model (loaded once per session), and real FilesParsed events made from the
fixture repository by the ast service's real extractor, with the production id functions of
ingestion (file ids) and ast (node and chunk ids)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import nats
import numpy as np
import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from numpy.typing import NDArray
from required import unavailable

from locus.ast.domain import extract
from locus.ast.identifiers import chunk_id_for, node_id_for
from locus.ingestion.scanning import file_id_for as production_file_id
from locus.messaging import EmbeddedNatsServer
from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder, onnx_model_ready
from locus.retrieval.adapters.project_catalog import StaticProjectCatalog
from locus.retrieval.main import RetrievalRuntime, build
from locus.retrieval.settings import RetrievalSettings
from locus.v1 import common_pb2, events_pb2, retrieval_pb2_grpc

REPO_ROOT = Path(__file__).resolve().parents[3]
FIXTURE_REPO = Path(__file__).resolve().parent / "fixtures"
PROJECT = "p_uploads"
SOURCE_ID = "src_fixture"
LANGUAGES = {".py": "python", ".go": "go"}
KINDS = {
    "function": common_pb2.CHUNK_KIND_FUNCTION,
    "method": common_pb2.CHUNK_KIND_METHOD,
    "class_header": common_pb2.CHUNK_KIND_CLASS_HEADER,
    "module": common_pb2.CHUNK_KIND_MODULE,
    "fragment": common_pb2.CHUNK_KIND_FRAGMENT,
}


@pytest.fixture(scope="session")
def shared_embedder() -> OnnxEmbedder:
    configured = os.environ.get("LOCUS_RETRIEVAL_MODEL_DIR")
    directory = Path(configured) if configured else REPO_ROOT / ".locus/models/all-minilm-l6-v2"
    if not onnx_model_ready(directory):
        try:
            from locus.retrieval.export_model import export

            export(directory)
        except (ImportError, SystemExit) as error:
            unavailable("the embedding model", f"no exported ONNX model in {directory}: {error}")
    embedder = OnnxEmbedder(directory)
    embedder.load()
    return embedder


class KeepOpen:
    """The session's embedder, passed to each service instance: the runtime's stop must not
    unload a model the next test uses."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self._inner = inner

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return await self._inner.embed(texts)


def file_id_for(relative_path: str, project_id: str = PROJECT) -> str:
    """The file id ingestion gives the fixture file (its production function)."""
    return production_file_id(project_id, SOURCE_ID, relative_path)


def _chunks(
    relative_path: str, data: bytes, language: str, project_id: str
) -> list[tuple[Any, str]]:
    """The chunks the ast service makes of the file (its real extractor), each with the node id
    of its symbol as the ast store gives it (production id functions)."""
    file_id = file_id_for(relative_path, project_id)
    analysis = extract(relative_path, data, language)
    node_ids = {
        symbol.qualified_name: node_id_for(file_id, symbol.qualified_name, symbol.kind)
        for symbol in analysis.symbols
    }
    return [
        (chunk, node_ids.get(chunk.symbol_qualified_name or "", "")) for chunk in analysis.chunks
    ]


def files_parsed(
    relative_path: str,
    *,
    job_id: str,
    snapshot_seq: int,
    parts: int = 1,
    data: bytes | None = None,
    change: int = common_pb2.CHANGE_TYPE_ADDED,
    project_id: str = PROJECT,
) -> list[events_pb2.FilesParsed]:
    """The files.parsed messages the ast service would publish for one fixture file (of the
    project ``p_uploads`` unless told)."""
    file_id = file_id_for(relative_path, project_id)
    snapshot_id = f"snap_{snapshot_seq}"
    language = LANGUAGES[Path(relative_path).suffix]
    if change == common_pb2.CHANGE_TYPE_DELETED:
        return [
            events_pb2.FilesParsed(
                job_id=job_id,
                project_id=project_id,
                snapshot_id=snapshot_id,
                snapshot_seq=snapshot_seq,
                file=events_pb2.ChangedFile(
                    file_id=file_id,
                    relative_path=relative_path,
                    change_type=change,
                    language=language,
                ),
                part_index=0,
                part_count=1,
            )
        ]
    data = data if data is not None else (FIXTURE_REPO / relative_path).read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    chunks = [
        common_pb2.Chunk(
            chunk_id=chunk_id_for(file_id, chunk.ordinal, chunk.content_sha256),
            location=common_pb2.CodeLocation(
                project_id=project_id,
                snapshot_id=snapshot_id,
                file_id=file_id,
                relative_path=relative_path,
                start_line=chunk.start_line,
                end_line=chunk.end_line,
                language=language,
                node_id=node_id,
            ),
            kind=KINDS.get(chunk.kind, common_pb2.CHUNK_KIND_FRAGMENT),
            symbol_node_id=node_id,
            symbol_qualified_name=chunk.symbol_qualified_name or "",
            text=chunk.text,
            content_sha256=chunk.content_sha256,
            ordinal=chunk.ordinal,
        )
        for chunk, node_id in _chunks(relative_path, data, language, project_id)
    ]
    size = max(1, -(-len(chunks) // parts))
    return [
        events_pb2.FilesParsed(
            job_id=job_id,
            project_id=project_id,
            snapshot_id=snapshot_id,
            snapshot_seq=snapshot_seq,
            file=events_pb2.ChangedFile(
                file_id=file_id,
                relative_path=relative_path,
                change_type=change,
                sha256=sha256,
                language=language,
                size_bytes=len(data),
            ),
            part_index=index,
            part_count=parts,
            chunks=chunks[index * size : (index + 1) * size],
        )
        for index in range(parts)
    ]


@dataclass
class Events:
    """Messages seen on a subject (core NATS subscription: JetStream publishes reach it too)."""

    messages: list[Msg] = field(default_factory=list)

    async def on_message(self, message: Msg) -> None:
        self.messages.append(message)

    def index_updates(self) -> list[events_pb2.IndexUpdated]:
        return [events_pb2.IndexUpdated.FromString(m.data) for m in self.messages]

    async def wait_for(self, predicate: Callable[[Events], bool], within: float = 60.0) -> None:
        deadline = time.monotonic() + within
        while not predicate(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; seen {len(self.messages)} messages")
            await asyncio.sleep(0.05)


@dataclass
class RetrievalHarness:
    runtime: RetrievalRuntime
    nats: NatsClient
    stub: retrieval_pb2_grpc.RetrievalServiceStub
    updates: Events
    dead_letters: Events
    channel: grpc.aio.Channel
    closed: bool = False

    async def publish(self, event: events_pb2.FilesParsed | bytes, message_id: str) -> None:
        payload = event if isinstance(event, bytes) else event.SerializeToString()
        ack = await self.nats.jetstream().publish(
            "locus.v1.files.parsed", payload, headers={"Nats-Msg-Id": message_id}
        )
        assert ack.stream

    async def publish_file(self, events: list[events_pb2.FilesParsed]) -> None:
        for event in events:
            await self.publish(
                event,
                f"files.parsed:{event.job_id}:{event.file.file_id}:{event.file.sha256}:"
                f"{event.part_index}",
            )

    def reported(self, job_id: str, stage: str = "retrieval") -> dict[str, events_pb2.IndexedFile]:
        """The files of ``job_id`` reported at ``stage``: "retrieval" (searchable) or
        "vectors" (embedded)."""
        return {
            f.file_id: f
            for u in self.updates.index_updates()
            if u.job_id == job_id and u.stage == stage
            for f in u.files
        }

    async def close(self) -> None:
        self.closed = True
        await self.channel.close()
        await self.nats.close()
        await self.runtime.stop()


HarnessFactory = Callable[..., Awaitable[RetrievalHarness]]


@pytest.fixture
async def harness_factory(
    nats_server: EmbeddedNatsServer, tmp_path: Path, shared_embedder: OnnxEmbedder
) -> AsyncIterator[HarnessFactory]:
    """``await harness_factory(data_dir=..., **settings)``: a started service instance; every
    instance not closed by the test is closed at its end."""
    opened: list[RetrievalHarness] = []

    async def start(data_dir: Path | None = None, **overrides: Any) -> RetrievalHarness:
        values: dict[str, Any] = {
            "max_deliver": 3,
            "ack_wait_seconds": 30,
            "fetch_batch": 16,
            "shutdown_grace_seconds": 2,
            **overrides,
        }
        settings = RetrievalSettings(
            nats_url=nats_server.url,
            grpc_port=0,
            data_dir=data_dir or tmp_path / "data",
            **values,
        )
        runtime = build(
            settings,
            embedder=KeepOpen(shared_embedder),
            projects=StaticProjectCatalog({PROJECT: "uploads"}),
        )
        await runtime.start()
        client = await nats.connect(nats_server.url)
        updates, dead_letters = Events(), Events()
        await client.subscribe("locus.v1.index.updated", cb=updates.on_message)
        await client.subscribe("locus.v1.dlq.>", cb=dead_letters.on_message)
        channel = grpc.aio.insecure_channel(runtime.address)
        harness = RetrievalHarness(
            runtime,
            client,
            retrieval_pb2_grpc.RetrievalServiceStub(channel),
            updates,
            dead_letters,
            channel,
        )
        opened.append(harness)
        return harness

    try:
        yield start
    finally:
        for harness in opened:
            if not harness.closed:
                await harness.close()


@pytest.fixture
async def harness(harness_factory: HarnessFactory) -> RetrievalHarness:
    return await harness_factory()


MakeEvents = Callable[..., list[events_pb2.FilesParsed]]


@pytest.fixture
def make_events() -> MakeEvents:
    """``make_events(relative_path, job_id=, snapshot_seq=, parts=, data=, change=,
    project_id=)``."""
    return files_parsed


@pytest.fixture
def file_id() -> Callable[[str], str]:
    return file_id_for
