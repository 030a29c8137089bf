"""Each service installs alone and starts, as its container does: for every service, a fresh venv
gets the libraries and that service only (`pip install ./libs/*/ ./services/<name>`, what the
Dockerfile runs for it), then `python -m locus.<name>` is started against a real nats-server and
must answer its gRPC health check SERVING, serve /metrics, and exit 0 on SIGTERM. The shared venv of
`make test` would hide a service that imports what it does not declare or cannot start alone.

    python deploy/packaging_check.py [--work DIR] [service ...]

Run by `make packaging-check` (needs `make setup`: generated protos, the exported model)."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from locus.messaging import EmbeddedNatsServer

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ("ingestion", "ast", "retrieval", "impact", "answer", "gateway")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def install(service: str, venv: Path) -> float:
    began = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    libraries = sorted(str(path) for path in (ROOT / "libs").iterdir() if path.is_dir())
    subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "-q",
            "--disable-pip-version-check",
            *libraries,
            str(ROOT / "services" / service),
        ],
        check=True,
    )
    return time.monotonic() - began


def serving(address: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=2
            )
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def start_alone(service: str, venv: Path, nats_url: str, data: Path) -> tuple[bool, str]:
    """Start the installed service, wait until it serves, stop it; (passed, what happened)."""
    port, metrics_port = free_port(), free_port()
    prefix = f"LOCUS_{service.upper()}_"
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment |= {
        "LOCUS_NATS_URL": nats_url,
        f"{prefix}GRPC_PORT": str(port),
        f"{prefix}DATA_DIR": str(data / service),
        f"{prefix}METRICS_PORT": str(metrics_port),
        "HF_HUB_OFFLINE": "1",
    }
    log = data / f"{service}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(venv / "bin" / "python"), "-m", f"locus.{service}"],
            env=environment,
            cwd=ROOT,  # the exported embedding model lies under .locus/models
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while not serving(f"127.0.0.1:{port}"):
            if process.poll() is not None:
                return False, f"exited with {process.returncode}: {tail(log)}"
            if time.monotonic() > deadline:
                return False, f"not SERVING within 120 s: {tail(log)}"
            time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as r:
            if b"locus_rpc_requests" not in r.read():
                return False, "serves /metrics without the RPC counters"
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
        return code == 0, f"served, stopped on SIGTERM with exit code {code}"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def tail(path: Path) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-15:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("services", nargs="*", default=list(SERVICES))
    parser.add_argument("--work", type=Path, help="where the venvs go (default: a temp dir)")
    arguments = parser.parse_args()
    work = arguments.work or Path(tempfile.mkdtemp(prefix="locus-packaging-"))
    nats = EmbeddedNatsServer(work / "nats")
    nats.start()
    failures = 0
    try:
        print(f"{'service':<10} {'install s':>9}  result")
        for service in arguments.services:
            venv = work / f"venv-{service}"
            seconds = install(service, venv)
            passed, detail = start_alone(service, venv, nats.url, work)
            failures += not passed
            print(f"{service:<10} {seconds:>9.1f}  {'ok' if passed else 'FAILED'}: {detail}")
    finally:
        nats.stop()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
