"""The request log through the real gateway: ListRequests filters and pages, GetRequest,
RecordFeedback, and the audit events published on the real nats-server."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import grpc
import nats
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from nats.js.errors import NotFoundError

from locus.v1 import common_pb2, events_pb2, gateway_pb2

pytestmark = pytest.mark.integration


async def locate(gateway: Any, project: str, question: str) -> str:
    """A Locate that the stack refuses (unknown or never-scanned project); its request id."""
    request_id = f"r-{uuid.uuid4().hex[:12]}"
    with pytest.raises(grpc.aio.AioRpcError):
        await gateway.stub.Locate(
            gateway_pb2.LocateRequest(project_id=project, question=question),
            metadata=(("x-request-id", request_id),),
        )
    return request_id


def timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


async def code_of(call: Any) -> grpc.StatusCode:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error.code()
    raise AssertionError("the call succeeded")


async def test_list_requests_filters_and_pages(stack, gateway) -> None:
    stack.require("ingestion")
    fresh = await gateway.create_project()
    on_fresh = [await locate(gateway, fresh.name, f"question {i}") for i in range(2)]
    on_fresh.append(await locate(gateway, fresh.project_id, "asked by id"))
    middle = datetime.now(UTC)
    on_ghost = [await locate(gateway, "ghost-project", f"ghost {i}") for i in range(2)]
    newest_first = list(reversed(on_fresh + on_ghost))

    everything = await gateway.stub.ListRequests(gateway_pb2.ListRequestsRequest())
    assert [r.request_id for r in everything.requests] == newest_first
    assert everything.next_page_token == ""

    by_name = await gateway.stub.ListRequests(
        gateway_pb2.ListRequestsRequest(project_id=fresh.name)
    )
    by_id = await gateway.stub.ListRequests(
        gateway_pb2.ListRequestsRequest(project_id=fresh.project_id)
    )
    assert [r.request_id for r in by_name.requests] == list(reversed(on_fresh))
    assert by_id.requests == by_name.requests
    assert {r.project_id for r in by_id.requests} == {fresh.project_id}
    # The list names the project as GetRequest does.
    assert {r.project_name for r in by_id.requests} == {fresh.name}
    ghost = await gateway.stub.ListRequests(
        gateway_pb2.ListRequestsRequest(project_id="ghost-project")
    )
    assert [r.request_id for r in ghost.requests] == list(reversed(on_ghost))

    failed = await gateway.stub.ListRequests(gateway_pb2.ListRequestsRequest(status="failed"))
    assert len(failed.requests) == 5
    completed = await gateway.stub.ListRequests(gateway_pb2.ListRequestsRequest(status="COMPLETED"))
    assert list(completed.requests) == []

    later = await gateway.stub.ListRequests(
        gateway_pb2.ListRequestsRequest(time_range=common_pb2.TimeRange(start=timestamp(middle)))
    )
    assert [r.request_id for r in later.requests] == list(reversed(on_ghost))
    earlier = await gateway.stub.ListRequests(
        gateway_pb2.ListRequestsRequest(time_range=common_pb2.TimeRange(end=timestamp(middle)))
    )
    assert [r.request_id for r in earlier.requests] == list(reversed(on_fresh))

    seen: list[str] = []
    token = ""
    for _ in range(5):
        page = await gateway.stub.ListRequests(
            gateway_pb2.ListRequestsRequest(
                page=common_pb2.PageRequest(page_size=2, page_token=token)
            )
        )
        assert len(page.requests) <= 2
        seen += [r.request_id for r in page.requests]
        token = page.next_page_token
        if not token:
            break
    assert seen == newest_first


async def test_list_requests_refuses_bad_filters(stack, gateway) -> None:
    stack.require("ingestion")
    now = datetime.now(UTC)
    for request in (
        gateway_pb2.ListRequestsRequest(status="exploded"),
        gateway_pb2.ListRequestsRequest(page=common_pb2.PageRequest(page_size=-1)),
        gateway_pb2.ListRequestsRequest(page=common_pb2.PageRequest(page_token="forged")),
        gateway_pb2.ListRequestsRequest(
            time_range=common_pb2.TimeRange(start=timestamp(now), end=timestamp(now))
        ),
        # Out of a Timestamp's range: was INTERNAL (ValueError converting it).
        gateway_pb2.ListRequestsRequest(
            time_range=common_pb2.TimeRange(start=Timestamp(seconds=2**63 - 1))
        ),
        gateway_pb2.ListRequestsRequest(time_range=common_pb2.TimeRange(end=Timestamp(nanos=-1))),
    ):
        assert await code_of(gateway.stub.ListRequests(request)) == (
            grpc.StatusCode.INVALID_ARGUMENT
        )
    # A page larger than the server gives is capped, as FindSymbols and ListProjects cap it.
    capped = await gateway.stub.ListRequests(
        gateway_pb2.ListRequestsRequest(page=common_pb2.PageRequest(page_size=100_000))
    )
    assert len(capped.requests) <= 500


async def test_get_request(stack, gateway) -> None:
    stack.require("ingestion")
    request_id = await locate(gateway, "ghost-project", "where is `Basket.total`?")
    record = await gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=request_id))
    assert (record.request_id, record.kind, record.status) == (request_id, "locate", "failed")
    assert record.question == "where is `Basket.total`?"
    # No project was found: the record says what the caller wrote, and no id it never had.
    assert (record.project_ref, record.project_id, record.project_name) == ("ghost-project", "", "")
    assert record.latency_ms >= 0
    assert (
        await code_of(gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id="r-nope")))
        == grpc.StatusCode.NOT_FOUND
    )
    assert (
        await code_of(gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id="")))
        == grpc.StatusCode.INVALID_ARGUMENT
    )


async def test_record_feedback(stack, gateway) -> None:
    stack.require("ingestion")
    request_id = await locate(gateway, "ghost-project", "where?")
    recorded = await gateway.stub.RecordFeedback(
        gateway_pb2.RecordFeedbackRequest(request_id=request_id, rating=4, comment="close")
    )
    assert recorded.feedback_id
    again = await gateway.stub.RecordFeedback(
        gateway_pb2.RecordFeedbackRequest(request_id=request_id, rating=5)
    )
    assert again.feedback_id != recorded.feedback_id

    for request, expected in (
        (gateway_pb2.RecordFeedbackRequest(request_id="r-nope", rating=3), "NOT_FOUND"),
        (gateway_pb2.RecordFeedbackRequest(request_id=request_id, rating=0), "INVALID_ARGUMENT"),
        (gateway_pb2.RecordFeedbackRequest(request_id=request_id, rating=6), "INVALID_ARGUMENT"),
        (gateway_pb2.RecordFeedbackRequest(request_id="r-nope", rating=9), "INVALID_ARGUMENT"),
        (
            gateway_pb2.RecordFeedbackRequest(request_id=request_id, rating=3, comment="c" * 4001),
            "INVALID_ARGUMENT",
        ),
        (gateway_pb2.RecordFeedbackRequest(request_id="", rating=3), "INVALID_ARGUMENT"),
    ):
        assert (await code_of(gateway.stub.RecordFeedback(request))).name == expected


async def test_a_question_is_stored_without_the_credentials_it_carries(stack, gateway) -> None:
    # A pasted log: a token, a password, a bearer API key. None reaches the stored record.
    stack.require("ingestion")
    key = "lk_0123456789ab_s3cr3tS3cr3tS3cr3t"
    question = (
        "upload fails: GET https://api.example.com/v1?token=abcdef password=hunter2 "
        f"Authorization: Bearer {key}"
    )
    request_id = await locate(gateway, "ghost-project", question)
    record = await gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=request_id))
    for secret in ("abcdef", "hunter2", "s3cr3tS3cr3tS3cr3t"):
        assert secret not in record.question
    assert record.question.startswith("upload fails: GET https://api.example.com/v1?token=***")


async def test_audit_events_are_published_with_ids_from_the_request(stack, gateway) -> None:
    stack.require("ingestion")
    request_id = await locate(gateway, "ghost-project", "where are refunds?")
    feedback = await gateway.stub.RecordFeedback(
        gateway_pb2.RecordFeedbackRequest(request_id=request_id, rating=2, comment="wrong file")
    )
    connection = await nats.connect(stack.nats_url)
    try:
        jetstream = connection.jetstream()

        async def last(subject: str, message_id: str) -> Any:
            """The last message on the subject once it is ours (publishing is asynchronous)."""
            deadline = time.monotonic() + 10
            while True:
                try:
                    message = await jetstream.get_last_msg(
                        stack.stream_name, f"{stack.subject_prefix}.{subject}"
                    )
                    if message.headers and message.headers.get("Nats-Msg-Id") == message_id:
                        return message
                except NotFoundError:
                    pass
                assert time.monotonic() < deadline, f"no {message_id} on {subject}"
                await asyncio.sleep(0.05)

        submitted = await last("request.submitted", f"request.submitted:{request_id}")
        completed = await last("answer.completed", f"answer.completed:{request_id}")
        recorded = await last(
            "feedback.recorded", f"feedback.recorded:{request_id}:{feedback.feedback_id}"
        )
    finally:
        await connection.close()

    assert submitted.headers["Nats-Msg-Id"] == f"request.submitted:{request_id}"
    event = events_pb2.RequestSubmitted.FromString(submitted.data)
    assert (event.request_id, event.kind, event.question) == (
        request_id,
        "locate",
        "where are refunds?",
    )
    assert event.project_id == "ghost-project"

    assert completed.headers["Nats-Msg-Id"] == f"answer.completed:{request_id}"
    done = events_pb2.AnswerCompleted.FromString(completed.data)
    assert (done.request_id, done.status) == (request_id, "failed")

    assert recorded.headers["Nats-Msg-Id"] == (
        f"feedback.recorded:{request_id}:{feedback.feedback_id}"
    )
    opinion = events_pb2.FeedbackRecorded.FromString(recorded.data)
    assert (opinion.request_id, opinion.rating, opinion.comment) == (request_id, 2, "wrong file")
