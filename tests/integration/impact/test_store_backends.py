"""The impact store on SQLite and on a real PostgreSQL (started by the tests, or
LOCUS_TEST_PG_URL): the same assertions for both, so no SQLite-only SQL creeps in."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from locus.database import Database
from locus.impact.adapters.messages import parsed_file_from_event
from locus.impact.adapters.store import ImpactStore
from locus.impact.domain import ImpactQuery, UpdateDecision, build_graph, compute_impact

pytestmark = pytest.mark.integration

ENFORCE = "uploads.policy.enforce_retry_limit"


async def apply_all(store: ImpactStore, uploads: dict[str, Any], job: str, seq: int) -> None:
    for parsed in uploads.values():
        for event in parsed.event(job, seq):
            await store.apply(parsed_file_from_event(event))


async def test_applied_files_load_back_as_a_graph_that_resolves_across_files(
    impact_store: ImpactStore, uploads: dict[str, Any]
) -> None:
    await apply_all(impact_store, uploads, "j1", 1)
    project = uploads["policy.py"].project_id

    snapshot = await impact_store.load_project(project)

    assert snapshot is not None
    assert snapshot.version == 4
    assert len(snapshot.files) == 4
    graph = build_graph(snapshot.files, snapshot.symbols, snapshot.relations, snapshot.dependencies)
    seed = uploads["policy.py"].node_id(ENFORCE)
    result = compute_impact(graph, ImpactQuery(project, (seed,), (), 1, False, 10))
    names = [s.symbol.qualified_name for s in result.symbols]
    assert "uploads.client.UploadClient.upload" in names
    assert await impact_store.load_project("p_unknown") is None


async def test_versions_decide_what_an_event_changes(
    impact_store: ImpactStore, uploads: dict[str, Any]
) -> None:
    client = uploads["client.py"]
    [first] = [parsed_file_from_event(e) for e in client.event("j2", 2)]

    assert (await impact_store.apply(first)).decision is UpdateDecision.NEW_VERSION
    assert (await impact_store.apply(first)).decision is UpdateDecision.SAME_VERSION
    older = replace(first, snapshot_seq=1)
    stale = await impact_store.apply(older)
    deleted = await impact_store.apply(parsed_file_from_event(client.deleted("j3", 3)))
    revived = await impact_store.apply(first)

    assert (stale.decision, stale.held_snapshot_seq) == (UpdateDecision.STALE, 2)
    assert deleted.decision is UpdateDecision.NEW_VERSION
    assert deleted.complete
    assert revived.decision is UpdateDecision.STALE  # the tombstone is newer
    snapshot = await impact_store.load_project(client.project_id)
    assert snapshot is not None
    assert (snapshot.files, snapshot.symbols, snapshot.relations) == ([], [], [])


async def test_parts_arriving_together_are_all_kept(
    impact_store: ImpactStore, uploads: dict[str, Any]
) -> None:
    client = uploads["client.py"]
    parts = [parsed_file_from_event(e) for e in client.event("j1", 1, parts=3)]

    outcomes = await asyncio.gather(*(impact_store.apply(p) for p in reversed(parts)))

    assert sum(o.complete for o in outcomes) == 1
    snapshot = await impact_store.load_project(client.project_id)
    assert snapshot is not None
    assert len(snapshot.symbols) == len(client.analysis.symbols)
    assert len(snapshot.relations) == len(client.analysis.relations)
    assert len(snapshot.dependencies) == len(client.analysis.dependencies)


async def test_one_batch_applies_its_parts_in_order_as_applying_them_one_by_one_would(
    impact_store: ImpactStore, uploads: dict[str, Any]
) -> None:
    """Within one transaction: a redelivered part of a stored file replaces its rows, a new
    version later in the batch drops what an earlier event of the batch added, a stale event
    changes nothing, and the graph ends as one-by-one application leaves it."""
    client, policy = uploads["client.py"], uploads["policy.py"]
    stored = [parsed_file_from_event(e) for e in client.event("j1", 1, parts=2)]
    for part in stored:
        await impact_store.apply(part)

    policy_v2 = [parsed_file_from_event(e) for e in policy.event("j2", 2, parts=2)]
    policy_v3 = [parsed_file_from_event(e) for e in policy.event("j3", 3)]
    outcomes = await impact_store.apply_batch(
        [stored[0], *policy_v2, replace(stored[1], snapshot_seq=0), *policy_v3]
    )

    assert [o.decision for o in outcomes] == [
        UpdateDecision.SAME_VERSION,
        UpdateDecision.NEW_VERSION,
        UpdateDecision.SAME_VERSION,
        UpdateDecision.STALE,
        UpdateDecision.NEW_VERSION,
    ]
    assert [o.complete for o in outcomes] == [True, False, True, True, True]
    snapshot = await impact_store.load_project(client.project_id)
    assert snapshot is not None
    assert sorted(f.file_id for f in snapshot.files) == sorted(
        [stored[0].file_id, policy_v3[0].file_id]
    )
    assert len(snapshot.symbols) == len(client.analysis.symbols) + len(policy.analysis.symbols)
    assert len(snapshot.relations) == len(client.analysis.relations) + len(
        policy.analysis.relations
    )
    again = await impact_store.apply(policy_v2[0])  # the batch left policy.py at seq 3
    assert (again.decision, again.held_snapshot_seq) == (UpdateDecision.STALE, 3)


async def test_a_deleted_project_keeps_a_tombstone_that_drops_its_later_parts(
    impact_store: ImpactStore, uploads: dict[str, Any], store_database_url: str
) -> None:
    """Deleting a project records its tombstone with the deletion; a batch holding a late part
    of it applies the other project's part only, and a store opened again (a restart) still
    drops the deleted project's parts."""
    await apply_all(impact_store, uploads, "j1", 1)
    project = uploads["policy.py"].project_id

    assert await impact_store.delete_project(project) == len(uploads)
    assert await impact_store.delete_project(project) == 0  # a redelivery deletes nothing
    [late] = [parsed_file_from_event(e) for e in uploads["client.py"].event("j1", 1)]
    [policy] = [parsed_file_from_event(e) for e in uploads["policy.py"].event("j2", 1)]
    kept = replace(policy, project_id="p_kept", file_id="f_kept")  # another project's file
    outcomes = await impact_store.apply_batch([late, kept])

    assert [o.project_deleted for o in outcomes] == [True, False]
    assert outcomes[1].decision is UpdateDecision.NEW_VERSION
    assert await impact_store.load_project(project) is None
    kept_graph = await impact_store.load_project("p_kept")
    assert kept_graph is not None
    assert [f.file_id for f in kept_graph.files] == ["f_kept"]

    reopened = ImpactStore(Database(store_database_url))
    await reopened.initialize()
    try:
        [outcome] = await reopened.apply_batch([late])
        assert outcome.project_deleted
        assert await reopened.load_project(project) is None
    finally:
        await reopened.close()
