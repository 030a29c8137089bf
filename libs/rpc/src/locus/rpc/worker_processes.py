"""Worker processes that never outlive their service: a service killed without a clean stop
(SIGKILL, out of memory, a container restart) must not leave its parser or embedding workers
running (orphans were seen in the tests before this)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Call first thing in a worker process (a pool's initializer): Linux kills the worker when
    the process that started it dies. Elsewhere it does nothing."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        return  # not allowed here: the worker still exits when its pool's pipes close
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)
