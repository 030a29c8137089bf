"""When ingestion looks at a scan job's progress: coalesced after index.updated reports, and
swept periodically.

A big scan brings thousands of index.updated reports; computing the job's progress after each
one costs time proportional to the job, so the whole scan would cost its size squared. Reports
only ``request`` a check; a job's check runs once per ``interval_seconds`` however many reports
came. Every ``sweep_seconds`` (and once at start) every job whose progress may still move is
checked too, so a check lost to a crash or a redelivery is made up for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class ProgressChecks:
    def __init__(
        self,
        check: Callable[[str], Awaitable[None]],
        jobs_to_sweep: Callable[[], Awaitable[list[str]]],
        *,
        interval_seconds: float = 0.2,
        sweep_seconds: float = 15.0,
    ) -> None:
        self._check = check
        self._jobs_to_sweep = jobs_to_sweep
        self._interval = interval_seconds
        self._sweep = sweep_seconds
        self._pending: set[str] = set()
        self._requested = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def request(self, job_id: str) -> None:
        """Check ``job_id`` within about ``interval_seconds``."""
        self._pending.add(job_id)
        self._requested.set()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="progress-checks")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.check_pending()  # what was requested before the stop is not lost

    async def check_pending(self) -> None:
        pending, self._pending = self._pending, set()
        for job_id in sorted(pending):
            try:
                await self._check(job_id)
            except Exception:  # the next sweep tries again
                log.exception("checking the progress of %s failed", job_id)

    async def _run(self) -> None:
        sweep_now = True
        while True:
            if sweep_now:
                try:
                    self._pending.update(await self._jobs_to_sweep())
                except Exception:
                    log.exception("listing the jobs to check failed")
            await self.check_pending()
            try:
                await asyncio.wait_for(self._requested.wait(), timeout=self._sweep)
                sweep_now = False
                await asyncio.sleep(self._interval)  # let the reports of a burst gather
            except TimeoutError:
                sweep_now = True
            self._requested.clear()
