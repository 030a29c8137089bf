"""The MetadataStore contract: every adapter (SQLite, PostgreSQL) records requests, outcomes,
artifacts and feedback the same way, and lists requests newest first with stable pages."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone

import pytest

from locus.gateway.domain.errors import InvalidPageToken, RequestIdTaken, RequestNotFound
from locus.gateway.domain.ports import MetadataStore
from locus.gateway.domain.requests import (
    Artifact,
    ArtifactKind,
    Feedback,
    FeedbackQuery,
    NewRequest,
    RequestKind,
    RequestOutcome,
    RequestQuery,
    RequestStatus,
)

pytestmark = pytest.mark.contract

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def new_request(
    request_id: str,
    *,
    at: datetime = T0,
    project: str = "shop",
    kind: RequestKind = RequestKind.LOCATE,
    question: str = "where are orders placed?",
) -> NewRequest:
    return NewRequest(
        request_id=request_id,
        kind=kind,
        project_ref=project,
        question=question,
        created_at=at,
        trace_id="0af7651916cd43dd8448eb211c80319c",
    )


def outcome(status: RequestStatus = RequestStatus.COMPLETED, **values: object) -> RequestOutcome:
    fields: dict[str, object] = {
        "status": status,
        "completed_at": T0 + timedelta(seconds=2),
        "latency_ms": 2000,
        "project_id": "p_123",
        "project_name": "shop",
        "snapshot_id": "snap_1",
        "timings_ms": {"search": 12.5, "enrich": 3.25},
        "response": b"\x00\x01locate-response\xff",
        "answer_text": "",
    }
    fields.update(values)
    return RequestOutcome(**fields)  # type: ignore[arg-type]


async def test_a_created_request_is_running_with_what_was_recorded(store: MetadataStore) -> None:
    question = "Pourquoi `place_order` échoue-t-il ? 注文 " + "x" * 3000
    await store.create_request(new_request("req-1", question=question, kind=RequestKind.ASK))
    stored = await store.get_request("req-1")
    assert stored is not None
    assert stored.request_id == "req-1"
    assert stored.kind == RequestKind.ASK
    assert stored.status == RequestStatus.RUNNING
    assert stored.question == question
    assert stored.project_ref == "shop"
    assert stored.project_id == ""
    assert stored.created_at == T0
    assert stored.created_at.tzinfo is not None
    assert stored.completed_at is None
    assert stored.trace_id == "0af7651916cd43dd8448eb211c80319c"
    assert await store.get_request("req-unknown") is None


async def test_a_request_id_is_recorded_once(store: MetadataStore) -> None:
    await store.create_request(new_request("req-1"))
    with pytest.raises(RequestIdTaken):
        await store.create_request(new_request("req-1", question="another"))
    stored = await store.get_request("req-1")
    assert stored is not None
    assert stored.question == "where are orders placed?"


async def test_the_first_outcome_wins(store: MetadataStore) -> None:
    await store.create_request(new_request("req-1"))
    assert await store.finish_request(
        "req-1", outcome(answer_text="It is in orders.py", notes="impact analysis skipped")
    )
    assert not await store.finish_request(
        "req-1", outcome(RequestStatus.CANCELLED, error_code="CANCELLED")
    )
    stored = await store.get_request("req-1")
    assert stored is not None
    assert stored.status == RequestStatus.COMPLETED
    assert stored.completed_at == T0 + timedelta(seconds=2)
    assert stored.latency_ms == 2000
    assert stored.project_id == "p_123"
    assert stored.project_name == "shop"
    assert stored.snapshot_id == "snap_1"
    assert dict(stored.timings_ms) == {"search": 12.5, "enrich": 3.25}
    assert stored.response == b"\x00\x01locate-response\xff"
    assert stored.answer_text == "It is in orders.py"
    assert stored.notes == "impact analysis skipped"
    assert stored.error_code == ""


async def test_a_failed_outcome_keeps_its_error(store: MetadataStore) -> None:
    await store.create_request(new_request("req-1"))
    await store.finish_request(
        "req-1",
        outcome(
            RequestStatus.FAILED,
            error_code="UNAVAILABLE",
            error_message="retrieval service at 127.0.0.1:50053 is unavailable: refused",
            response=b"",
        ),
    )
    stored = await store.get_request("req-1")
    assert stored is not None
    assert (stored.status, stored.error_code) == (RequestStatus.FAILED, "UNAVAILABLE")
    assert stored.error_message.startswith("retrieval service at")
    assert stored.response == b""


async def test_finishing_an_unknown_request_is_not_found(store: MetadataStore) -> None:
    with pytest.raises(RequestNotFound):
        await store.finish_request("req-unknown", outcome())


async def test_artifacts_come_back_by_request_kind_and_ordinal(store: MetadataStore) -> None:
    await store.create_request(new_request("req-1"))
    await store.create_request(new_request("req-2"))
    chunks = [
        Artifact(
            ArtifactKind.CHUNK,
            ordinal,
            chunk_id=f"c{ordinal}",
            relative_path="src/shop/orders.py",
            start_line=10 * ordinal + 1,
            end_line=10 * ordinal + 9,
            score=1.0 / (ordinal + 1),
            payload=bytes([ordinal, 0, 255]),
        )
        for ordinal in (2, 0, 1)
    ]
    citation = Artifact(ArtifactKind.CITATION, 0, chunk_id="c0", payload=b"citation")
    await store.add_artifacts("req-1", [*chunks, citation])
    await store.add_artifacts("req-2", [Artifact(ArtifactKind.CONTEXT, 0, chunk_id="c9")])
    await store.add_artifacts("req-2", [])

    everything = await store.artifacts(["req-1", "req-2", "req-unknown"])
    assert set(everything) == {"req-1", "req-2"}
    assert [(a.kind, a.ordinal) for a in everything["req-1"]] == [
        (ArtifactKind.CHUNK, 0),
        (ArtifactKind.CHUNK, 1),
        (ArtifactKind.CHUNK, 2),
        (ArtifactKind.CITATION, 0),
    ]
    first = everything["req-1"][0]
    assert first == Artifact(
        ArtifactKind.CHUNK,
        0,
        chunk_id="c0",
        relative_path="src/shop/orders.py",
        start_line=1,
        end_line=9,
        score=1.0,
        payload=bytes([0, 0, 255]),
    )
    citations = await store.artifacts(["req-1", "req-2"], ArtifactKind.CITATION)
    assert citations == {"req-1": [citation]}
    assert await store.artifacts([]) == {}


async def test_requests_are_listed_newest_first_in_stable_pages(store: MetadataStore) -> None:
    # Several requests share a timestamp: the page boundary must neither repeat nor skip any.
    moments = [T0, T0, T0 + timedelta(seconds=1), T0 + timedelta(seconds=1), T0 + timedelta(1)]
    for index, moment in enumerate(moments):
        await store.create_request(new_request(f"req-{index}", at=moment))
    expected = ["req-4", "req-3", "req-2", "req-1", "req-0"]

    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = await store.list_requests(RequestQuery(page_size=2, page_token=token))
        seen += [r.request_id for r in page.requests]
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert seen == expected
    assert pages == 3

    whole = await store.list_requests(RequestQuery(page_size=5))
    assert [r.request_id for r in whole.requests] == expected
    assert whole.next_page_token == ""


async def test_requests_filter_by_project_status_and_time(store: MetadataStore) -> None:
    await store.create_request(new_request("a", at=T0, project="shop"))
    await store.create_request(new_request("b", at=T0 + timedelta(minutes=1), project="p_123"))
    await store.create_request(new_request("c", at=T0 + timedelta(minutes=2), project="other"))
    await store.finish_request("b", outcome(project_id="p_shop", project_name="shop"))
    await store.finish_request(
        "a", outcome(RequestStatus.FAILED, project_id="p_shop", project_name="shop")
    )

    async def ids(**filters: object) -> list[str]:
        page = await store.list_requests(RequestQuery(page_size=10, **filters))  # type: ignore[arg-type]
        return [r.request_id for r in page.requests]

    assert await ids(project="p_shop") == ["b", "a"]  # by the resolved project id
    assert await ids(project="shop") == ["b", "a"]  # by its name, however it was called
    assert await ids(project="p_123") == ["b"]  # by what the caller called it
    assert await ids(project="other") == ["c"]
    assert await ids(status=RequestStatus.COMPLETED) == ["b"]
    assert await ids(status=RequestStatus.RUNNING) == ["c"]
    assert await ids(start=T0 + timedelta(minutes=1)) == ["c", "b"]  # start is inclusive
    assert await ids(end=T0 + timedelta(minutes=1)) == ["a"]  # end is exclusive
    assert await ids(
        start=T0 + timedelta(seconds=30),
        end=T0 + timedelta(minutes=2),
        project="p_shop",
        status=RequestStatus.COMPLETED,
    ) == ["b"]
    assert await ids(project="nobody") == []


async def test_time_filters_compare_moments_not_clock_faces(store: MetadataStore) -> None:
    await store.create_request(new_request("a", at=T0))
    same_moment_elsewhere = T0.astimezone(timezone(timedelta(hours=2)))
    page = await store.list_requests(RequestQuery(start=same_moment_elsewhere, page_size=10))
    assert [r.request_id for r in page.requests] == ["a"]
    page = await store.list_requests(RequestQuery(end=same_moment_elsewhere, page_size=10))
    assert page.requests == []


async def test_a_page_token_from_elsewhere_is_refused(store: MetadataStore) -> None:
    for token in ("not-a-token", "eyJ2IjogOTl9", "%%%"):
        with pytest.raises(InvalidPageToken):
            await store.list_requests(RequestQuery(page_token=token))


async def test_feedback_is_kept_per_request(store: MetadataStore) -> None:
    await store.create_request(new_request("req-1"))
    first = Feedback("fb-1", "req-1", 4, "found it", T0 + timedelta(minutes=1))
    second = Feedback("fb-2", "req-1", 2, "", T0 + timedelta(minutes=2))
    await store.record_feedback(second)
    await store.record_feedback(first)
    assert await store.feedback("req-1") == [first, second]
    assert await store.feedback("req-unknown") == []
    with pytest.raises(RequestNotFound):
        await store.record_feedback(Feedback("fb-3", "req-unknown", 5, "", T0))


async def test_concurrent_requests_are_all_recorded(store: MetadataStore) -> None:
    await asyncio.gather(
        *(
            store.create_request(new_request(f"req-{i}", at=T0 + timedelta(milliseconds=i)))
            for i in range(20)
        )
    )
    await asyncio.gather(*(store.finish_request(f"req-{i}", outcome()) for i in range(20)))
    page = await store.list_requests(RequestQuery(page_size=50))
    assert len(page.requests) == 20
    assert {r.status for r in page.requests} == {RequestStatus.COMPLETED}


async def test_feedback_is_listed_newest_first_by_request_project_and_principal(
    store: MetadataStore,
) -> None:
    for request_id, project, principal in (
        ("req-a", "shop", "key:alice"),
        ("req-b", "shop", "key:bob"),
        ("req-c", "billing", "key:alice"),
    ):
        await store.create_request(
            NewRequest(
                request_id=request_id,
                kind=RequestKind.ASK,
                project_ref=project,
                question="q",
                created_at=T0,
                principal=principal,
            )
        )
    await store.finish_request("req-a", outcome(project_id="p_shop", project_name="shop"))
    for index, request_id in enumerate(("req-a", "req-b", "req-c", "req-a")):
        await store.record_feedback(
            Feedback(f"fb-{index}", request_id, 3, "", T0 + timedelta(minutes=index))
        )

    everything = await store.list_feedback(FeedbackQuery())
    assert [f.feedback_id for f in everything.feedback] == ["fb-3", "fb-2", "fb-1", "fb-0"]
    assert everything.feedback[0].project_id == "p_shop"
    assert everything.feedback[1].project_id == "billing"  # what the caller called it
    alice = await store.list_feedback(FeedbackQuery(principal="key:alice"))
    assert [f.feedback_id for f in alice.feedback] == ["fb-3", "fb-2", "fb-0"]
    shop = await store.list_feedback(FeedbackQuery(project="shop", principal="key:alice"))
    assert [f.feedback_id for f in shop.feedback] == ["fb-3", "fb-0"]
    one = await store.list_feedback(FeedbackQuery(request_id="req-b"))
    assert [f.feedback_id for f in one.feedback] == ["fb-1"]

    first = await store.list_feedback(FeedbackQuery(page_size=3))
    rest = await store.list_feedback(FeedbackQuery(page_size=3, page_token=first.next_page_token))
    assert [f.feedback_id for f in first.feedback + rest.feedback] == [
        "fb-3",
        "fb-2",
        "fb-1",
        "fb-0",
    ]
    assert rest.next_page_token == ""
    with pytest.raises(InvalidPageToken):
        await store.list_feedback(FeedbackQuery(page_token="not-a-token"))
