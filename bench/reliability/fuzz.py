"""Fuzz every RPC of a real stack (`make reliability`): requests generated from the protobuf
descriptors with Hypothesis, plus raw random bytes, against `locus up` on loopback with a scanned
fixture project. Prints the count of each status code per method and in total, the first
examples of any UNKNOWN / INTERNAL answer, and whether every process survived. The gateway's
methods are fuzzed with the stack's admin key, so requests reach past authentication; a separate
slice calls each of them with absent, malformed or wrong credentials, every one of which must be
answered UNAUTHENTICATED.

    python bench/reliability/fuzz.py [--requests 10000] [--json out.json]

A healthy stack answers every request with a code a caller can act on: OK, INVALID_ARGUMENT,
NOT_FOUND, FAILED_PRECONDITION, ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED (shed) or
UNAVAILABLE (shed). UNKNOWN and INTERNAL are defects; so is a process that died, and a bad
credential answered anything but UNAUTHENTICATED."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))

from mesh_access import admin_key_of, internal_channel, service_token_of
from stack_process import BenchStack

from locus.rpc.bearer import AUTHORIZATION, with_bearer
from locus.v1 import (
    answer_pb2,
    ast_pb2,
    gateway_pb2,
    impact_pb2,
    ingestion_pb2,
    retrieval_pb2,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = REPO_ROOT / "tests" / "e2e" / "fixtures" / "polyglot"
MODEL_DIR = REPO_ROOT / ".locus" / "models" / "all-minilm-l6-v2"
SERVICES = {
    "gateway": gateway_pb2.DESCRIPTOR.services_by_name["Gateway"],
    "ingestion": ingestion_pb2.DESCRIPTOR.services_by_name["IngestionService"],
    "ast": ast_pb2.DESCRIPTOR.services_by_name["AstService"],
    "retrieval": retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"],
    "impact": impact_pb2.DESCRIPTOR.services_by_name["ImpactService"],
    "answer": answer_pb2.DESCRIPTOR.services_by_name["AnswerService"],
}
DEFECTS = {"UNKNOWN", "INTERNAL"}
CALL_TIMEOUT = 20.0
REFUSED = "UNAUTHENTICATED"  # the one answer to a call without a valid credential

# Strings a hostile or careless caller sends: wildcards, escapes, other roots, control bytes.
HOSTILE = [
    "", " ", "%", "%%", "_", "\\", "'", '"', "../", "../../etc/passwd", "/", "/proc/self/environ",
    "/proc", "/dev/zero", "/etc", "\x00", "a\x00b", "é", "日本語", "\U0001f600", "-1",
    "9" * 40, "0", "null", "*", "?", "[", "(", "nats://u:p@h:4222", "SELECT 1; --",
]  # fmt: skip


def long_strings() -> st.SearchStrategy[str]:
    return st.builds(
        lambda piece, times: piece * times,
        st.sampled_from(["a", "%", "../", "é", "x_", "\x00", "日"]),
        st.integers(min_value=500, max_value=80_000),
    )


def string_values(known: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(known or [""]),
        st.sampled_from(HOSTILE),
        st.text(max_size=40),
        long_strings(),
    )


INTEGER_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}


def integers(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [v for v in (low, high, -1, 0, 1, 2, 10, 1000, 100_000, 2**31 - 1) if low <= v <= high]
    return st.one_of(st.sampled_from(edges), st.integers(min_value=low, max_value=high))


def field_values(field: FieldDescriptor, known: list[str], depth: int) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return string_values(known)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64)
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return st.floats(allow_nan=True, allow_infinity=True, width=32)
    if kind == FieldDescriptor.TYPE_ENUM:
        values = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(values), st.integers(-(2**31), 2**31 - 1))
    if kind in INTEGER_RANGES:
        return integers(*INTEGER_RANGES[kind])
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return message_values(field.message_type, known, depth + 1)
    raise ValueError(f"no strategy for field type {kind}")


def message_values(
    descriptor: Descriptor, known: list[str], depth: int = 0
) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts of field name → value (absent fields left unset) for a message descriptor."""
    if depth > 3:
        return st.just({})
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        values = field_values(field, known, depth)
        if field.is_repeated and not _is_map(field):
            values = st.lists(values, max_size=4)
        elif _is_map(field):
            continue
        parts[field.name] = st.one_of(st.none(), values)
    return st.fixed_dictionaries(parts)


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


def build(descriptor: Descriptor, values: dict[str, Any]) -> Any:
    message = message_factory.GetMessageClass(descriptor)()
    _fill(message, values)
    return message


def _fill(message: Any, values: dict[str, Any]) -> None:
    for name, value in values.items():
        if value is None:
            continue
        field = message.DESCRIPTOR.fields_by_name[name]
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.is_repeated:
                for item in value:
                    _fill(getattr(message, name).add(), item)
            else:
                _fill(getattr(message, name), value)
                getattr(message, name).SetInParent()
        elif field.is_repeated:
            getattr(message, name).extend(value)
        else:
            setattr(message, name, value)


class Caller:
    """Calls one method with a serialized request and records the status it gets."""

    def __init__(self, channel: grpc.Channel, service: Any, method: MethodDescriptor) -> None:
        path = f"/{service.full_name}/{method.name}"
        identity: Callable[[bytes], bytes] = lambda raw: raw  # noqa: E731
        self.streaming = method.server_streaming
        factory = channel.unary_stream if self.streaming else channel.unary_unary
        self._call = factory(path, request_serializer=identity, response_deserializer=identity)

    def __call__(
        self, payload: bytes, metadata: list[tuple[str, str]] | None = None
    ) -> tuple[str, str]:
        try:
            if self.streaming:
                for _ in self._call(payload, timeout=CALL_TIMEOUT, metadata=metadata):
                    pass
            else:
                self._call(payload, timeout=CALL_TIMEOUT, metadata=metadata)
        except grpc.RpcError as error:
            return error.code().name, (error.details() or "")[:300]
        return "OK", ""


def harvest(gateway: grpc.Channel, ingestion: grpc.Channel, project: str) -> list[str]:
    """Real ids of the scanned project (its name, id, files, symbols, a scan, a request), so
    generated requests reach past the first lookup."""
    from locus.v1 import common_pb2, gateway_pb2_grpc, ingestion_pb2_grpc

    stub = gateway_pb2_grpc.GatewayStub(gateway)
    found = [project]
    got = stub.GetProject(ingestion_pb2.GetProjectRequest(project_id=project), timeout=10)
    found += [got.project_id, got.latest_snapshot_id]
    located = stub.Locate(
        gateway_pb2.LocateRequest(project_id=project, question="where are prices computed?"),
        timeout=60,
    )
    found.append(located.request_id)
    for ranked in located.symbols[:3]:
        found += [ranked.symbol.node_id, ranked.symbol.qualified_name, ranked.symbol.name]
    files = ingestion_pb2_grpc.IngestionServiceStub(ingestion).ListFiles(
        ingestion_pb2.ListFilesRequest(
            project_id=got.project_id, page=common_pb2.PageRequest(page_size=5)
        ),
        timeout=10,
    )
    for file in files.files:
        found += [file.file_id, file.relative_path, file.sha256]
    return [value for value in dict.fromkeys(found) if value]


def run(requests: int, work: Path) -> dict[str, Any]:
    allowed = work / "allowed"
    shutil.copytree(FIXTURE, allowed / "polyglot")
    stack = BenchStack(
        data_dir=work / "data",
        allowed_bases=[allowed],
        locus_home=work / "home",
        model_dir=MODEL_DIR,
        console_log=work / "up.log",
    )
    state, _ = stack.start()
    try:
        return _fuzz(state, allowed / "polyglot", requests, work)
    finally:
        stack.stop()


def _fuzz(state: Any, repository: Path, requests: int, work: Path) -> dict[str, Any]:
    import subprocess

    locus = str(Path(sys.executable).parent / "locus")
    environment = {
        "LOCUS_HOME": str(work / "home"),
        "LOCUS_GATEWAY_ADDR": state.address_of("gateway"),
        "LOCUS_API_KEY_FILE": state.admin_key_file,
        "PATH": "/usr/bin:/bin",
    }
    for command in (
        ["project", "create", "fuzz"],
        ["source", "add", "fuzz", str(repository)],
        ["scan", "fuzz", "--wait", "--timeout", "600"],
    ):
        subprocess.run(
            [locus, *command],
            env=environment,
            check=True,
            capture_output=True,
            timeout=900,
        )
    # The internal services with the stack's service token, the gateway with its admin key:
    # what is fuzzed is each service's handling of requests, not the refusal of anonymous calls
    # (the gateway's refusals have their own slice, _fuzz_credentials).
    token = service_token_of(state)
    admin_key = admin_key_of(state)
    channels = {
        name: internal_channel(state.address_of(name), token)
        for name in SERVICES
        if name != "gateway"
    }
    channels["gateway"] = with_bearer(grpc.insecure_channel(state.address_of("gateway")), admin_key)
    known = harvest(channels["gateway"], channels["ingestion"], "fuzz")
    methods = [(name, service, m) for name, service in SERVICES.items() for m in service.methods]
    per_method = max(-(-requests // len(methods)), 10)  # rounded up: at least `requests`
    raw_share = max(per_method // 8, 2)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    defects: dict[str, list[dict[str, str]]] = defaultdict(list)
    examples: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)  # one per code
    started = time.monotonic()
    for name, service, method in methods:
        key = f"{name}.{method.name}"
        caller = Caller(channels[name], service, method)

        def record(code: str, details: str, sent: str, key: str = key) -> None:
            counts[key][code] += 1
            if code in DEFECTS and len(defects[key]) < 3:
                defects[key].append({"code": code, "details": details, "request": sent[:300]})
            if code != "OK" and code not in examples[key]:
                examples[key][code] = {"details": details, "request": sent[:300]}

        typed, raw = _tests(caller, method, known, per_method - raw_share, raw_share, record)
        typed()
        raw()
        print(f"  {key}: {dict(counts[key])}", flush=True)
    credentials = _fuzz_credentials(
        state.address_of("gateway"), admin_key, max(per_method // 10, 3)
    )
    alive = {
        name: _alive(process.pid)
        for name, process in {**state.services, "nats-server": state.nats}.items()
    }
    total: Counter[str] = Counter()
    for per in counts.values():
        total.update(per)
    return {
        "requests": sum(total.values()),
        "seconds": round(time.monotonic() - started, 1),
        "total": dict(total),
        "per_method": {k: dict(v) for k, v in counts.items()},
        "defects": dict(defects),
        "examples": dict(examples),
        "credentials": credentials,
        "alive": alive,
    }


def bad_credentials(admin_key: str) -> list[str | None]:
    """Authorization metadata a careless or hostile caller sends (None: none at all), the
    admin key's own id and secret among them in the wrong places."""
    _, key_id, secret = admin_key.split("_", 2)  # lk_<12 hex>_<secret>
    other_secret = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    return [
        None, "", " ", "Bearer", "Bearer ", "bearer", "Bearer  ", "Basic dXNlcjpwYXNzd29yZA==",
        admin_key, f"Token {admin_key}", f"Bearer{admin_key}", f"Bearer {admin_key}x",
        f"Bearer {admin_key[:-1]}", f"Bearer lk_{key_id}_{other_secret}",
        f"Bearer lk_000000000000_{secret}", f"Bearer lk_{key_id}", "Bearer lk_", "Bearer lk__",
        f"Bearer LK_{key_id}_{secret}", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.",
        "Bearer ' OR 1=1 --", "Bearer %", "Bearer ../../etc/passwd", "Bearer " + "A" * 2000,
    ]  # fmt: skip


def _fuzz_credentials(address: str, admin_key: str, generated: int) -> dict[str, Any]:
    """Every gateway method called with each of ``bad_credentials`` and ``generated`` more
    (random printable text, alone or after "Bearer " and the admin key's id), an empty
    request each time. Anything but UNAUTHENTICATED is recorded as unexpected."""
    service = SERVICES["gateway"]
    _, key_id, _ = admin_key.split("_", 2)
    printable = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=120)
    generated_credentials = st.one_of(
        printable,
        printable.map(lambda text: f"Bearer {text}"),
        printable.map(lambda text: f"Bearer lk_{key_id}_{text}"),
    )
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    unexpected: list[dict[str, str]] = []
    started = time.monotonic()
    with grpc.insecure_channel(address) as channel:
        for method in service.methods:
            key = f"gateway.{method.name}"
            caller = Caller(channel, service, method)

            def call(credential: str | None, key: str = key, caller: Caller = caller) -> None:
                metadata = None if credential is None else [(AUTHORIZATION, credential)]
                code, details = caller(b"", metadata)
                counts[key][code] += 1
                if code != REFUSED and len(unexpected) < 10:
                    sent = "(absent)" if credential is None else credential
                    unexpected.append(
                        {"method": key, "code": code, "details": details, "sent": sent}
                    )

            for credential in bad_credentials(admin_key):
                call(credential)
            _each_generated(generated_credentials, generated, call)()
        print(f"  bad credentials: {dict(sum(counts.values(), Counter()))}", flush=True)
    total: Counter[str] = Counter()
    for per in counts.values():
        total.update(per)
    return {
        "requests": sum(total.values()),
        "seconds": round(time.monotonic() - started, 1),
        "total": dict(total),
        "per_method": {k: dict(v) for k, v in counts.items()},
        "unexpected": unexpected,
    }


def _each_generated(
    values: st.SearchStrategy[str], examples: int, call: Callable[[str], None]
) -> Callable[[], None]:
    """A Hypothesis run calling ``call`` with ``examples`` generated values."""

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(values)
    def run(value: str) -> None:
        call(value)

    return run


def healthy(result: dict[str, Any]) -> bool:
    """No UNKNOWN/INTERNAL, every process alive, every bad credential refused."""
    refused_all = set(result["credentials"]["total"]) <= {REFUSED}
    return (
        not any(result["total"].get(code) for code in DEFECTS)
        and all(result["alive"].values())
        and refused_all
    )


def _tests(
    caller: Caller,
    method: MethodDescriptor,
    known: list[str],
    typed_examples: int,
    raw_examples: int,
    record: Callable[[str, str, str], None],
) -> tuple[Callable[[], None], Callable[[], None]]:
    """Two Hypothesis runs for one method: generated requests, and raw random bytes."""
    quick = {
        "deadline": None,
        "database": None,
        "phases": [Phase.generate],
        "suppress_health_check": list(HealthCheck),
    }

    @settings(max_examples=typed_examples, **quick)
    @given(message_values(method.input_type, known))
    def typed(values: dict[str, Any]) -> None:
        request = build(method.input_type, values)
        code, details = caller(request.SerializeToString())
        record(code, details, str(request))

    @settings(max_examples=raw_examples, **quick)
    @given(st.binary(min_size=1, max_size=256))
    def raw(payload: bytes) -> None:
        code, details = caller(payload)
        record(code, details, repr(payload))

    return typed, raw


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def print_report(result: dict[str, Any]) -> None:
    codes = sorted({code for per in result["per_method"].values() for code in per})
    print(f"\nfuzz: {result['requests']} requests in {result['seconds']} s")
    print("| method | " + " | ".join(codes) + " |")
    print("|---|" + "---|" * len(codes))
    for key, per in result["per_method"].items():
        print(f"| {key} | " + " | ".join(str(per.get(code, 0)) for code in codes) + " |")
    print("| **total** | " + " | ".join(str(result["total"].get(c, 0)) for c in codes) + " |")
    bad = sum(result["total"].get(code, 0) for code in DEFECTS)
    dead = [name for name, alive in result["alive"].items() if not alive]
    print(f"\nUNKNOWN/INTERNAL: {bad}; processes that died: {dead or 'none'}")
    for key, examples in result["defects"].items():
        for example in examples:
            print(f"  {key} {example['code']}: {example['details']!r}\n    {example['request']!r}")
    credentials = result["credentials"]
    answered = ", ".join(f"{code} {count}" for code, count in sorted(credentials["total"].items()))
    print(
        f"\nbad credentials: {credentials['requests']} calls to the gateway's "
        f"{len(credentials['per_method'])} methods in {credentials['seconds']} s: {answered}; "
        f"answered other than {REFUSED}: "
        f"{sum(n for code, n in credentials['total'].items() if code != REFUSED)}"
    )
    for example in credentials["unexpected"]:
        print(
            f"  {example['method']} {example['code']}: {example['details']!r}\n"
            f"    authorization {example['sent'][:120]!r}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--json", type=Path)
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="locus-fuzz-"))
    try:
        result = run(arguments.requests, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print_report(result)
    if arguments.json:
        arguments.json.write_text(json.dumps(result, indent=2))
    return 0 if healthy(result) else 1


if __name__ == "__main__":
    sys.exit(main())
