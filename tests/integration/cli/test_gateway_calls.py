"""`locus ask` and `locus locate` against a scripted Gateway on a real gRPC port (--gateway):
the trace context and request ID go out with the call, and Ctrl-C cancels the answer stream on
the server."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from scripted_gateway import LOCUS, cli_environment, serve_gateway

from locus.v1 import answer_pb2, common_pb2, gateway_pb2, gateway_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


class ScriptedGateway(gateway_pb2_grpc.GatewayServicer):
    """Answers Locate at once; Ask sends the located code and some text, then waits."""

    def __init__(self) -> None:
        self.metadata: dict[str, str] = {}
        self.located: gateway_pb2.LocateRequest | None = None
        self.ask_cancelled = asyncio.Event()

    def _remember(self, context: grpc.aio.ServicerContext) -> None:
        self.metadata = {key: str(value) for key, value in context.invocation_metadata() or ()}

    async def Locate(
        self, request: gateway_pb2.LocateRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.LocateResponse:
        self._remember(context)
        self.located = request
        scoped = request.HasField("scope")
        symbol = common_pb2.Symbol(
            qualified_name="locus.messaging.bus.EventBus._dead_letter",
            name="_dead_letter",
            kind=common_pb2.SYMBOL_KIND_METHOD,
            location=common_pb2.CodeLocation(relative_path="bus.py", start_line=239, end_line=267),
        )
        located = gateway_pb2.LocatedSymbol(symbol=symbol, score=0.7)
        return gateway_pb2.LocateResponse(
            request_id=self.metadata.get("x-request-id", ""),
            files=[
                gateway_pb2.LocatedFile(
                    relative_path="bus.py",
                    score=0.9,
                    symbols=[located],
                    project_id="p_bus" if scoped else "",
                    project_name="messaging" if scoped else "",
                )
            ][: request.max_files],
            symbols=[located],
            projects=[gateway_pb2.LocatedProject(project_id="p_bus", name="messaging", files=1)]
            if scoped
            else [],
        )

    async def Ask(
        self, request: gateway_pb2.AskRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[gateway_pb2.AskEvent]:
        self._remember(context)
        yield gateway_pb2.AskEvent(
            request_id="r_ask",
            located=gateway_pb2.LocateResponse(
                files=[gateway_pb2.LocatedFile(relative_path="bus.py", score=0.9)]
            ),
        )
        yield gateway_pb2.AskEvent(text=answer_pb2.TextDelta(text="Events are dead-lettered in "))
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.ask_cancelled.set()
            raise
        yield gateway_pb2.AskEvent(final=answer_pb2.Final(status=answer_pb2.FINAL_STATUS_FINISHED))


@pytest.fixture
async def gateway() -> AsyncIterator[tuple[ScriptedGateway, str]]:
    servicer = ScriptedGateway()
    async with serve_gateway(servicer) as address:
        yield servicer, address


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    return cli_environment(tmp_path)


async def test_locate_sends_the_request_id_and_trace_context(
    gateway: tuple[ScriptedGateway, str], environment: dict[str, str]
) -> None:
    servicer, address = gateway
    process = await asyncio.create_subprocess_exec(
        str(LOCUS), "locate", "demo", "where are events dead-lettered?",
        "--gateway", address, "--json", "--max-files", "3",
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    data = json.loads(stdout)
    assert data["files"][0]["path"] == "bus.py"
    assert data["symbols"][0]["location"] == "bus.py:239-267"
    request_id = servicer.metadata["x-request-id"]
    assert data["request_id"] == request_id
    # The CLI's root span is the parent of the call: one trace starts at the CLI.
    assert servicer.metadata["traceparent"].startswith("00-")
    assert f"locus.request_id={request_id}" in servicer.metadata["baggage"]


async def test_locate_over_a_scope_sends_it_and_names_each_files_project(
    gateway: tuple[ScriptedGateway, str], environment: dict[str, str]
) -> None:
    servicer, address = gateway
    process = await asyncio.create_subprocess_exec(
        str(LOCUS), "locate", "where are events dead-lettered?", "--system", "platform",
        "--subsystem", "runtime", "--gateway", address, "--json",
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    assert servicer.located is not None
    assert servicer.located.project_id == ""
    assert servicer.located.scope == common_pb2.Scope(subsystem="runtime", system="platform")
    file = json.loads(stdout)["files"][0]
    assert (file["project_id"], file["project_name"]) == ("p_bus", "messaging")

    process = await asyncio.create_subprocess_exec(
        str(LOCUS), "locate", "where are events dead-lettered?", "--project", "messaging",
        "--project", "events", "--gateway", address,
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    assert list(servicer.located.scope.projects) == ["messaging", "events"]
    assert "[messaging] bus.py" in stdout.decode()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def test_ctrl_c_cancels_the_answer_stream(
    gateway: tuple[ScriptedGateway, str], environment: dict[str, str]
) -> None:
    servicer, address = gateway
    process = await asyncio.create_subprocess_exec(
        str(LOCUS), "ask", "demo", "where are events dead-lettered?", "--gateway", address,
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        # As a terminal starts it: a test run launched in the background (nohup, `&` without
        # job control) ignores SIGINT, and an ignored SIGINT is inherited, so Ctrl-C would
        # never reach the CLI.
        preexec_fn=_default_sigint,
    )  # fmt: skip
    assert process.stdout is not None
    seen = b""
    while b"dead-lettered in" not in seen:
        chunk = await asyncio.wait_for(process.stdout.read(1024), timeout=20)
        assert chunk, "the answer text never arrived"
        seen += chunk
    assert b"bus.py" in seen.split(b"dead-lettered in")[0]  # located code came first

    process.send_signal(signal.SIGINT)
    await asyncio.wait_for(servicer.ask_cancelled.wait(), timeout=10)
    _, stderr = await asyncio.wait_for(process.communicate(), timeout=10)
    assert process.returncode == 130
    assert b"cancelled" in stderr
    assert b"Traceback" not in stderr
