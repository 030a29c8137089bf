"""FastStream's log records go through the service's own log handler (its format, JSON lines,
trace ids, secret redaction), and a pull consumer's empty fetch is no ERROR traceback."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from locus.messaging import EventBus
from locus.messaging.bus import EmptyFetchFilter
from locus.telemetry import Telemetry, configure_logging, setup_telemetry

pytestmark = pytest.mark.unit

TELEMETRY: Telemetry = setup_telemetry("bus-test", exporters=[], from_environment=False)
RETRYING = "Task-27 raised an exception, retrying...\nIf this behavior causes issues, ..."


@pytest.fixture
def service_log() -> Iterator[io.StringIO]:
    """The root handler ``configure_logging`` installs, writing JSON lines to a buffer."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    configure_logging("ingestion", json_lines=True)
    buffer = io.StringIO()
    root.handlers[0].setStream(buffer)  # type: ignore[attr-defined]
    yield buffer
    root.handlers[:], root.level = saved


def raised_in(filename: str) -> BaseException:
    """A TimeoutError whose traceback runs through code compiled as ``filename``."""
    namespace: dict[str, object] = {}
    exec(compile("def fetch():\n    raise TimeoutError\n", filename, "exec"), namespace)
    try:
        namespace["fetch"]()  # type: ignore[operator]
    except TimeoutError as error:
        return error
    raise AssertionError("fetch did not raise")


def lines(buffer: io.StringIO) -> list[dict[str, str]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_faststream_records_are_written_by_the_service_handler(service_log: io.StringIO) -> None:
    EventBus("nats://127.0.0.1:4222", TELEMETRY)
    faststream = logging.getLogger("faststream")
    assert faststream.handlers == []  # not its own coloured stderr handler
    faststream.warning("reconnecting to nats://locus:s3cret@nats:4222")
    [record] = lines(service_log)
    assert record["service"] == "ingestion"
    assert record["logger"] == "faststream"
    assert record["level"] == "WARNING"
    assert record["message"] == "reconnecting to nats://***@nats:4222"
    assert "\x1b[" not in service_log.getvalue()


def test_an_empty_fetch_timeout_is_not_logged_but_other_task_failures_are(
    service_log: io.StringIO,
) -> None:
    EventBus("nats://127.0.0.1:4222", TELEMETRY)
    faststream = logging.getLogger("faststream")
    fetch_timeout = raised_in("/venv/lib/python3.11/site-packages/nats/js/client.py")
    faststream.error(RETRYING, exc_info=fetch_timeout)
    assert service_log.getvalue() == ""

    elsewhere = raised_in("/srv/locus/handlers.py")
    faststream.error(RETRYING, exc_info=elsewhere)
    failure = ValueError("bad event")
    faststream.error(RETRYING, exc_info=failure)
    logged = lines(service_log)
    assert [record["level"] for record in logged] == ["ERROR", "ERROR"]
    assert "TimeoutError" in logged[0]["exception"]


def test_the_filter_is_added_once_however_many_buses_a_process_makes() -> None:
    for _ in range(3):
        EventBus("nats://127.0.0.1:4222", TELEMETRY)
    filters = logging.getLogger("faststream").filters
    assert sum(isinstance(f, EmptyFetchFilter) for f in filters) == 1


def test_a_timeout_logged_without_retrying_is_kept() -> None:
    record = logging.LogRecord(
        "faststream", logging.ERROR, __file__, 1, "consumer stopped", None, None
    )
    error = raised_in("/x/nats/js/client.py")
    record.exc_info = (type(error), error, error.__traceback__)
    assert EmptyFetchFilter().filter(record)
