"""The impact service on a real nats-server and real gRPC: files.parsed in, Compute out."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest

from locus.impact.main import build
from locus.messaging import index_updated_message_id
from locus.v1 import common_pb2, events_pb2, impact_pb2, impact_pb2_grpc

pytestmark = pytest.mark.integration

CALLS = common_pb2.RELATION_KIND_CALLS
ENFORCE = "uploads.policy.enforce_retry_limit"
UPLOAD = "uploads.client.UploadClient.upload"
ALL_FILES = ("__init__.py", "client.py", "errors.py", "policy.py")
INDEXED = events_pb2.INDEX_STATUS_INDEXED


def impacted(response: Any) -> dict[str, Any]:
    return {item.symbol.qualified_name: item for item in response.symbols}


async def test_callers_are_listed_with_a_called_by_chain_even_when_the_callee_arrives_last(
    impact: Any,
) -> None:
    # client.py (the caller) is indexed before policy.py defines what it calls
    await impact.publish_files("j1", 1, "client.py", "errors.py", "__init__.py")
    await impact.publish_files("j1", 1, "policy.py")
    policy = impact.files["policy.py"]

    response = await impact.compute(seed_node_ids=[policy.node_id(ENFORCE)])

    upload = impacted(response)[UPLOAD]
    assert upload.distance == 1
    assert upload.score == pytest.approx(1.0)
    assert [(s.relation, s.reverse) for s in upload.reason] == [(CALLS, True)]
    assert upload.reason[0].from_node_id == policy.node_id(ENFORCE)
    assert upload.reason[0].to_node_id == impact.files["client.py"].node_id(UPLOAD)
    assert upload.symbol.location.relative_path == "src/uploads/client.py"
    assert (upload.symbol.location.start_line, upload.symbol.location.end_line) == (42, 51)
    assert upload.symbol.location.project_id == impact.project_id
    assert response.symbols[0].symbol.qualified_name == UPLOAD  # callers rank first
    assert response.files[0].relative_path == "src/uploads/client.py"
    assert all(s == [INDEXED] for s in impact.statuses().values())


async def test_index_updated_reports_the_files_of_a_batch_with_a_deterministic_message_id(
    impact: Any,
) -> None:
    await impact.publish_files("j7", 1, *ALL_FILES)

    by_file = {}
    for message in impact.reports.messages:
        update = events_pb2.IndexUpdated.FromString(message.data)
        assert (update.stage, update.job_id) == ("impact", "j7")
        assert update.project_id == impact.project_id
        for file in update.files:
            by_file[file.file_id] = message.headers["Nats-Msg-Id"]
    assert len(by_file) == 4
    # Files applied together are reported together: fewer messages than files.
    assert len(impact.reports.messages) < len(by_file)
    message_id = by_file[impact.files["client.py"].file_id]
    assert message_id.startswith("index.updated:impact:j7:")
    # The id is derived from the files and versions reported: the same report, the same id.
    same = next(m for m in impact.reports.messages if m.headers["Nats-Msg-Id"] == message_id)
    assert message_id == index_updated_message_id(events_pb2.IndexUpdated.FromString(same.data))


async def test_a_multi_part_file_is_reported_once_after_its_last_part(impact: Any) -> None:
    await impact.publish_files("j1", 1, "policy.py")
    client = impact.files["client.py"]

    for event in client.event("j1", 1, parts=3):
        await impact.publish(event)
    await impact.wait_reported(client.file_id)

    assert impact.statuses()[client.file_id] == [INDEXED]
    response = await impact.compute(seed_node_ids=[impact.files["policy.py"].node_id(ENFORCE)])
    assert UPLOAD in impacted(response)


async def test_deleting_a_file_retracts_its_symbols_and_edges(impact: Any) -> None:
    await impact.publish_files("j1", 1, *ALL_FILES)
    policy, client = impact.files["policy.py"], impact.files["client.py"]

    await impact.publish(client.deleted("j2", 2))
    await impact.wait_reported(client.file_id, count=2)

    response = await impact.compute(seed_node_ids=[policy.node_id(ENFORCE)])
    assert UPLOAD not in impacted(response)
    assert all(f.file_id != client.file_id for f in response.files)
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await impact.compute(seed_file_ids=[client.file_id])
    assert error.value.code() == grpc.StatusCode.NOT_FOUND


async def test_redelivered_and_older_events_change_nothing(impact: Any) -> None:
    await impact.publish_files("j2", 2, *ALL_FILES)
    seed = impact.files["policy.py"].node_id(ENFORCE)
    before = await impact.compute(seed_node_ids=[seed], depth=3)
    client = impact.files["client.py"]

    [again] = client.event("j2", 2)
    await impact.publish(again, message_id=f"redelivered:{uuid.uuid4().hex}")
    [older] = client.event("j1", 1)
    await impact.publish(older)
    await impact.wait_reported(client.file_id, count=3)

    after = await impact.compute(seed_node_ids=[seed], depth=3)
    assert after == before
    assert impact.statuses()[client.file_id] == [
        INDEXED,
        INDEXED,
        events_pb2.INDEX_STATUS_SKIPPED,
    ]


async def test_a_malformed_event_is_dead_lettered_and_reported_failed(impact: Any) -> None:
    broken = events_pb2.FilesParsed(
        job_id="j1",
        project_id=impact.project_id,
        snapshot_seq=1,
        file=events_pb2.ChangedFile(file_id="f_broken", sha256="c" * 64),
        part_index=4,
        part_count=2,
    )

    await impact.publish(broken)
    await impact.dead_letters.wait_for(lambda messages: len(messages) >= 1)
    await impact.wait_reported("f_broken")

    letter = events_pb2.DeadLetter.FromString(impact.dead_letters.messages[0].data)
    assert letter.consumer == "impact"
    assert letter.subject == impact.publisher.subjects.files_parsed
    assert "part_index 4 is outside part_count 2" in letter.error
    assert events_pb2.FilesParsed.FromString(letter.payload) == broken
    assert impact.statuses()["f_broken"] == [events_pb2.INDEX_STATUS_FAILED]


async def test_the_graph_survives_a_restart(impact: Any) -> None:
    await impact.publish_files("j1", 1, *ALL_FILES)
    seed = impact.files["policy.py"].node_id(ENFORCE)
    before = await impact.compute(seed_node_ids=[seed])

    restarted = build(impact.settings)
    await restarted.start()
    try:
        async with grpc.aio.insecure_channel(restarted.address) as channel:
            after = await impact_pb2_grpc.ImpactServiceStub(channel).Compute(
                impact_pb2.ComputeImpactRequest(project_id=impact.project_id, seed_node_ids=[seed])
            )
    finally:
        await restarted.stop()
    assert after == before


async def test_file_seeds_and_subsystem_boundaries(impact: Any) -> None:
    await impact.publish_files("j1", 1, *ALL_FILES)
    errors = impact.files["errors.py"]

    response = await impact.compute(seed_file_ids=[errors.file_id], depth=2, stay_in_subsystem=True)

    assert all(f.file_id != errors.file_id for f in response.files)
    assert {item.symbol.location.file_id for item in response.symbols} <= {
        impact.files[name].file_id for name in ALL_FILES
    }
    retry = impacted(response)["uploads.client.UploadClient._retry"]
    assert [(s.relation, s.reverse) for s in retry.reason] == [(CALLS, True)]


async def test_other_projects_are_never_reached(impact: Any) -> None:
    await impact.publish_files("j1", 1, *ALL_FILES)

    with pytest.raises(grpc.aio.AioRpcError) as error:
        await impact.compute(
            project_id="p_other", seed_node_ids=[impact.files["policy.py"].node_id(ENFORCE)]
        )

    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    assert "scan the project first" in (error.value.details() or "")


async def test_invalid_queries_get_invalid_argument_and_unknown_seeds_not_found(
    impact: Any,
) -> None:
    await impact.publish_files("j1", 1, "policy.py")
    seed = impact.files["policy.py"].node_id(ENFORCE)

    for request, code in [
        ({"project_id": "", "seed_node_ids": [seed]}, grpc.StatusCode.INVALID_ARGUMENT),
        ({}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"seed_node_ids": [seed], "depth": 6}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"seed_node_ids": [seed], "depth": -1}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"seed_node_ids": ["n_missing"]}, grpc.StatusCode.NOT_FOUND),
    ]:
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await impact.compute(**request)
        assert error.value.code() == code, request
        assert error.value.details()


async def test_unknown_seeds_among_known_ones_are_listed_in_trailing_metadata(
    impact: Any,
) -> None:
    await impact.publish_files("j1", 1, "policy.py", "client.py")
    seed = impact.files["policy.py"].node_id(ENFORCE)
    call = impact.stub.Compute(
        impact_pb2.ComputeImpactRequest(
            project_id=impact.project_id,
            seed_node_ids=[seed, "n_missing"],
            seed_file_ids=["f_missing"],
        )
    )
    response = await call
    trailers = dict(await call.trailing_metadata())

    assert UPLOAD in impacted(response)
    assert trailers["locus-unknown-seed-node-ids"] == "n_missing"
    assert trailers["locus-unknown-seed-file-ids"] == "f_missing"


async def test_unknown_seeds_that_are_no_metadata_are_listed_escaped_and_bounded(
    impact: Any,
) -> None:
    """Found by `make reliability`'s fuzz: seeds with NUL bytes or non-ASCII characters, or an
    80,000-character one, went into the trailers as they were and failed the call as INTERNAL
    "Invalid metadata"; now they are escaped to printable ASCII and the list is cut at 2,000
    bytes, saying how many were left out."""
    await impact.publish_files("j1", 1, "policy.py", "client.py")
    seed = impact.files["policy.py"].node_id(ENFORCE)
    call = impact.stub.Compute(
        impact_pb2.ComputeImpactRequest(
            project_id=impact.project_id,
            seed_node_ids=[seed, "n_\x00nul", "日本語"],
            seed_file_ids=["f_" + "x" * 80_000, "f_missing"],
        )
    )
    response = await call
    trailers = dict(await call.trailing_metadata())

    assert UPLOAD in impacted(response)
    assert trailers["locus-unknown-seed-node-ids"] == "n_\\x00nul,\\u65e5\\u672c\\u8a9e"
    assert trailers["locus-unknown-seed-file-ids"] == "... (2 more)"


async def test_graphs_are_rebuilt_after_changes_and_survive_a_restart(
    impact_settings: Any, start_impact: Any
) -> None:
    """A scanned project's graph is built in the background (no query needed), written to the
    data directory, and loaded back by a restarted service before anyone asks."""
    settings = impact_settings.model_copy(update={"graph_rebuild_delay_seconds": 0.1})
    first = await start_impact(settings)
    try:
        await first.publish_files("j1", 1, *ALL_FILES)  # returns once every file is reported
        project_id = first.project_id
        graphs = first.runtime.graphs
        final = await graphs.stored_version(project_id)
        # The files may come in several batches, each bumping the version: the graph rebuilt
        # after the last one. Generous: on a loaded 2-core machine a rebuild waited past 15 s.
        await first.reports.wait_for(
            lambda received: graphs.cached_version(project_id) == final, within_seconds=60
        )
        snapshot = settings.data_dir / "graphs" / f"{project_id}.graph.pickle"
        await first.reports.wait_for(lambda received: snapshot.exists(), within_seconds=60)
        version = graphs.cached_version(project_id)
    finally:
        await first.close()

    second = await start_impact(settings, project_id)
    try:
        await second.reports.wait_for(
            lambda received: second.runtime.graphs.cached_version(project_id) == version,
            within_seconds=60,
        )
        response = await second.compute(seed_node_ids=[second.files["policy.py"].node_id(ENFORCE)])
        assert UPLOAD in impacted(response)
    finally:
        await second.close()


async def test_each_seed_answers_what_one_call_per_seed_would(impact: Any) -> None:
    """each_seed: every seed walked alone in one call, as the gateway's graph hop asks; an
    unknown seed is left out and named in the trailers, all unknown is NOT_FOUND."""
    await impact.publish_files("j1", 1, *ALL_FILES)
    client, errors = impact.files["client.py"], impact.files["errors.py"]
    seeds = [impact.files["policy.py"].node_id(ENFORCE), client.node_id(UPLOAD)]
    call = impact.stub.Compute(
        impact_pb2.ComputeImpactRequest(
            project_id=impact.project_id,
            seed_node_ids=[*seeds, "n_missing"],
            seed_file_ids=[errors.file_id],
            depth=1,
            limit=5,
            each_seed=True,
        )
    )
    response = await call
    trailers = dict(await call.trailing_metadata())

    assert not response.symbols
    assert [(s.seed_node_id, s.seed_file_id) for s in response.each_seed] == [
        (seeds[0], ""),
        (seeds[1], ""),
        ("", errors.file_id),
    ]
    for walked in response.each_seed:
        alone = await impact.compute(
            seed_node_ids=[walked.seed_node_id] if walked.seed_node_id else [],
            seed_file_ids=[walked.seed_file_id] if walked.seed_file_id else [],
            depth=1,
            limit=5,
        )
        assert list(walked.symbols) == list(alone.symbols)
        assert list(walked.files) == list(alone.files)
    assert UPLOAD in impacted(response.each_seed[0])  # the caller of enforce_retry_limit
    assert trailers["locus-unknown-seed-node-ids"] == "n_missing"

    for request, code, words in [
        (
            {"seed_node_ids": ["n_missing"], "each_seed": True},
            grpc.StatusCode.NOT_FOUND,
            "n_missing",
        ),
        (
            {"seed_node_ids": [f"n_{i}" for i in range(51)], "each_seed": True},
            grpc.StatusCode.INVALID_ARGUMENT,
            "at most 50 seeds",
        ),
    ]:
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await impact.compute(**request)
        assert error.value.code() == code, request
        assert words in (error.value.details() or "")
