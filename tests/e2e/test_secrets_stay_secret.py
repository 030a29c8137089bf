"""No secret of a run is written down: `locus up` with a distinctive value for every credential
setting (the LLM, embeddings, Qdrant and rerank API keys, credentials in the rerank endpoint's
URL) plus the credentials it makes itself (service token, NATS password, admin key), one scan,
a locate whose rerank endpoint is down, an ask, and calls with a wrong API key and a bogus
bearer token; then, the stack stopped, every file of the run (the service logs, the traces
file, the SQLite stores with the gateway's request journal, the JetStream store, locus up's
own output) is searched as bytes for each secret. The credential files are the only place they
may be."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from locus_up import run_locus, start_locus_up, stop_locus_up

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURE_PACKAGE = REPOSITORY / "tests" / "unit" / "ast" / "fixtures" / "uploads"
# The files that hold the stack's own credentials (docs/adr/0009): where they belong.
CREDENTIAL_FILES = ("service-token", "nats-password", "admin.key")


@dataclass
class Run:
    process: subprocess.Popen[bytes]
    environment: dict[str, str]
    root: Path
    tree: Path
    # secret name → (value, the service whose environment carries it)
    configured: dict[str, tuple[str, str]]

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def locus(self, *arguments: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return run_locus(self.environment | extra, *arguments, timeout=300)


def distinctive(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex}"


def port_nobody_listens_on() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def jwt_looking(subject: str) -> str:
    def segment(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    signature = base64.urlsafe_b64encode(uuid.uuid4().bytes * 2).decode().rstrip("=")
    return f"{segment({'alg': 'RS256', 'typ': 'JWT'})}.{segment({'sub': subject})}.{signature}"


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    tree = tmp_path / "allowed" / "shop"
    shutil.copytree(FIXTURE_PACKAGE, tree / "uploads")
    rerank_port = port_nobody_listens_on()
    rerank_password = distinctive("rerank-url-password")
    configured = {
        "LOCUS_ANSWER_LLM_API_KEY": (distinctive("llm-api-key"), "answer"),
        "LOCUS_RETRIEVAL_EMBEDDINGS_API_KEY": (distinctive("embeddings-api-key"), "retrieval"),
        "LOCUS_RETRIEVAL_QDRANT_API_KEY": (distinctive("qdrant-api-key"), "retrieval"),
        "LOCUS_GATEWAY_RERANK_API_KEY": (distinctive("rerank-api-key"), "gateway"),
        "rerank URL password": (rerank_password, "gateway"),
    }
    # Only the API keys: their URLs stay unset, so the stack keeps its embedded backends and
    # the extractive answer; the rerank endpoint is set, and down.
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment |= {
        name: value for name, (value, _) in configured.items() if name.startswith("LOCUS_")
    }
    environment |= {
        "LOCUS_HOME": str(tmp_path / "home"),
        "LOCUS_TRACES_FILE": str(tmp_path / "data" / "traces.jsonl"),
        "LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": "false",
        "LOCUS_GATEWAY_RERANK_URL": f"http://locus:{rerank_password}@127.0.0.1:{rerank_port}/v1",
        "LOCUS_GATEWAY_RERANK_MODEL": "BAAI/bge-reranker-v2-m3",
        "LOCUS_GATEWAY_RERANK_TIMEOUT_SECONDS": "2",
    }
    process = start_locus_up(tmp_path, tmp_path / "allowed", environment)
    try:
        yield Run(process, environment, tmp_path, tree, configured)
    finally:
        if process.poll() is None:
            stop_locus_up(process)


def read_state(run: Run) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((run.data_dir / "stack.json").read_text())
    return state


def credential_file(state: dict[str, Any], run: Run, name: str) -> Path:
    recorded = {
        "service-token": state.get("service_token_file"),
        "nats-password": state.get("nats_password_file"),
        "admin.key": state.get("admin_key_file"),
    }[name]
    return Path(recorded) if recorded else run.data_dir / name


def environment_of(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


def every_file(root: Path) -> list[Path]:
    return sorted(
        path.resolve() for path in root.rglob("*") if path.is_file() and not path.is_symlink()
    )


def test_no_secret_of_a_run_reaches_a_log_a_span_or_a_store(run: Run) -> None:
    state = read_state(run)
    pids = {name: service["pid"] for name, service in state["services"].items()}
    # The configured secrets really reached the services (the search below is not vacuous).
    for name, (value, service) in run.configured.items():
        assert value.encode() in environment_of(pids[service]), f"{name} did not reach {service}"
    made = {
        name: credential_file(state, run, name).read_text(encoding="utf-8").strip()
        for name in CREDENTIAL_FILES
    }
    admin_key = made["admin.key"]
    assert admin_key.startswith("lk_"), "admin.key holds no API key"
    admin_key_id, admin_secret = admin_key.split("_", 2)[1:]
    wrong_secret = base64.urlsafe_b64encode(uuid.uuid4().bytes * 2).decode()[:43]
    wrong_key = f"lk_{admin_key_id}_{wrong_secret}"
    bogus_token = jwt_looking(distinctive("subject"))
    secrets = {name: value for name, (value, _) in run.configured.items()} | {
        "the service token": made["service-token"],
        "the NATS password": made["nats-password"],
        "the admin key's secret": admin_secret,
        "a wrong API key's secret": wrong_secret,
        "a bogus bearer token": bogus_token,
    }

    for arguments in (
        ("project", "create", "shop"),
        ("source", "add", "shop", str(run.tree)),
        ("scan", "shop", "--wait"),
    ):
        done = run.locus(*arguments)
        assert done.returncode == 0, f"locus {arguments}: {done.stdout}\n{done.stderr}"
    located = run.locus("locate", "shop", "where is the retry limit for uploads enforced?")
    assert located.returncode == 0, located.stderr
    assert "policy.py" in located.stdout
    asked = run.locus("ask", "shop", "how are failed uploads retried?")
    assert asked.returncode == 0, asked.stderr
    for credential in (wrong_key, bogus_token):
        refused = run.locus("project", "list", LOCUS_API_KEY=credential)
        assert refused.returncode != 0, refused.stdout
        assert "UNAUTHENTICATED" in refused.stderr, refused.stderr
        assert credential not in refused.stdout + refused.stderr

    stop_locus_up(run.process)
    assert run.process.returncode is not None

    exempt = {credential_file(state, run, name).resolve() for name in CREDENTIAL_FILES}
    searched = [path for path in every_file(run.root) if path not in exempt]
    leaks = []
    for path in searched:
        content = path.read_bytes()
        leaks += [
            f"{what} in {path.relative_to(run.root.resolve())}"
            for what, secret in secrets.items()
            if secret.encode() in content
        ]
    assert leaks == [], "secrets written down:\n" + "\n".join(leaks)

    # The search covered every kind of record the run writes, and the error paths ran.
    def content_of(paths: list[Path], what: str) -> bytes:
        assert paths, f"no {what} among the files searched"
        assert all(path.resolve() in searched for path in paths), f"{what} not searched"
        return b"".join(path.read_bytes() for path in paths)

    logs = [Path(service["log_file"]) for service in state["services"].values()]
    assert {log.stem for log in logs} == set(state["services"])
    gateway_log = content_of([log for log in logs if log.stem == "gateway"], "gateway log")
    assert b"rerank skipped: rerank endpoint http://***@127.0.0.1" in gateway_log
    assert gateway_log.count(b"UNAUTHENTICATED") >= 2, "the refused calls were not logged"
    assert f"API key {admin_key_id} is not valid".encode() in gateway_log
    traces_file = Path(state.get("traces_file") or run.environment["LOCUS_TRACES_FILE"])
    spans = content_of([traces_file], "traces file")
    assert b'"name":"gateway.rerank"' in spans
    assert b'"rerank skipped"' in spans
    journal = content_of(
        [path for path in searched if path.name.startswith("gateway.db")], "gateway database"
    )
    assert b"rerank skipped: rerank endpoint" in journal, "the request journal has no rerank note"
    jetstream = content_of(
        [path for path in searched if "jetstream" in path.parts and path.suffix == ".blk"],
        "JetStream message block",
    )
    assert jetstream.count(b"locus.v1.access.denied") >= 2, "the refusals were not audited"
