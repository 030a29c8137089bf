"""Admission control: a bounded number of questions run, a bounded number wait, the rest are
shed at once; a wait has a limit."""

from __future__ import annotations

import asyncio

import pytest

from locus.gateway.admission import AdmissionGate, Overloaded, WaitedTooLong


async def test_questions_beyond_the_slots_and_the_queue_are_shed_at_once() -> None:
    gate = AdmissionGate("locate", limit=1, queue=1, max_wait_seconds=5)
    release = asyncio.Event()
    order: list[str] = []

    async def question(name: str) -> None:
        async with gate.admitted():
            order.append(name)
            await release.wait()

    running = asyncio.create_task(question("first"))
    await asyncio.sleep(0.01)
    waiting = asyncio.create_task(question("second"))
    await asyncio.sleep(0.01)
    with pytest.raises(Overloaded, match="answering 1 locate requests and 1 more are waiting"):
        async with gate.admitted():
            pass
    release.set()
    await asyncio.gather(running, waiting)
    assert order == ["first", "second"]
    assert (gate.stats.admitted, gate.stats.shed) == (2, 1)


async def test_a_question_waits_no_longer_than_the_limit() -> None:
    gate = AdmissionGate("ask", limit=1, queue=10, max_wait_seconds=0.05)
    async with gate.admitted():
        with pytest.raises(WaitedTooLong, match="no ask slot was free within"):
            async with gate.admitted():
                pass
    async with gate.admitted() as waited:  # the slot is free again
        assert waited < 0.05
    assert gate.stats.timed_out == 1
