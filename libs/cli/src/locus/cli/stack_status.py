"""``locus status``: the standard gRPC health check of every service of the running stack (or of
the gateway given with --gateway; GET /healthz of the MCP server), and whether its nats-server
still runs."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from locus.cli.local_stack import HTTP_SERVICES, health_url, http_health
from locus.cli.stack_credentials import mesh_credentials
from locus.cli.stack_state import process_is_alive, require_running_stack
from locus.rpc import MeshCredentials, make_channel

if TYPE_CHECKING:
    from locus.cli.invocation import CommandContext

HEALTH_TIMEOUT_SECONDS = 2.0
HEALTHY = frozenset({"SERVING", "RUNNING"})


async def check_health(
    address: str, context: CommandContext, mesh: MeshCredentials | None = None
) -> str:
    """SERVING / NOT_SERVING / ..., or the status code name when the check itself failed.
    Health needs no token; ``mesh`` carries the certificate a stack with mTLS asks for."""
    async with make_channel(
        address, context.telemetry, default_timeout=HEALTH_TIMEOUT_SECONDS, mesh=mesh
    ) as channel:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        except grpc.aio.AioRpcError as error:
            return str(error.code().name)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


async def check_http_health(address: str) -> str:
    """SERVING when the process's GET /healthz answers 200 (the MCP server)."""
    status = await asyncio.to_thread(http_health, health_url(address))
    return "SERVING" if status == 200 else ("NOT_SERVING" if status else "UNAVAILABLE")


async def stack_health(context: CommandContext) -> dict[str, Any]:
    """A report with stable keys; ``healthy`` is true when every process is up."""
    if context.gateway_override:
        health = await check_health(context.gateway_override, context)
        rows: list[dict[str, Any]] = [
            {
                "name": "gateway",
                "address": context.gateway_override,
                "pid": None,
                "health": health,
                "log_file": "",
            }
        ]
        report: dict[str, Any] = {
            "state_file": "",
            "data_dir": "",
            "supervisor_pid": None,
            "started_at": "",
        }
    else:
        stack = context.stack or require_running_stack()
        # Only the certificate (with mTLS on): health checks need no service token.
        mesh = mesh_credentials(stack.service_token_file).without_token()
        names = list(stack.services)
        healths = await asyncio.gather(
            *(
                check_http_health(stack.services[name].address)
                if name in HTTP_SERVICES
                else check_health(stack.services[name].address, context, mesh)
                for name in names
            )
        )
        rows = [
            {
                "name": "nats-server",
                "address": stack.nats.address,
                "pid": stack.nats.pid,
                "health": "RUNNING" if process_is_alive(stack.nats.pid) else "EXITED",
                "restarts": 0,
                "log_file": stack.nats.log_file,
            }
        ]
        rows.extend(
            {
                "name": name,
                "address": stack.services[name].address,
                "pid": stack.services[name].pid,
                "health": health,
                "restarts": stack.services[name].restarts,
                "metrics": stack.services[name].metrics_address,
                "log_file": stack.services[name].log_file,
            }
            for name, health in zip(names, healths, strict=True)
        )
        report = {
            "state_file": str(stack.state_file),
            "data_dir": stack.data_dir,
            "supervisor_pid": stack.supervisor_pid,
            "started_at": stack.started_at,
        }
    report["services"] = rows
    report["healthy"] = all(row["health"] in HEALTHY for row in rows)
    return report
