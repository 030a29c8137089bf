"""The request journal: a reused request id gets a derived one, the first outcome wins, an
outcome is recorded even when its caller is cancelled, and feedback is validated."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from locus.gateway.domain.errors import InvalidRequest, RequestNotFound
from locus.gateway.domain.requests import Artifact, ArtifactKind, RequestKind, RequestStatus

pytestmark = pytest.mark.unit


async def test_a_reused_request_id_is_suffixed(service: Any) -> None:
    first = await service.journal.open(RequestKind.LOCATE, "shop", "q1", request_id="same")
    second = await service.journal.open(RequestKind.LOCATE, "shop", "q2", request_id="same")
    assert first.request_id == "same"
    assert second.request_id.startswith("same.")
    assert len(second.request_id) == len("same.") + 8
    assert [e for e in service.audit.events if e[0] == "request.submitted"] == [
        ("request.submitted", "same"),
        ("request.submitted", second.request_id),
    ]


async def test_the_first_outcome_wins(service: Any) -> None:
    entry = await service.journal.open(RequestKind.ASK, " shop ", "  why?  ", request_id="r1")
    entry.project_id, entry.project_name = "p_shop", "shop"
    entry.notes.append("impact analysis skipped: down")
    citation = Artifact(ArtifactKind.CITATION, 0, chunk_id="c1", payload=b"c")
    await asyncio.gather(
        service.journal.close(
            entry, RequestStatus.COMPLETED, answer_text="42", citations=[citation]
        ),
        service.journal.close(entry, RequestStatus.CANCELLED, error_code="CANCELLED"),
    )
    stored, citations = await service.history.get("r1")
    assert (stored.status, stored.answer_text, stored.error_code) == (
        RequestStatus.COMPLETED,
        "42",
        "",
    )
    assert (stored.project_ref, stored.question) == ("shop", "why?")
    assert (stored.project_id, stored.project_name) == ("p_shop", "shop")
    assert stored.notes == "impact analysis skipped: down"
    assert citations == [citation]
    assert ("answer.completed", ("r1", "p_shop", "completed", 1)) in service.audit.events


async def test_an_outcome_is_recorded_even_if_its_caller_is_cancelled(service: Any) -> None:
    entry = await service.journal.open(RequestKind.LOCATE, "shop", "q", request_id="r2")

    async def caller() -> None:
        await service.journal.close(entry, RequestStatus.CANCELLED, error_code="CANCELLED")

    task = asyncio.ensure_future(caller())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await service.journal.stop()  # waits for recordings still in flight
    stored, _ = await service.history.get("r2")
    assert stored.status == RequestStatus.CANCELLED


async def test_feedback(service: Any) -> None:
    await service.journal.open(RequestKind.LOCATE, "shop", "q", request_id="r3")
    feedback = await service.history.record_feedback("r3", 5, "spot on")
    assert feedback.feedback_id.startswith("fb_")
    assert await service.store.feedback("r3") == [feedback]
    assert ("feedback.recorded", "r3") in service.audit.events
    with pytest.raises(RequestNotFound):
        await service.history.record_feedback("r-unknown", 5, "")
    with pytest.raises(InvalidRequest):
        await service.history.record_feedback("r3", 7, "")
    with pytest.raises(RequestNotFound):
        await service.history.get("r-unknown")
