"""What `locus up` decides before it starts anything: which services, in which order, on which
ports, with which environment."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.local_stack import (
    DEFAULT_PORTS,
    SERVICE_ORDER,
    choose_ports,
    is_process_of,
    log_tail,
    parse_service_list,
    port_is_free,
    select_services,
    service_environment,
)

pytestmark = pytest.mark.unit

EVERYTHING = list(SERVICE_ORDER)


def test_the_order_is_by_dependency() -> None:
    assert SERVICE_ORDER == (
        "ingestion",
        "ast",
        "retrieval",
        "impact",
        "answer",
        "gateway",
        "mcp",
    )
    assert DEFAULT_PORTS["gateway"] == 50050
    assert sorted(DEFAULT_PORTS.values()) == list(range(50050, 50057))


def test_service_lists_are_split_on_commas() -> None:
    assert parse_service_list(" Gateway, ingestion,,ast ") == ["gateway", "ingestion", "ast"]
    assert parse_service_list(None) == []


def test_by_default_every_installed_service_starts_in_order() -> None:
    assert select_services([], ["ast", "ingestion"]) == ["ingestion", "ast"]


def test_requested_services_start_in_dependency_order() -> None:
    assert select_services(["gateway", "ingestion"], EVERYTHING) == ["ingestion", "gateway"]


def test_an_unknown_service_is_a_usage_error() -> None:
    with pytest.raises(CliError) as raised:
        select_services(["ingestion", "search"], EVERYTHING)
    assert raised.value.exit_code == ExitCode.USAGE
    assert "search" in raised.value.message
    assert "gateway" in raised.value.message  # lists the valid names


def test_a_service_that_is_not_installed_is_a_usage_error() -> None:
    with pytest.raises(CliError) as raised:
        select_services(["ingestion", "answer"], ["ingestion", "ast"])
    assert raised.value.exit_code == ExitCode.USAGE
    assert "answer" in raised.value.message


def test_nothing_installed_is_a_usage_error() -> None:
    with pytest.raises(CliError, match="make setup"):
        select_services([], [])


def environment(name: str, ports: dict[str, int], **overrides: object) -> dict[str, str]:
    arguments: dict[str, object] = {
        "ports": ports,
        "nats_url": "nats://127.0.0.1:4333",
        "data_dir": Path("/data"),
        "allowed_bases": [Path("/repos"), Path("/src, with comma")],
        "traces_file": None,
        "inherited": {"PATH": "/bin", "LOCUS_NATS_URL": "nats://stale:1"},
    }
    arguments.update(overrides)
    return service_environment(name, **arguments)  # type: ignore[arg-type]


def test_the_mcp_server_gets_an_http_port_and_the_gateway() -> None:
    env = environment("mcp", {"gateway": 50050, "mcp": 41001})
    assert env["LOCUS_MCP_HTTP_HOST"] == "127.0.0.1"
    assert env["LOCUS_MCP_HTTP_PORT"] == "41001"
    assert env["LOCUS_GATEWAY_ADDR"] == "127.0.0.1:50050"


def test_each_service_gets_its_port_data_dir_bus_and_every_peer() -> None:
    ports = {"ingestion": 50051, "ast": 41000, "gateway": 50050}
    env = environment("ast", ports)
    assert env["PATH"] == "/bin"
    assert env["LOCUS_NATS_URL"] == "nats://127.0.0.1:4333"
    assert env["LOCUS_AST_GRPC_PORT"] == "41000"
    assert env["LOCUS_AST_GRPC_HOST"] == "127.0.0.1"
    assert env["LOCUS_AST_DATA_DIR"] == "/data/ast"
    assert env["LOCUS_INGESTION_ADDR"] == "127.0.0.1:50051"
    assert env["LOCUS_AST_ADDR"] == "127.0.0.1:41000"
    assert env["LOCUS_GATEWAY_ADDR"] == "127.0.0.1:50050"
    assert "LOCUS_TRACES_FILE" not in env


def test_ingestion_learns_the_allowed_bases_and_the_stages_that_run() -> None:
    env = environment("ingestion", {"ingestion": 1, "ast": 2, "impact": 3, "gateway": 4})
    assert json.loads(env["LOCUS_INGESTION_ALLOWED_BASES"]) == ["/repos", "/src, with comma"]
    assert env["LOCUS_INGESTION_REQUIRED_STAGES"] == "ast,impact"
    alone = environment("ingestion", {"ingestion": 1})
    assert alone["LOCUS_INGESTION_REQUIRED_STAGES"] == ""


def test_scans_wait_for_vectors_only_where_retrieval_makes_them() -> None:
    ports = {"ingestion": 1, "ast": 2, "retrieval": 3}
    assert environment("ingestion", ports)["LOCUS_INGESTION_EMBEDDING_STAGES"] == "vectors"
    for off in ("false", "0", "off", "No"):
        inherited = {"PATH": "/bin", "LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": off}
        env = environment("ingestion", ports, inherited=inherited)
        assert env["LOCUS_INGESTION_EMBEDDING_STAGES"] == "", off
    on = {"LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": "true"}
    assert environment("ingestion", ports, inherited=on)["LOCUS_INGESTION_EMBEDDING_STAGES"]
    assert environment("ingestion", {"ingestion": 1})["LOCUS_INGESTION_EMBEDDING_STAGES"] == ""


def test_a_service_serves_metrics_on_its_own_port_and_only_when_given_one() -> None:
    env = environment("ast", {"ast": 1}, metrics_port=9462)
    assert env["LOCUS_AST_METRICS_PORT"] == "9462"
    assert env["LOCUS_AST_METRICS_HOST"] == "127.0.0.1"
    assert "LOCUS_AST_METRICS_PORT" not in environment("ast", {"ast": 1})


def test_the_traces_file_is_passed_on() -> None:
    env = environment("ast", {"ast": 1}, traces_file=Path("/tmp/spans.jsonl"))
    assert env["LOCUS_TRACES_FILE"] == "/tmp/spans.jsonl"


def test_a_free_default_port_is_kept_and_a_busy_one_replaced() -> None:
    with socket.socket() as busy, socket.socket() as probe:
        busy.bind(("127.0.0.1", 0))
        busy_port = busy.getsockname()[1]
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
        probe.close()
        assert not port_is_free(busy_port)
        ports = choose_ports(["answer", "gateway"], {"answer": busy_port, "gateway": free_port})
    assert ports["answer"] not in (0, busy_port, free_port)
    assert ports["gateway"] == free_port


def test_log_tail_keeps_the_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert log_tail(log, lines=3).splitlines() == ["line 97", "line 98", "line 99"]
    assert log_tail(tmp_path / "missing.log") == ""


def test_only_processes_running_the_expected_command_count_as_leftovers() -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        # Just after exec the kernel may not have filled in /proc/PID/cmdline yet.
        deadline = time.monotonic() + 10
        while not is_process_of(sleeper.pid, "time.sleep(30)") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert is_process_of(sleeper.pid, "time.sleep(30)")
        assert not is_process_of(sleeper.pid, "locus.ingestion")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not is_process_of(sleeper.pid, "time.sleep(30)")


def test_http_health_is_not_ready_when_something_else_answers_the_port() -> None:
    """A probe that reads its own request back (a TCP self-connection to a port nothing
    listens on yet, or any non-HTTP peer) means "not ready", not a crash of `locus up`."""
    import socket
    import threading

    from locus.cli.local_stack import http_health

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def echo() -> None:
            connection, _ = listener.accept()
            with connection:
                connection.sendall(connection.recv(4096))

        thread = threading.Thread(target=echo, daemon=True)
        thread.start()
        port = listener.getsockname()[1]
        assert http_health(f"http://127.0.0.1:{port}/healthz", timeout=5) == 0
        thread.join(timeout=5)
