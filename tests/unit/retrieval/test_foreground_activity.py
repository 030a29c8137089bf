"""The vectors lane gives way to foreground work: when ForegroundActivity calls it busy."""

from __future__ import annotations

import pytest

from locus.retrieval.foreground import ForegroundActivity

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_busy_while_a_message_is_in_hand_and_for_the_quiet_period_after() -> None:
    clock = Clock()
    activity = ForegroundActivity(quiet_seconds=1.0, clock=clock)
    assert not activity.busy()  # nothing ever came
    with activity.working():
        clock.now += 30  # a long batch stays busy however long it takes
        assert activity.busy()
    clock.now += 0.5
    assert activity.busy()
    clock.now += 0.6
    assert not activity.busy()


def test_overlapping_messages_keep_it_busy_until_the_last_one_ends() -> None:
    clock = Clock()
    activity = ForegroundActivity(quiet_seconds=1.0, clock=clock)
    first, second = activity.working(), activity.working()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    clock.now += 5
    assert activity.busy()
    second.__exit__(None, None, None)
    clock.now += 1.1
    assert not activity.busy()


def test_zero_quiet_seconds_never_waits() -> None:
    activity = ForegroundActivity(quiet_seconds=0)
    with activity.working():
        assert not activity.busy()


async def test_quiet_waits_for_the_quiet_period_but_no_longer_than_the_bound() -> None:
    activity = ForegroundActivity(quiet_seconds=0.2, max_wait_seconds=5.0)
    with activity.working():
        pass
    waited = await activity.quiet()
    assert 0.1 < waited < 1.0
    assert await activity.quiet() == pytest.approx(0, abs=0.01)  # quiet now: no wait

    bounded = ForegroundActivity(quiet_seconds=60, max_wait_seconds=0.2)
    with bounded.working():
        waited = await bounded.quiet()  # busy for a minute; the bound lets the lane go on
    assert 0.15 < waited < 1.0
