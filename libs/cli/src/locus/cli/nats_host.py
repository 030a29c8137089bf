"""``python -m locus.cli.nats_host STORE_DIR [USER PASSWORD_FILE]``: the stack's
EmbeddedNatsServer for ``locus up``; with USER and PASSWORD_FILE, only that user (with the
password the file holds: never on a command line) may connect.

``locus up`` starts this in its own session, so a Ctrl-C in the terminal reaches only ``locus up``,
which stops the services first and this process (and with it nats-server) last. EmbeddedNatsServer
starts nats-server in the caller's process group; run directly by ``locus up`` it would get the
terminal's SIGINT and quit before the services had drained. Prints one JSON line
``{"url": ..., "pid": ...}`` once nats-server is up; stops it on SIGTERM/SIGINT, when nats-server
dies (exit 1) or when ``locus up`` disappears.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path

from locus.messaging import EmbeddedNatsServer


def _has_exited(pid: int) -> bool:
    # WNOWAIT leaves the child waitable, so EmbeddedNatsServer.stop() can still reap it.
    result = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return result is not None


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 4):
        print(
            "usage: python -m locus.cli.nats_host STORE_DIR [USER PASSWORD_FILE]", file=sys.stderr
        )
        return 2
    users = {}
    if len(argv) == 4:
        users[argv[2]] = Path(argv[3]).read_text(encoding="utf-8").strip()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    parent = os.getppid()
    server = EmbeddedNatsServer(Path(argv[1]), users=users)
    server.start()
    exit_code = 0
    try:
        print(json.dumps({"url": server.url, "pid": server.pid}), flush=True)
        while not stop.wait(0.25):
            if os.getppid() != parent:
                print("locus up is gone; stopping nats-server", file=sys.stderr)
                break
            if server.pid is not None and _has_exited(server.pid):
                print("nats-server exited on its own", file=sys.stderr)
                exit_code = 1
                break
    finally:
        server.stop()
    return exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
