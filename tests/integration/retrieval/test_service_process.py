"""``python -m locus.retrieval`` as its own process, configured by environment only: it
becomes SERVING, answers Search, and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import grpc
import pytest

from locus.messaging import EmbeddedNatsServer
from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder
from locus.rpc import wait_until_serving
from locus.v1 import retrieval_pb2, retrieval_pb2_grpc

pytestmark = pytest.mark.integration


async def test_runs_as_a_process(
    nats_server: EmbeddedNatsServer,
    tmp_path: Path,
    unused_port: int,
    shared_embedder: OnnxEmbedder,
) -> None:
    environment = {
        **os.environ,
        "LOCUS_NATS_URL": nats_server.url,
        "LOCUS_RETRIEVAL_GRPC_PORT": str(unused_port),
        "LOCUS_RETRIEVAL_DATA_DIR": str(tmp_path / "data"),
        "LOCUS_RETRIEVAL_MODEL_DIR": str(shared_embedder.model_dir),
        "LOCUS_RETRIEVAL_EMBED_THREADS": "1",
    }
    log_path = tmp_path / "retrieval.log"
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "locus.retrieval", env=environment, stdout=log, stderr=log
        )
    address = f"127.0.0.1:{unused_port}"
    try:
        await wait_until_serving(address, within_seconds=60)
        async with grpc.aio.insecure_channel(address) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.Search(
                    retrieval_pb2.SearchRequest(
                        query="upload", filters=retrieval_pb2.SearchFilters(project_id="p_empty")
                    )
                )
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), timeout=30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert b"retrieval ready on" in log_path.read_bytes()
