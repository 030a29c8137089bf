"""MessageBatcher: a lone item goes after the linger; items arriving while a batch is handled
go together next (one store write for many messages); a failing batch is retried item by item
so only the bad item fails."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from locus.messaging.batching import MessageBatcher


class Recorder:
    def __init__(self, *, seconds: float = 0.0, bad: frozenset[int] = frozenset()) -> None:
        self.batches: list[list[int]] = []
        self.seconds = seconds
        self.bad = bad
        self.concurrent = 0
        self.most_concurrent = 0

    async def __call__(self, items: Sequence[int]) -> None:
        self.concurrent += 1
        self.most_concurrent = max(self.most_concurrent, self.concurrent)
        try:
            self.batches.append(list(items))
            await asyncio.sleep(self.seconds)
            if self.bad & set(items):
                raise ValueError(f"bad item in {list(items)}")
        finally:
            self.concurrent -= 1


async def test_a_lone_item_is_handled_after_the_linger() -> None:
    handler = Recorder()
    batcher = MessageBatcher(handler, max_items=8, linger_seconds=0.02)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await batcher.submit(1)
    assert handler.batches == [[1]]
    assert loop.time() - started < 0.5


async def test_items_arriving_during_a_batch_go_together_next() -> None:
    handler = Recorder(seconds=0.2)
    batcher = MessageBatcher(handler, max_items=64, linger_seconds=0.01)

    async def stream() -> None:
        submits = []
        for item in range(30):  # one every 20 ms while each batch takes 200 ms
            submits.append(asyncio.create_task(batcher.submit(item)))
            await asyncio.sleep(0.02)
        await asyncio.gather(*submits)

    await stream()
    handled = [item for batch in handler.batches for item in batch]
    assert sorted(handled) == list(range(30))
    assert handled == sorted(handled)  # arrival order kept across batches
    assert len(handler.batches) <= 6  # not one batch per linger window (30 of them)
    assert handler.most_concurrent == 1


async def test_a_full_batch_goes_at_max_items_and_the_rest_follows() -> None:
    handler = Recorder(seconds=0.05)
    batcher = MessageBatcher(handler, max_items=4, linger_seconds=10.0)
    await asyncio.gather(*(batcher.submit(item) for item in range(10)))
    assert all(len(batch) <= 4 for batch in handler.batches)
    assert sorted(item for batch in handler.batches for item in batch) == list(range(10))


async def test_a_bad_item_fails_alone() -> None:
    handler = Recorder(bad=frozenset({3}))
    batcher = MessageBatcher(handler, max_items=8, linger_seconds=0.02)
    results = await asyncio.gather(
        *(batcher.submit(item) for item in range(6)), return_exceptions=True
    )
    assert isinstance(results[3], ValueError)
    assert [result for index, result in enumerate(results) if index != 3] == [None] * 5


async def test_a_stream_lingers_longer_than_a_lone_change() -> None:
    handler = Recorder()
    batcher = MessageBatcher(handler, max_items=64, linger_seconds=0.01, stream_linger_seconds=0.3)
    await batcher.submit(0)  # idle before: the short linger
    submits = []
    for item in range(1, 11):  # right after a batch: the stream linger gathers them
        submits.append(asyncio.create_task(batcher.submit(item)))
        await asyncio.sleep(0.02)
    await asyncio.gather(*submits)
    assert handler.batches[0] == [0]
    assert len(handler.batches) <= 2
    assert [item for batch in handler.batches for item in batch] == list(range(11))
