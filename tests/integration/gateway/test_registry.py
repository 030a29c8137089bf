"""The registry (System -> Subsystem -> Project) and RemoveSource through the real gateway and
real downstream services: CRUD with paging and filters, the refusals (duplicate names, unknown
ids, a system that still has subsystems, writes without admin:*), a renamed project keeping its
key grants, and a removed source's files disappearing from FindSymbols and Search while another
source of the same project stays; the CLI's registry commands as processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from gateway_calls import refusal

from locus.v1 import ast_pb2, common_pb2, events_pb2, gateway_pb2, ingestion_pb2, retrieval_pb2

pytestmark = pytest.mark.integration

LOCUS = Path(sys.executable).parent / "locus"
READER, WRITER, ADMIN = gateway_pb2.ROLE_READER, gateway_pb2.ROLE_WRITER, gateway_pb2.ROLE_ADMIN


async def key_for(gateway: Any, project: str, role: int) -> Any:
    created = await gateway.stub.CreateApiKey(
        gateway_pb2.CreateApiKeyRequest(
            name=f"k-{uuid.uuid4().hex[:6]}", grants=[gateway_pb2.Grant(project=project, role=role)]
        )
    )
    return gateway.stub_as(created.api_key)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def test_systems_and_subsystems_crud_paging_filters_and_refusals(gateway: Any) -> None:
    stub = gateway.stub
    shop = await stub.CreateSystem(
        ingestion_pb2.CreateSystemRequest(name=unique("shop"), description="the web shop")
    )
    tools = await stub.CreateSystem(ingestion_pb2.CreateSystemRequest(name=unique("tools")))
    assert shop.system_id.startswith("sys_")
    assert shop.description == "the web shop"
    assert (await stub.GetSystem(ingestion_pb2.GetSystemRequest(system_id=shop.name))) == shop

    # Paging through every system visits each once.
    seen: list[str] = []
    token = ""
    while True:
        page = await stub.ListSystems(
            ingestion_pb2.ListSystemsRequest(
                page=common_pb2.PageRequest(page_size=1, page_token=token)
            )
        )
        seen.extend(s.system_id for s in page.systems)
        token = page.next_page_token
        if not token:
            break
    assert {shop.system_id, tools.system_id} <= set(seen)
    assert len(seen) == len(set(seen))

    orders = await stub.CreateSubsystem(
        ingestion_pb2.CreateSubsystemRequest(system_id=shop.name, name="orders")
    )
    await stub.CreateSubsystem(
        ingestion_pb2.CreateSubsystemRequest(system_id=shop.name, name="pay")
    )
    await stub.CreateSubsystem(
        ingestion_pb2.CreateSubsystemRequest(system_id=tools.name, name="ci")
    )
    # The same subsystem name in another system is fine; in the same system it is not.
    other_orders = await stub.CreateSubsystem(
        ingestion_pb2.CreateSubsystemRequest(system_id=tools.system_id, name="orders")
    )
    assert other_orders.subsystem_id != orders.subsystem_id
    listed = await stub.ListSubsystems(ingestion_pb2.ListSubsystemsRequest(system_id=shop.name))
    assert [s.name for s in listed.subsystems] == ["orders", "pay"]
    assert {s.system for s in listed.subsystems} == {shop.name}
    by_name = await stub.GetSubsystem(
        ingestion_pb2.GetSubsystemRequest(subsystem_id="orders", system_id=shop.name)
    )
    assert by_name.subsystem_id == orders.subsystem_id

    # Projects: created in a subsystem, listed by system and subsystem, renamed and moved.
    first = await stub.CreateProject(
        ingestion_pb2.CreateProjectRequest(name=unique("p"), subsystem_id=orders.subsystem_id)
    )
    assert (first.system, first.subsystem) == (shop.name, "orders")
    assert first.system_id == shop.system_id
    legacy = await stub.CreateProject(
        ingestion_pb2.CreateProjectRequest(name=unique("p"), system=shop.name, subsystem="pay")
    )
    assert (legacy.system, legacy.subsystem) == (shop.name, "pay")
    loose = await stub.CreateProject(ingestion_pb2.CreateProjectRequest(name=unique("p")))
    assert (loose.system, loose.subsystem_id) == ("", "")

    async def names(**filters: str) -> set[str]:
        reply = await stub.ListProjects(ingestion_pb2.ListProjectsRequest(**filters))
        return {p.name for p in reply.projects}

    assert await names(system=shop.name) == {first.name, legacy.name}
    assert await names(subsystem=orders.subsystem_id) == {first.name}
    assert await names(system=shop.name, subsystem="pay") == {legacy.name}

    renamed = unique("renamed")
    moved = await stub.UpdateProject(
        ingestion_pb2.UpdateProjectRequest(
            project_id=first.name, name=renamed, subsystem_id="ci", system=tools.name
        )
    )
    assert (moved.project_id, moved.name) == (first.project_id, renamed)
    assert (moved.system, moved.subsystem) == (tools.name, "ci")
    assert await names(system=shop.name) == {legacy.name}
    out = await stub.UpdateProject(
        ingestion_pb2.UpdateProjectRequest(project_id=renamed, subsystem_id="")
    )
    assert (out.system, out.subsystem) == ("", "")

    # Renaming and describing systems and subsystems.
    shop_name = unique("shop2")
    updated = await stub.UpdateSystem(
        ingestion_pb2.UpdateSystemRequest(system_id=shop.system_id, name=shop_name)
    )
    assert (updated.name, updated.description, updated.subsystem_count) == (
        shop_name,
        "the web shop",
        2,
    )
    payments = await stub.UpdateSubsystem(
        ingestion_pb2.UpdateSubsystemRequest(
            subsystem_id="pay", system_id=shop_name, name="payments", description="cards"
        )
    )
    assert (payments.name, payments.description, payments.project_count) == ("payments", "cards", 1)
    again = await stub.GetProject(ingestion_pb2.GetProjectRequest(project_id=legacy.project_id))
    assert (again.system, again.subsystem) == (shop_name, "payments")

    # Refusals.
    checks = [
        (
            stub.CreateSystem(ingestion_pb2.CreateSystemRequest(name=tools.name)),
            grpc.StatusCode.ALREADY_EXISTS,
            "exists already",
        ),
        (
            stub.CreateSubsystem(
                ingestion_pb2.CreateSubsystemRequest(system_id=shop_name, name="orders")
            ),
            grpc.StatusCode.ALREADY_EXISTS,
            "already",
        ),
        (
            stub.UpdateSystem(
                ingestion_pb2.UpdateSystemRequest(system_id=shop_name, name=tools.name)
            ),
            grpc.StatusCode.ALREADY_EXISTS,
            "exists already",
        ),
        (
            stub.GetSystem(ingestion_pb2.GetSystemRequest(system_id="sys_nope")),
            grpc.StatusCode.NOT_FOUND,
            "no system",
        ),
        (
            stub.GetSubsystem(ingestion_pb2.GetSubsystemRequest(subsystem_id="sub_nope")),
            grpc.StatusCode.NOT_FOUND,
            "no subsystem",
        ),
        (
            stub.ListProjects(ingestion_pb2.ListProjectsRequest(system="no-such-system")),
            grpc.StatusCode.NOT_FOUND,
            "no system",
        ),
        (
            stub.CreateSystem(ingestion_pb2.CreateSystemRequest(name="has space")),
            grpc.StatusCode.INVALID_ARGUMENT,
            "may contain only",
        ),
        (
            stub.DeleteSystem(ingestion_pb2.DeleteSystemRequest(system_id=shop_name)),
            grpc.StatusCode.FAILED_PRECONDITION,
            "still has 2 subsystem(s)",
        ),
        (
            stub.DeleteSubsystem(
                ingestion_pb2.DeleteSubsystemRequest(subsystem_id=payments.subsystem_id)
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "still has 1 project(s)",
        ),
    ]
    for call, code, says in checks:
        error = await refusal(call)
        assert error.code() == code, (code, error.details())
        assert says in (error.details() or ""), error.details()

    # Deleting, once empty.
    await stub.UpdateProject(
        ingestion_pb2.UpdateProjectRequest(project_id=legacy.name, subsystem_id="")
    )
    for subsystem in (payments.subsystem_id, orders.subsystem_id):
        await stub.DeleteSubsystem(ingestion_pb2.DeleteSubsystemRequest(subsystem_id=subsystem))
    deleted = await stub.DeleteSystem(ingestion_pb2.DeleteSystemRequest(system_id=shop_name))
    assert deleted.system_id == shop.system_id
    gone = await refusal(stub.GetSystem(ingestion_pb2.GetSystemRequest(system_id=shop.system_id)))
    assert gone.code() == grpc.StatusCode.NOT_FOUND


async def test_registry_writes_need_a_system_admin_and_reads_any_principal(gateway: Any) -> None:
    stub = gateway.stub
    system = await stub.CreateSystem(ingestion_pb2.CreateSystemRequest(name=unique("sys")))
    subsystem = await stub.CreateSubsystem(
        ingestion_pb2.CreateSubsystemRequest(system_id=system.system_id, name="core")
    )
    project = await stub.CreateProject(ingestion_pb2.CreateProjectRequest(name=unique("p")))
    writer = await key_for(gateway, project.name, WRITER)
    admin_of_project = await key_for(gateway, project.name, ADMIN)
    reader = await key_for(gateway, project.name, READER)

    for caller in (reader, writer, admin_of_project):
        for call in (
            caller.CreateSystem(ingestion_pb2.CreateSystemRequest(name=unique("x"))),
            caller.UpdateSystem(
                ingestion_pb2.UpdateSystemRequest(system_id=system.system_id, description="d")
            ),
            caller.DeleteSystem(ingestion_pb2.DeleteSystemRequest(system_id=system.system_id)),
            caller.CreateSubsystem(
                ingestion_pb2.CreateSubsystemRequest(system_id=system.system_id, name="x")
            ),
            caller.UpdateSubsystem(
                ingestion_pb2.UpdateSubsystemRequest(subsystem_id=subsystem.subsystem_id, name="y")
            ),
            caller.DeleteSubsystem(
                ingestion_pb2.DeleteSubsystemRequest(subsystem_id=subsystem.subsystem_id)
            ),
        ):
            error = await refusal(call)
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error.details()
            assert "admin" in (error.details() or "")
        # Reads are not project data: any principal reads the registry.
        assert (
            await caller.GetSystem(ingestion_pb2.GetSystemRequest(system_id=system.name))
        ).system_id == system.system_id
        listed = await caller.ListSubsystems(
            ingestion_pb2.ListSubsystemsRequest(system_id=system.system_id)
        )
        assert [s.name for s in listed.subsystems] == ["core"]
        assert (await caller.ListSystems(ingestion_pb2.ListSystemsRequest())).systems

    # UpdateProject needs admin on the project; a renamed project keeps its keys' grants.
    for caller in (reader, writer):
        error = await refusal(
            caller.UpdateProject(
                ingestion_pb2.UpdateProjectRequest(project_id=project.name, name=unique("n"))
            )
        )
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    new_name = unique("renamed")
    await admin_of_project.UpdateProject(
        ingestion_pb2.UpdateProjectRequest(
            project_id=project.name, name=new_name, subsystem_id=subsystem.subsystem_id
        )
    )
    seen = await reader.GetProject(ingestion_pb2.GetProjectRequest(project_id=new_name))
    assert (seen.project_id, seen.subsystem) == (project.project_id, "core")


async def _wait_for(gateway: Any, job_id: str, within_seconds: float = 180) -> Any:
    deadline = time.monotonic() + within_seconds
    while time.monotonic() < deadline:
        job = await gateway.stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job_id))
        if job.state == ingestion_pb2.SCAN_STATE_FAILED or (
            job.state == ingestion_pb2.SCAN_STATE_COMPLETED
            and job.level == events_pb2.SCAN_LEVEL_EMBEDDED
        ):
            return job
        await asyncio.sleep(0.2)
    raise TimeoutError(f"job {job_id} not done after {within_seconds}s")


async def test_removing_a_source_retracts_its_files_and_keeps_the_other_source(
    gateway: Any, stack: Any, sample_tree: Path
) -> None:
    stack.require("ingestion", "ast", "retrieval", "impact")
    marker = f"lonely_{uuid.uuid4().hex[:8]}"
    extra = sample_tree.with_name(sample_tree.name + "-extra")
    (extra / "tools").mkdir(parents=True)
    (extra / "tools/only_here.py").write_text(
        f'"""Only in the removed source."""\n\n\ndef {marker}():\n    return "{marker}"\n',
        encoding="utf-8",
    )
    project = await gateway.create_project(sample_tree)
    removed = await gateway.stub.AddSource(
        ingestion_pb2.AddSourceRequest(project_id=project.name, path=str(extra))
    )
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job

    async def symbols(name: str) -> list[Any]:
        reply = await gateway.stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(project_id=project.name, name=name, exact=True)
        )
        return list(reply.symbols)

    async def hit_paths(query: str) -> set[str]:
        reply = await gateway.stub.Search(
            retrieval_pb2.SearchRequest(
                query=query,
                mode=retrieval_pb2.SEARCH_MODE_BM25,
                filters=retrieval_pb2.SearchFilters(project_id=project.name),
                top_k=20,
            )
        )
        return {hit.chunk.location.relative_path for hit in reply.hits}

    assert await symbols(marker)
    assert "tools/only_here.py" in await hit_paths(marker)

    # A writer of another project may not; an unknown source is NOT_FOUND.
    other = await gateway.create_project()
    outsider = await key_for(gateway, other.name, WRITER)
    error = await refusal(
        outsider.RemoveSource(ingestion_pb2.RemoveSourceRequest(source_id=removed.source_id))
    )
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error.details()
    error = await refusal(
        gateway.stub.RemoveSource(ingestion_pb2.RemoveSourceRequest(source_id="src_nope"))
    )
    assert error.code() == grpc.StatusCode.NOT_FOUND

    writer = await key_for(gateway, project.name, WRITER)
    reply = await writer.RemoveSource(
        ingestion_pb2.RemoveSourceRequest(source_id=removed.source_id)
    )
    assert reply.source.source_id == removed.source_id
    # Not twice while its retraction runs.
    again = await refusal(
        gateway.stub.RemoveSource(ingestion_pb2.RemoveSourceRequest(source_id=removed.source_id))
    )
    assert again.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND)
    done = await _wait_for(gateway, reply.job.job_id)
    assert done.state == ingestion_pb2.SCAN_STATE_COMPLETED, done
    assert done.stats.files_deleted == 1

    assert not await symbols(marker)
    assert "tools/only_here.py" not in await hit_paths(marker)
    assert await symbols("place_order")
    assert "src/shop/orders.py" in await hit_paths("place order charge card")
    sources = await gateway.stub.ListSources(
        ingestion_pb2.ListSourcesRequest(project_id=project.name)
    )
    assert [s.path for s in sources.sources] == [str(sample_tree)]
    # A rescan does not bring the removed source back.
    rescan = await gateway.scan_and_wait(project.name)
    assert rescan.state == ingestion_pb2.SCAN_STATE_COMPLETED
    assert not await symbols(marker)


def _locus(gateway: Any, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a process against the real gateway, as its admin."""
    return subprocess.run(
        [str(LOCUS), *args, "--gateway", gateway.runtime.address],
        env={**os.environ, "LOCUS_API_KEY": gateway.admin_key, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_the_cli_manages_the_registry(gateway: Any) -> None:
    system, project = unique("cli-sys"), unique("cli-p")
    await gateway.stub.CreateProject(ingestion_pb2.CreateProjectRequest(name=project))

    def ok(*args: str) -> str:
        done = _locus(gateway, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    def run() -> None:
        ok("system", "create", system, "--description", "made by the CLI")
        ok("subsystem", "create", "core", "--system", system)
        listed = json.loads(ok("subsystem", "list", "--system", system, "--json"))
        assert [s["name"] for s in listed["subsystems"]] == ["core"]
        moved = json.loads(
            ok("project", "move", project, "--subsystem", "core", "--system", system, "--json")
        )
        assert (moved["system"], moved["subsystem"]) == (system, "core")
        ok("project", "rename", project, project + "-x")
        ok("subsystem", "rename", "core", "engine", "--system", system)
        shown = json.loads(ok("system", "get", system, "--json"))
        assert (shown["description"], shown["subsystem_count"]) == ("made by the CLI", 1)
        refused = _locus(gateway, "system", "delete", system)
        assert refused.returncode != 0
        assert "still has 1 subsystem(s)" in refused.stderr
        ok("project", "move", project + "-x", "--none")
        ok("subsystem", "delete", "engine", "--system", system)
        ok("system", "delete", system)
        assert system not in ok("system", "list", "--json")

    await asyncio.to_thread(run)
