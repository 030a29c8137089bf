"""`python -m locus.mcp.call` prints a tool's result as JSON; piped into a reader that stops
early (`| head`, as `make demo` does), it ends quietly instead of with a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

WRITE_MANY_LINES = (
    "from locus.mcp.call import write_json; write_json({'files': list(range(200000))})"
)


def test_a_reader_that_stops_early_gets_its_lines_and_no_traceback() -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITE_MANY_LINES],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert writer.stdout is not None
    first = [writer.stdout.readline() for _ in range(3)]
    writer.stdout.close()  # the reader leaves, like `head -3`
    _, stderr = writer.communicate(timeout=60)
    assert first == [b"{\n", b'  "files": [\n', b"    0,\n"]
    assert b"Traceback" not in stderr
    assert b"BrokenPipeError" not in stderr
    assert writer.returncode == 0


def test_the_whole_result_is_printed_as_json() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from locus.mcp.call import write_json; write_json({'a': [1]})"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == b'{\n  "a": [\n    1\n  ]\n}\n'


@pytest.mark.parametrize(
    ("arguments", "code", "says"),
    [
        ("{bad", 2, "the arguments are no JSON"),
        ("[1]", 2, "must be a JSON object"),
        ("{}", 3, "no answer from http://127.0.0.1:9/mcp: ConnectError"),
    ],
)
def test_bad_arguments_and_a_server_that_does_not_answer_say_so_in_one_line(
    arguments: str, code: int, says: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "locus.mcp.call", "http://127.0.0.1:9/mcp", "locate", arguments],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LOCUS_API_KEY": ""},
    )
    assert done.returncode == code
    assert says in done.stderr
    assert "Traceback" not in done.stderr
