"""The stack for the gateway integration tests: a real nats-server, every downstream service that
is installed in this venv started as its own process (``python -m locus.<service>``), and the
gateway itself in-process through ``build()``. Tests that need a service that is not installed
(or did not start) fail, saying which and why (``required.unavailable``)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.trace.export import SpanExporter
from pydantic import SecretStr
from required import unavailable
from scoped_system import make_system

from locus.config import PeerAddresses
from locus.gateway.main import build
from locus.gateway.settings import GatewaySettings
from locus.messaging import EmbeddedNatsServer
from locus.rpc import MeshCredentials, ServiceRuntime, wait_until_serving
from locus.rpc.bearer import bearer_interceptors
from locus.v1 import events_pb2, gateway_pb2_grpc, ingestion_pb2

MODEL_DIR = Path(__file__).resolve().parents[3] / ".locus" / "models" / "all-minilm-l6-v2"
DOWNSTREAM = ("ingestion", "ast", "retrieval", "impact", "answer")
INDEXING_STAGES = ("ast", "retrieval", "impact")
STARTUP_SECONDS = float(os.environ.get("LOCUS_TEST_STARTUP_SECONDS", "120"))
# The deployment's service token (docs/adr/0009): the downstream services require it, the gateway
# and ast send it, as in a deployment.
SERVICE_TOKEN = f"gateway-tests-{uuid.uuid4().hex}"

# A small but realistic project for scans: a package with calls between modules, tests, docs.
SAMPLE_PROJECT = {
    "src/shop/__init__.py": "",
    "src/shop/orders.py": '''"""Orders: placing and cancelling them."""

from shop.payments import charge_card


class OrderRejected(Exception):
    """The order cannot be placed."""


class OrderService:
    def __init__(self, repository):
        self.repository = repository

    def place_order(self, customer_id, items):
        """Charge the customer and store a new order."""
        if not items:
            raise OrderRejected("an order needs at least one item")
        total = sum(item.price for item in items)
        charge_card(customer_id, total)
        return self.repository.save(customer_id, items, total)

    def cancel_order(self, order_id):
        order = self.repository.get(order_id)
        order.cancelled = True
        return order
''',
    "src/shop/payments.py": '''"""Payments through the card gateway."""


class PaymentDeclined(Exception):
    pass


def charge_card(customer_id, amount):
    """Charge a customer's card; raises PaymentDeclined when the bank refuses."""
    if amount <= 0:
        raise PaymentDeclined(f"invalid amount {amount}")
    return {"customer": customer_id, "amount": amount}


def refund_payment(payment_id):
    return {"refunded": payment_id}
''',
    "tests/test_orders.py": """from shop.orders import OrderService


def test_place_order_charges_card():
    service = OrderService(repository=None)
    assert service is not None
""",
    "docs/orders.md": "# Orders\n\nplace_order charges the card, then stores the order.\n",
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def installed(service: str) -> bool:
    try:
        return importlib.util.find_spec(f"locus.{service}.__main__") is not None
    except ModuleNotFoundError:
        return False


@dataclass
class ServiceProcess:
    name: str
    address: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, characters: int = 3000) -> str:
        return (
            self.log_path.read_text(errors="replace")[-characters:]
            if self.log_path.exists()
            else ""
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _wait_until_serving(started: ServiceProcess, mesh: MeshCredentials | None = None) -> None:
    """Until the process answers SERVING (asked with ``mesh``: with mTLS, its certificate); a
    process that exits (a crash at start-up) or stays unready for STARTUP_SECONDS raises
    RuntimeError with its log, at once for a crash."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        code = started.process.poll()
        if code is not None:
            raise RuntimeError(
                f"locus.{started.name} exited with code {code} while starting; "
                f"log: {started.log_tail()}"
            )
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RuntimeError(
                f"locus.{started.name} not SERVING after {STARTUP_SECONDS:.0f}s; "
                f"log: {started.log_tail()}"
            )
        try:
            asyncio.run(
                wait_until_serving(started.address, within_seconds=min(remaining, 2.0), mesh=mesh)
            )
            return
        except TimeoutError:
            continue


@dataclass
class Stack:
    nats_url: str
    stream_name: str
    subject_prefix: str
    work_dir: Path
    addresses: dict[str, str]
    environment: dict[str, str]
    running: dict[str, ServiceProcess] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def require(self, *services: str) -> None:
        for service in services:
            if service in self.running:
                continue
            reason = self.problems.get(service, f"locus.{service} is not installed in this venv")
            unavailable(f"the {service} service", reason)

    def start_service(
        self,
        service: str,
        port: int | None = None,
        *,
        environment: dict[str, str] | None = None,
        mesh: MeshCredentials | None = None,
    ) -> ServiceProcess:
        """Start ``python -m locus.<service>`` with this stack's settings, ``environment`` on
        top (and wait for it, asking with ``mesh``). The caller stops a process it started
        this way."""
        port = port or free_port()
        prefix = f"LOCUS_{service.upper()}_"
        data_dir = self.work_dir / f"{service}-{uuid.uuid4().hex[:6]}"
        data_dir.mkdir(parents=True)
        environment = {
            **os.environ,
            **self.environment,
            **(environment or {}),
            f"{prefix}GRPC_PORT": str(port),
            f"{prefix}DATA_DIR": str(data_dir),
        }
        log_path = data_dir / "service.log"
        with log_path.open("wb") as log_file:
            process = subprocess.Popen(
                [sys.executable, "-m", f"locus.{service}"],
                env=environment,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                cwd=data_dir,
            )
        started = ServiceProcess(service, f"127.0.0.1:{port}", process, log_path)
        try:
            # A thread of its own: callers may be sync fixtures or async tests.
            with ThreadPoolExecutor(max_workers=1) as waiter:
                waiter.submit(_wait_until_serving, started, mesh).result()
        except BaseException:
            started.stop()
            raise
        return started

    def gateway_settings(self, data_dir: Path, **peer_overrides: str) -> GatewaySettings:
        peers = {f"{name}_addr": address for name, address in self.addresses.items()}
        peers.update({f"{name}_addr": address for name, address in peer_overrides.items()})
        return GatewaySettings(
            grpc_host="127.0.0.1",
            grpc_port=0,
            nats_url=self.nats_url,
            stream_name=self.stream_name,
            subject_prefix=self.subject_prefix,
            data_dir=data_dir,
            database_url="",
            peers=PeerAddresses(**peers),
            ingestion_timeout_seconds=10,
            ast_timeout_seconds=20,
            retrieval_timeout_seconds=60,
            impact_timeout_seconds=20,
            answer_timeout_seconds=120,
            shutdown_grace_seconds=1,
            admin_key_file=data_dir / "admin.key",
            service_token=SecretStr(SERVICE_TOKEN),
        )


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    work_dir = tmp_path_factory.mktemp("gateway-stack")
    suffix = uuid.uuid4().hex[:8]
    stages = [s for s in INDEXING_STAGES if installed(s)]
    with EmbeddedNatsServer(work_dir / "nats") as nats:
        addresses = {name: f"127.0.0.1:{free_port()}" for name in DOWNSTREAM}
        environment = {
            "LOCUS_NATS_URL": nats.url,
            "LOCUS_STREAM_NAME": f"LOCUS_T{suffix.upper()}",
            "LOCUS_SUBJECT_PREFIX": f"locus.t{suffix}.v1",
            "LOCUS_INGESTION_ALLOWED_BASES": str(work_dir),
            "LOCUS_INGESTION_REQUIRED_STAGES": ",".join(stages),
            "LOCUS_INGESTION_EMBEDDING_STAGES": "vectors" if "retrieval" in stages else "",
            # Absolute: each service runs in its own data directory.
            "LOCUS_RETRIEVAL_MODEL_DIR": str(MODEL_DIR),
            "LOCUS_LOG_LEVEL": "INFO",
            "LOCUS_SERVICE_TOKEN": SERVICE_TOKEN,
            **{f"LOCUS_{name.upper()}_ADDR": address for name, address in addresses.items()},
        }
        environment.pop("LOCUS_DATABASE_URL", None)
        stack = Stack(
            nats_url=nats.url,
            stream_name=environment["LOCUS_STREAM_NAME"],
            subject_prefix=environment["LOCUS_SUBJECT_PREFIX"],
            work_dir=work_dir,
            addresses=addresses,
            environment=environment,
        )
        try:
            for service in DOWNSTREAM:
                if not installed(service):
                    continue
                port = int(addresses[service].rsplit(":", 1)[1])
                try:
                    stack.running[service] = stack.start_service(service, port)
                except RuntimeError as error:
                    stack.problems[service] = f"it did not start: {error}"
            yield stack
        finally:
            for process in reversed(list(stack.running.values())):
                process.stop()


@dataclass
class Gateway:
    stub: Any  # gateway_pb2_grpc.GatewayStub, calling as the deployment's admin
    runtime: ServiceRuntime
    settings: GatewaySettings
    channel: grpc.aio.Channel
    admin_key: str
    other_channels: list[grpc.aio.Channel] = field(default_factory=list)

    def stub_as(self, credential: str | None) -> Any:
        """A stub calling with another credential (None: with none at all)."""
        interceptors = bearer_interceptors(credential) if credential else None
        channel = grpc.aio.insecure_channel(self.runtime.address, interceptors=interceptors)
        self.other_channels.append(channel)
        return gateway_pb2_grpc.GatewayStub(channel)

    async def create_project(self, source: Path | None = None) -> Any:
        """A new project (unique name), with ``source`` as its source root when given."""
        name = f"shop-{uuid.uuid4().hex[:8]}"
        project = await self.stub.CreateProject(ingestion_pb2.CreateProjectRequest(name=name))
        if source is not None:
            await self.stub.AddSource(
                ingestion_pb2.AddSourceRequest(project_id=name, path=str(source))
            )
        return project

    async def scan_and_wait(self, project_ref: str, within_seconds: float = 180) -> Any:
        """Scan and wait until every file is embedded (searchable and with its vectors), so
        that what a test asks does not depend on how far the vectors lane got."""
        job = await self.stub.StartScan(ingestion_pb2.StartScanRequest(project_id=project_ref))
        deadline = time.monotonic() + within_seconds
        while time.monotonic() < deadline:
            job = await self.stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job.job_id))
            if job.state == ingestion_pb2.SCAN_STATE_FAILED or (
                job.state == ingestion_pb2.SCAN_STATE_COMPLETED
                and job.level == events_pb2.SCAN_LEVEL_EMBEDDED
            ):
                return job
            await asyncio.sleep(0.2)
        raise TimeoutError(f"scan {job.job_id} not finished after {within_seconds}s: {job}")


GatewayFactory = Callable[..., Awaitable[Gateway]]


@pytest.fixture
async def start_gateway(stack: Stack, tmp_path: Path) -> AsyncIterator[GatewayFactory]:
    """Start gateways in-process (each on a fresh SQLite request log, wired to the stack;
    ``peer=address`` keyword arguments rewire a peer, ``settings_update`` changes settings); all
    are stopped after the test."""
    started: list[Gateway] = []

    async def start(
        exporters: Sequence[SpanExporter] = (),
        settings_update: dict[str, Any] | None = None,
        **peer_overrides: str,
    ) -> Gateway:
        settings = stack.gateway_settings(tmp_path / f"gateway-{len(started)}", **peer_overrides)
        if settings_update:
            settings = GatewaySettings.model_validate({**settings.model_dump(), **settings_update})
        runtime = build(settings, exporters=exporters)
        await runtime.start()
        assert settings.admin_key_file is not None
        admin_key = settings.admin_key_file.read_text().strip()
        channel = grpc.aio.insecure_channel(
            runtime.address, interceptors=bearer_interceptors(admin_key)
        )
        gateway = Gateway(
            gateway_pb2_grpc.GatewayStub(channel), runtime, settings, channel, admin_key
        )
        started.append(gateway)
        return gateway

    try:
        yield start
    finally:
        for gateway in reversed(started):
            await gateway.channel.close()
            for other in gateway.other_channels:
                await other.close()
            await gateway.runtime.stop()


@pytest.fixture
async def gateway(start_gateway: GatewayFactory) -> Gateway:
    """The gateway wired to the whole stack."""
    return await start_gateway()


@pytest.fixture
async def system(stack: Stack, gateway: Gateway) -> dict[str, Any]:
    """A system with subsystems "sales" (orders, invoices) and "astronomy" (telescope), every
    project scanned (tests/support/scoped_system.py): {"system": name, "projects": {key:
    Project}}."""
    stack.require("ingestion", "ast", "retrieval")
    return await make_system(gateway, stack.work_dir)


@pytest.fixture
def dead_address() -> str:
    """A loopback address nothing listens on."""
    return f"127.0.0.1:{free_port()}"


@pytest.fixture
def sample_tree(stack: Stack) -> Path:
    """A fresh copy of the sample project under the stack's allowed base directory."""
    root = (stack.work_dir / f"shop-{uuid.uuid4().hex[:8]}").resolve()
    for relative_path, text in SAMPLE_PROJECT.items():
        path = root / relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def git_sample_tree(sample_tree: Path) -> Path:
    """The sample project as a git work tree with two commits (a change history)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(sample_tree), *args], check=True, env=env)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "Add the shop")
    payments = sample_tree / "src" / "shop" / "payments.py"
    payments.write_text(payments.read_text() + "\n# cards are charged once\n")
    git("commit", "-q", "-am", "Charge a card only once per order")
    return sample_tree


@pytest.fixture
def stack_type() -> type[Stack]:
    """The Stack class, for tests of the fixture itself (conftest is not importable by name)."""
    return Stack
