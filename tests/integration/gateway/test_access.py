"""Who may call the public API, through the real gateway over real gRPC (the downstream services
and nats-server real too): no credential is refused on every RPC; a key scoped to one project
sees nothing of another; roles bound what a key may do; revoked and expired keys stop at once;
OIDC tokens are checked against a JWKS endpoint served here; the request log and the audit
events name the principal, refused calls included."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
import jwt
import nats
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gateway_calls import make_key, refusal
from google.protobuf import message_factory
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.v1 import ast_pb2, events_pb2, gateway_pb2, impact_pb2, ingestion_pb2, retrieval_pb2

pytestmark = pytest.mark.integration

GATEWAY = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"]
READER, WRITER, ADMIN = gateway_pb2.ROLE_READER, gateway_pb2.ROLE_WRITER, gateway_pb2.ROLE_ADMIN


async def test_every_public_rpc_refuses_a_caller_without_a_valid_credential(gateway) -> None:
    anonymous = gateway.stub_as(None)
    unknown = gateway.stub_as("lk_0123456789ab_" + "x" * 43)
    mangled = gateway.stub_as("lk_not-a-key")
    for method in GATEWAY.methods:
        request = message_factory.GetMessageClass(method.input_type)()
        for stub, says in (
            (anonymous, "no credential"),
            (unknown, "is not valid"),
            (mangled, "malformed"),
        ):
            error = await refusal(getattr(stub, method.name)(request))
            assert error.code() == grpc.StatusCode.UNAUTHENTICATED, method.name
            assert says in (error.details() or ""), (method.name, error.details())


async def test_a_reader_of_one_project_sees_nothing_of_another(stack, gateway, sample_tree) -> None:
    stack.require("ingestion", "ast", "retrieval", "impact")
    mine = await gateway.create_project()
    theirs = await gateway.create_project(sample_tree)
    await gateway.scan_and_wait(theirs.name)
    node = (
        await gateway.stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(project_id=theirs.name, name="charge_card")
        )
    ).symbols[0]
    job = await gateway.stub.StartScan(ingestion_pb2.StartScanRequest(project_id=theirs.name))
    key = await make_key(gateway.stub, (mine.name, READER))
    reader = gateway.stub_as(key.api_key)

    assert (
        await reader.GetProject(ingestion_pb2.GetProjectRequest(project_id=mine.name))
    ).name == (mine.name)
    for theirs_ref in (theirs.name, theirs.project_id):
        calls = [
            reader.GetProject(ingestion_pb2.GetProjectRequest(project_id=theirs_ref)),
            reader.ListSources(ingestion_pb2.ListSourcesRequest(project_id=theirs_ref)),
            reader.FindSymbols(ast_pb2.FindSymbolsRequest(project_id=theirs_ref, name="charge")),
            reader.Locate(gateway_pb2.LocateRequest(project_id=theirs_ref, question="card?")),
            reader.Ask(gateway_pb2.AskRequest(project_id=theirs_ref, question="card?")),
            reader.Search(
                retrieval_pb2.SearchRequest(
                    query="charge card", filters=retrieval_pb2.SearchFilters(project_id=theirs_ref)
                )
            ),
        ]
        for call in calls:
            error = await refusal(call)
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED
            assert f"has no reader role on project {theirs_ref!r}" in (error.details() or "")
    for call in (
        reader.GetScan(ingestion_pb2.GetScanRequest(job_id=job.job_id)),
        reader.GetAstNode(ast_pb2.GetNodeRequest(node_id=node.node_id)),
        reader.Search(retrieval_pb2.SearchRequest(query="charge card")),  # every project
    ):
        assert (await refusal(call)).code() == grpc.StatusCode.PERMISSION_DENIED

    # An id of another project's job, node or source is refused exactly as an id of nothing:
    # ids cannot be probed.
    sources = await gateway.stub.ListSources(
        ingestion_pb2.ListSourcesRequest(project_id=theirs.name)
    )
    probes: list[tuple[Any, str]] = [
        (lambda i: reader.GetScan(ingestion_pb2.GetScanRequest(job_id=i)), job.job_id),
        (lambda i: reader.GetAstNode(ast_pb2.GetNodeRequest(node_id=i)), node.node_id),
        (
            lambda i: reader.RemoveSource(ingestion_pb2.RemoveSourceRequest(source_id=i)),
            sources.sources[0].source_id,
        ),
    ]
    for call, real in probes:
        fake = real[:-6] + ("111111" if real.endswith("000000") else "000000")
        existing, missing = await refusal(call(real)), await refusal(call(fake))
        assert existing.code() == missing.code() == grpc.StatusCode.PERMISSION_DENIED
        assert missing.details() == (existing.details() or "").replace(real, fake)
        # It reads as a sentence and suggests a grant that exists (a role on a project).
        assert "role on the project of " in (existing.details() or "")
        assert " on that project (" in (existing.details() or "")
        assert ":the project" not in (existing.details() or "")
    missing_job = gateway.stub.GetScan(
        ingestion_pb2.GetScanRequest(job_id=job.job_id[:-6] + "000000")
    )
    assert (await refusal(missing_job)).code() == grpc.StatusCode.NOT_FOUND  # an admin learns it

    # The refusal of a project that exists says nothing a missing one does not.
    ghost = f"ghost-{uuid.uuid4().hex[:8]}"
    on_theirs = await refusal(reader.GetProject(ingestion_pb2.GetProjectRequest(project_id=ghost)))
    renamed = (
        (await refusal(reader.GetProject(ingestion_pb2.GetProjectRequest(project_id=theirs.name))))
        .details()
        .replace(theirs.name, ghost)
    )
    assert on_theirs.details() == renamed

    listed = await reader.ListProjects(ingestion_pb2.ListProjectsRequest())
    assert [p.name for p in listed.projects] == [mine.name]
    everything = await gateway.stub.ListProjects(ingestion_pb2.ListProjectsRequest())
    assert {mine.name, theirs.name} <= {p.name for p in everything.projects}

    # A reader neither adds sources nor scans, creates projects or keys.
    for call in (
        reader.AddSource(ingestion_pb2.AddSourceRequest(project_id=mine.name, path="/tmp")),
        reader.StartScan(ingestion_pb2.StartScanRequest(project_id=mine.name)),
        reader.NotifyPush(ingestion_pb2.NotifyPushRequest(project_id=mine.name, source_id="s")),
        reader.CreateProject(ingestion_pb2.CreateProjectRequest(name=f"x-{uuid.uuid4().hex[:6]}")),
        reader.CreateApiKey(
            gateway_pb2.CreateApiKeyRequest(
                name="more", grants=[gateway_pb2.Grant(project=mine.name, role=READER)]
            )
        ),
    ):
        assert (await refusal(call)).code() == grpc.StatusCode.PERMISSION_DENIED


async def test_a_writer_scans_its_project_and_an_admin_grants_no_more_than_it_holds(
    stack, gateway, sample_tree
) -> None:
    stack.require("ingestion")
    mine = await gateway.create_project()
    theirs = await gateway.create_project()
    writer = gateway.stub_as((await make_key(gateway.stub, (mine.name, WRITER))).api_key)
    source = await writer.AddSource(
        ingestion_pb2.AddSourceRequest(project_id=mine.name, path=str(sample_tree))
    )
    job = await writer.StartScan(ingestion_pb2.StartScanRequest(project_id=mine.name))
    assert (
        await writer.GetScan(ingestion_pb2.GetScanRequest(job_id=job.job_id))
    ).job_id == job.job_id
    # NotifyPush is relayed to ingestion for a writer (which refuses a push to a directory).
    pushed = await refusal(
        writer.NotifyPush(
            ingestion_pb2.NotifyPushRequest(project_id=mine.name, source_id=source.source_id)
        )
    )
    assert (pushed.code(), "not a git source" in (pushed.details() or "")) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        True,
    )

    project_admin = await make_key(gateway.stub, (mine.name, ADMIN))
    as_project_admin = gateway.stub_as(project_admin.api_key)
    made = await make_key(as_project_admin, (mine.project_id, READER), name="for-ci")
    assert made.key.created_by == f"key:{project_admin.key.key_id}"
    assert [(g.project, g.role) for g in made.key.grants] == [(mine.project_id, READER)]
    for grants in ([(theirs.name, READER)], [("*", READER)]):
        error = await refusal(
            as_project_admin.CreateApiKey(
                gateway_pb2.CreateApiKeyRequest(
                    name="wider",
                    grants=[gateway_pb2.Grant(project=p, role=r) for p, r in grants],
                )
            )
        )
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    for lifetime in (-1, 10**18):
        error = await refusal(
            gateway.stub.CreateApiKey(
                gateway_pb2.CreateApiKeyRequest(
                    name="odd",
                    grants=[gateway_pb2.Grant(project=mine.name, role=READER)],
                    expires_in_seconds=lifetime,
                )
            )
        )
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "expires_in_seconds" in (error.details() or "")
    # A project admin lists the keys it made; the system admin every key. No secret is listed.
    own = await as_project_admin.ListApiKeys(gateway_pb2.ListApiKeysRequest())
    assert [k.key_id for k in own.keys] == [made.key.key_id]
    every = await gateway.stub.ListApiKeys(gateway_pb2.ListApiKeysRequest())
    assert {project_admin.key.key_id, made.key.key_id} <= {k.key_id for k in every.keys}
    assert made.api_key.split("_", 2)[2] not in str(every)


async def test_a_revoked_or_expired_key_stops_working_at_once(gateway) -> None:
    key = await make_key(gateway.stub, ("*", READER))
    caller = gateway.stub_as(key.api_key)
    whoami = await caller.WhoAmI(gateway_pb2.WhoAmIRequest())
    assert whoami.principal == f"key:{key.key.key_id}"
    revoked = await gateway.stub.RevokeApiKey(
        gateway_pb2.RevokeApiKeyRequest(key_id=key.key.key_id)
    )
    assert revoked.HasField("revoked_at")
    error = await refusal(caller.WhoAmI(gateway_pb2.WhoAmIRequest()))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "was revoked" in (error.details() or "")

    expiring = await make_key(gateway.stub, ("*", READER), expires_in_seconds=1)
    caller = gateway.stub_as(expiring.api_key)
    await caller.WhoAmI(gateway_pb2.WhoAmIRequest())
    await asyncio.sleep(max(0.0, expiring.key.expires_at.ToDatetime().timestamp() - time.time()))
    await asyncio.sleep(0.1)
    error = await refusal(caller.WhoAmI(gateway_pb2.WhoAmIRequest()))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "expired" in (error.details() or "")


async def test_the_request_log_and_audit_events_name_the_principal(stack, gateway) -> None:
    stack.require("ingestion")
    mine = await gateway.create_project()
    theirs = await gateway.create_project()
    key = await make_key(gateway.stub, (mine.name, READER))
    reader = gateway.stub_as(key.api_key)
    principal = f"key:{key.key.key_id}"
    asked, denied = f"r-{uuid.uuid4().hex[:10]}", f"r-{uuid.uuid4().hex[:10]}"
    admins = f"r-{uuid.uuid4().hex[:10]}"
    await refusal(
        gateway.stub.Locate(
            gateway_pb2.LocateRequest(project_id=mine.name, question="admin asks"),
            metadata=(("x-request-id", admins),),
        )
    )
    # Never scanned: refused by the stack, but recorded as this principal's request.
    await refusal(
        reader.Locate(
            gateway_pb2.LocateRequest(project_id=mine.name, question="where are orders placed?"),
            metadata=(("x-request-id", asked),),
        )
    )
    await refusal(
        reader.Locate(
            gateway_pb2.LocateRequest(project_id=theirs.name, question="their secrets?"),
            metadata=(("x-request-id", denied),),
        )
    )

    everything = await gateway.stub.ListRequests(gateway_pb2.ListRequestsRequest())
    by_id = {r.request_id: r for r in everything.requests}
    assert by_id[asked].principal == principal
    assert (by_id[denied].principal, by_id[denied].status) == (principal, "denied")
    assert by_id[admins].principal.startswith("key:")
    # A reader sees its own requests only, and may neither read nor rate another's.
    own = await reader.ListRequests(gateway_pb2.ListRequestsRequest())
    assert {r.request_id for r in own.requests} == {asked, denied}
    for call in (
        reader.GetRequest(gateway_pb2.GetRequestRequest(request_id=admins)),
        reader.RecordFeedback(gateway_pb2.RecordFeedbackRequest(request_id=admins, rating=1)),
    ):
        assert (await refusal(call)).code() == grpc.StatusCode.PERMISSION_DENIED
    await reader.RecordFeedback(gateway_pb2.RecordFeedbackRequest(request_id=asked, rating=4))

    connection = await nats.connect(stack.nats_url)
    try:
        jetstream = connection.jetstream()

        async def find(subject: str, message_id: str) -> Any:
            """The message with this id on the subject (publishing is asynchronous)."""
            subscription = await jetstream.subscribe(
                f"{stack.subject_prefix}.{subject}", ordered_consumer=True
            )
            try:
                while True:
                    message = await subscription.next_msg(timeout=10)
                    if message.headers and message.headers.get("Nats-Msg-Id") == message_id:
                        return message
            finally:
                await subscription.unsubscribe()

        submitted = events_pb2.RequestSubmitted.FromString(
            (await find("request.submitted", f"request.submitted:{denied}")).data
        )
        refused = events_pb2.AccessDenied.FromString(
            (await find("access.denied", f"access.denied:{denied}:Locate")).data
        )
    finally:
        await connection.close()
    assert submitted.principal == principal
    assert (refused.principal, refused.method, refused.scope, refused.code) == (
        principal,
        "Locate",
        theirs.name,
        "PERMISSION_DENIED",
    )


# OIDC


class Issuer:
    """A test identity provider: an RSA key whose public half a local JWKS endpoint serves."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = uuid.uuid4().hex[:8]
        self.url = ""
        self.issuer = "https://issuer.example.test"
        self.audience = "locus-gateway"

    def jwks(self) -> bytes:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update(kid=self.kid, use="sig", alg="RS256")
        return json.dumps({"keys": [jwk]}).encode()

    def token(self, key: Any = None, algorithm: str = "RS256", **claims: Any) -> str:
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": "alice",
            "email": "alice@example.test",
            "groups": ["locus-readers"],
            "iat": now,
            "exp": now + 300,
            **claims,
        }
        return jwt.encode(
            payload, key if key is not None else self.key, algorithm, headers={"kid": self.kid}
        )


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    provider = Issuer()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = provider.jwks()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    provider.url = f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()


async def test_oidc_tokens_are_checked_against_the_issuers_keys(
    stack, start_gateway, issuer
) -> None:
    stack.require("ingestion")
    gateway = await start_gateway(
        settings_update={
            "oidc_issuer": issuer.issuer,
            "oidc_audience": issuer.audience,
            "oidc_jwks_url": issuer.url,
            "oidc_role_mapping": {"locus-readers": ["reader:*"]},
            "oidc_jwks_refetch_cooldown_seconds": 0,
        }
    )
    project = await gateway.create_project()
    alice = gateway.stub_as(issuer.token())
    whoami = await alice.WhoAmI(gateway_pb2.WhoAmIRequest())
    assert (whoami.principal, whoami.name) == ("oidc:alice", "alice@example.test")
    assert [(g.project, g.role) for g in whoami.grants] == [("*", READER)]
    got = await alice.GetProject(ingestion_pb2.GetProjectRequest(project_id=project.name))
    assert got.project_id == project.project_id

    # The issuer rotates its signing key: a token with the new key id verifies at once (the
    # gateway fetches the keys again for a key id it does not know), without a restart.
    issuer.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    issuer.kid = uuid.uuid4().hex[:8]
    rotated = gateway.stub_as(issuer.token(sub="carol"))
    assert (await rotated.WhoAmI(gateway_pb2.WhoAmIRequest())).principal == "oidc:carol"

    # Authenticated, but no group maps to a grant: nothing may be read.
    stranger = gateway.stub_as(issuer.token(sub="bob", groups=["elsewhere"]))
    error = await refusal(
        stranger.GetProject(ingestion_pb2.GetProjectRequest(project_id=project.name))
    )
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED

    forged_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = issuer.key.public_key().public_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PublicFormat.SubjectPublicKeyInfo,
    )
    unsigned = jwt.encode(
        {"iss": issuer.issuer, "aud": issuer.audience, "sub": "mallory", "exp": time.time() + 300},
        None,
        algorithm="none",
    )
    for token, says in (
        (issuer.token(key=forged_key), "signature does not verify"),
        (issuer.token(aud="another-service"), "audience"),
        (issuer.token(iss="https://elsewhere.example.test"), "another issuer"),
        (issuer.token(exp=int(time.time()) - 120), "expired"),
        (unsigned, "not accepted"),
        (_hs256_with_public_key(issuer, public_pem), "not accepted"),
    ):
        error = await refusal(gateway.stub_as(token).WhoAmI(gateway_pb2.WhoAmIRequest()))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED, says
        assert says in (error.details() or ""), (says, error.details())


def _hs256_with_public_key(issuer: Issuer, public_pem: bytes) -> str:
    """The algorithm-confusion forgery: HMAC keyed with the issuer's public key."""

    def part(data: dict[str, Any]) -> str:
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    now = int(time.time())
    signing_input = (
        part({"alg": "HS256", "typ": "JWT", "kid": issuer.kid})
        + "."
        + part({"iss": issuer.issuer, "aud": issuer.audience, "sub": "mallory", "exp": now + 300})
    )
    signature = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + base64.urlsafe_b64encode(signature).decode().rstrip("=")


async def test_the_access_checks_hops_carry_the_trace_and_request_id(stack, start_gateway) -> None:
    stack.require("ingestion")
    spans = InMemorySpanExporter()
    gateway = await start_gateway(exporters=[spans])
    mine = await gateway.create_project()
    theirs = await gateway.create_project()
    reader = gateway.stub_as((await make_key(gateway.stub, (mine.name, READER))).api_key)
    spans.clear()
    request_id, trace_id = f"traced-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    # Allowed, then refused by the stack (never scanned): the authorization lookup of the
    # project is a hop of the request's trace.
    await refusal(
        reader.Locate(
            gateway_pb2.LocateRequest(project_id=mine.name, question="where are orders?"),
            metadata=(
                ("x-request-id", request_id),
                ("traceparent", f"00-{trace_id}-{'4' * 16}-01"),
            ),
        )
    )
    lookups = [
        s for s in spans.get_finished_spans() if s.name == "/locus.v1.IngestionService/GetProject"
    ]
    assert lookups, sorted(s.name for s in spans.get_finished_spans())
    for span in lookups:
        assert format(span.context.trace_id, "032x") == trace_id
        assert span.attributes is not None
        assert span.attributes["locus.request_id"] == request_id

    # A refusal's audit event carries the trace context of the refused call.
    denied_id, denied_trace = f"denied-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    await refusal(
        reader.Locate(
            gateway_pb2.LocateRequest(project_id=theirs.name, question="theirs?"),
            metadata=(
                ("x-request-id", denied_id),
                ("traceparent", f"00-{denied_trace}-{'5' * 16}-01"),
            ),
        )
    )
    connection = await nats.connect(stack.nats_url)
    try:
        subscription = await connection.jetstream().subscribe(
            f"{stack.subject_prefix}.access.denied", ordered_consumer=True
        )
        while True:
            message = await subscription.next_msg(timeout=10)
            if (message.headers or {}).get("Nats-Msg-Id") == f"access.denied:{denied_id}:Locate":
                break
    finally:
        await connection.close()
    assert denied_trace in (message.headers or {}).get("traceparent", "")


async def test_compute_impacts_hop_to_impact_carries_the_trace_and_request_id(
    stack, start_gateway
) -> None:
    stack.require("ingestion", "impact")
    spans = InMemorySpanExporter()
    gateway = await start_gateway(exporters=[spans])
    mine = await gateway.create_project()
    reader = gateway.stub_as((await make_key(gateway.stub, (mine.name, READER))).api_key)
    spans.clear()
    request_id, trace_id = f"impact-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    # Never scanned: impact answers NOT_FOUND, after the hop this test is about.
    error = await refusal(
        reader.ComputeImpact(
            impact_pb2.ComputeImpactRequest(project_id=mine.name, seed_node_ids=["n_" + "0" * 30]),
            metadata=(
                ("x-request-id", request_id),
                ("traceparent", f"00-{trace_id}-{'6' * 16}-01"),
            ),
        )
    )
    assert error.code() == grpc.StatusCode.NOT_FOUND, error.details()
    assert "scan the project first" in (error.details() or "")
    hops = [s for s in spans.get_finished_spans() if s.name == "/locus.v1.ImpactService/Compute"]
    assert hops, sorted(s.name for s in spans.get_finished_spans())
    for span in hops:
        assert format(span.context.trace_id, "032x") == trace_id
        assert span.attributes is not None
        assert span.attributes["locus.request_id"] == request_id
