"""A real dead letter (`make reliability`, part "dlq"): bytes that are no FilesChanged published
on ``locus.v1.files.changed`` of a running `locus up`, dead-lettered by ast's consumer; the letter
read back from ``locus.v1.dlq.files.changed``, listed with ``locus dlq list`` and replayed with
``locus dlq replay SEQ``: the republished bytes are still no FilesChanged, so ast dead-letters
them again under a new sequence (what a replay of a letter that failed for good looks like)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import nats
from chaos import ChaosStack
from mesh_access import bus_credentials_of

from locus.messaging import BusCredentials
from locus.v1 import events_pb2

LOCUS = Path(sys.executable).parent / "locus"
SUBJECT = "locus.v1.files.changed"
DEAD_LETTERS = "locus.v1.dlq.files.changed"


def dlq_command_exists(environment: dict[str, str]) -> bool:
    probe = _locus(environment, "dlq", "--help")
    return probe.returncode == 0


def run_dead_letters(work: Path) -> dict[str, Any]:
    stack = ChaosStack(work, vectors=False)
    stack.start()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LOCUS_")}
    environment["LOCUS_HOME"] = str(work / "home")
    result: dict[str, Any] = {}
    try:
        nats_url = stack.state()["nats"]["address"]
        marker = f"reliability-{uuid.uuid4().hex[:8]}"
        credentials = bus_credentials_of(stack.state())
        letter = asyncio.run(_dead_letter_of_garbage(nats_url, marker, credentials))
        result["published"] = f"{SUBJECT}: 14 bytes that are no FilesChanged (Nats-Msg-Id {marker})"
        result["letter"] = letter
        if not dlq_command_exists(environment):
            result["cli"] = "`locus dlq` does not exist yet: list and replay not shown (hook)"
            return result
        result["list_before"] = _letters(environment)
        sequence = next(
            (row["sequence"] for row in result["list_before"] if marker in row["message_id"]), None
        )
        replayed = _locus(environment, "dlq", "replay", str(sequence), "--json")
        result["replay"] = {"exit": replayed.returncode, "output": _json_or_text(replayed)}
        # The payload is still no FilesChanged: ast dead-letters it again, under a new sequence.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            result["list_after"] = _letters(environment)
            if any(row["sequence"] != sequence for row in result["list_after"]):
                break
            time.sleep(1)
    finally:
        stack.stack.stop()
    return result


async def _dead_letter_of_garbage(
    nats_url: str, marker: str, credentials: BusCredentials
) -> dict[str, Any]:
    """Publish an undecodable payload; the DeadLetter that ast's consumer writes for it."""
    client = await nats.connect(nats_url, **credentials.connect_options())
    try:
        stream = client.jetstream()
        await stream.publish(SUBJECT, b"\xff\xfe not a pb \x00", headers={"Nats-Msg-Id": marker})
        subscription = await stream.subscribe(DEAD_LETTERS, ordered_consumer=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                message = await subscription.next_msg(timeout=5)
            except TimeoutError:
                continue
            letter = events_pb2.DeadLetter.FromString(message.data)
            if letter.headers.get("Nats-Msg-Id") == marker:
                return {
                    "subject": letter.subject,
                    "consumer": letter.consumer,
                    "deliveries": letter.deliveries,
                    "error": letter.error[:300],
                    "stream_sequence": message.metadata.sequence.stream,
                }
        return {"error": "no dead letter within 60 s"}
    finally:
        await client.close()


def _letters(environment: dict[str, str]) -> list[dict[str, Any]]:
    listed = _locus(environment, "dlq", "list", "--json")
    if listed.returncode != 0:
        raise RuntimeError(f"locus dlq list failed: {listed.stderr[-2000:]}")
    letters: list[dict[str, Any]] = json.loads(listed.stdout)["dead_letters"]
    return letters


def _json_or_text(completed: subprocess.CompletedProcess[str]) -> Any:
    try:
        return json.loads(completed.stdout)
    except ValueError:
        return (completed.stdout + completed.stderr)[-2000:]


def _locus(environment: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LOCUS), *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def print_table(result: dict[str, Any]) -> None:
    print(f"\ndead letters: published {result.get('published')}")
    letter = result.get("letter", {})
    print("| subject | consumer | deliveries | error | stream seq |")
    print("|---|---|---|---|---|")
    print(
        f"| {letter.get('subject', '-')} | {letter.get('consumer', '-')} | "
        f"{letter.get('deliveries', '-')} | {letter.get('error', '-')} | "
        f"{letter.get('stream_sequence', '-')} |"
    )
    if "cli" in result:
        print(result["cli"])
        return
    for moment in ("list_before", "list_after"):
        rows = result.get(moment, [])
        shown = ", ".join(
            f"seq {row['sequence']} ({row['subject']}, {row['consumer']}, "
            f"{row['deliveries']} deliveries, id {row['message_id']})"
            for row in rows
        )
        print(f"locus dlq list ({moment.removeprefix('list_')} the replay): {shown or 'none'}")
    print(f"locus dlq replay: exit {result['replay']['exit']}, {result['replay']['output']}")
