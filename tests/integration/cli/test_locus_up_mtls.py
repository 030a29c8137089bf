"""`locus up` with mTLS turned on by the caller's LOCUS_TLS_* variables (docs/adr/0009): every
service serves TLS and asks for the mesh certificate, and `locus up` (its health checks),
`locus status` and the CLI's own calls still reach them; a plaintext client does not."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from certificates import MeshCertificates, make_mesh_certificates
from locus_up import LOCUS, run_locus, start_locus_up, stop_locus_up
from required import unavailable

from locus.rpc import SERVICE_TOKEN_HEADER
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@dataclass
class Stack:
    environment: dict[str, str]
    data_dir: Path
    certificates: MeshCertificates

    def state(self) -> dict[str, object]:
        data: dict[str, object] = json.loads((self.data_dir / "stack.json").read_text())
        return data


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if not LOCUS.exists():
        unavailable("the locus CLI", f"{LOCUS} is missing: pip install -e libs/cli")
    root = tmp_path_factory.mktemp("locus-up-mtls")
    (root / "allowed").mkdir()
    certificates = make_mesh_certificates(root / "certificates")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment |= {"LOCUS_HOME": str(root / "home"), **certificates.service.environment()}
    process = start_locus_up(
        root, root / "allowed", environment, within_seconds=120, services="ingestion,ast"
    )
    try:
        yield Stack(environment, root / "data", certificates)
    finally:
        stop_locus_up(process)


def test_status_checks_health_through_mtls(stack: Stack) -> None:
    result = run_locus(stack.environment, "status", "--json", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    status = json.loads(result.stdout)
    assert status["healthy"] is True
    assert {row["name"]: row["health"] for row in status["services"]}["ast"] == "SERVING"


def test_the_cli_calls_the_services_through_mtls(stack: Stack) -> None:
    created = run_locus(stack.environment, "project", "create", "mtls-demo", "--json")
    assert created.returncode == 0, created.stdout + created.stderr
    listed = run_locus(stack.environment, "project", "list", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "mtls-demo" in listed.stdout


def test_a_plaintext_client_with_the_token_cannot_call(stack: Stack) -> None:
    state = stack.state()
    token = Path(str(state["service_token_file"])).read_text().strip()
    address = str(state["ingestion_addr"])
    with grpc.insecure_channel(address) as channel:
        stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListProjects(
                ingestion_pb2.ListProjectsRequest(),
                timeout=10,
                metadata=((SERVICE_TOKEN_HEADER, token),),
            )
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
