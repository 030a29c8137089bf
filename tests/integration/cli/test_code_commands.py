"""`locus read`, `locus outline`, `locus request show` and `locus feedback list` as processes
against a scripted Gateway on a real gRPC port (--gateway): what each command sends, and what
it prints (plain and --json)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from scripted_gateway import LocusRunner, cli_environment, locus_runner, serve_gateway

from locus.v1 import ast_pb2, common_pb2, gateway_pb2, gateway_pb2_grpc, retrieval_pb2

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

LINES = ["def charge_card(customer_id, amount):", '    """Charge a card."""', "    return amount"]


class ScriptedGateway(gateway_pb2_grpc.GatewayServicer):
    def __init__(self) -> None:
        self.requests: list[object] = []

    async def ReadFile(
        self, request: gateway_pb2.ReadFileRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ReadFileResponse:
        self.requests.append(request)
        if request.relative_path.startswith(".."):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "must not contain '..'")
        first = request.start_line or 1
        last = request.end_line or len(LINES)
        return gateway_pb2.ReadFileResponse(
            project_id="p_1",
            snapshot_id="snap_1",
            relative_path=request.relative_path,
            language="python",
            start_line=first,
            end_line=last,
            total_lines=len(LINES),
            lines=[
                gateway_pb2.NumberedLine(number=n, text=LINES[n - 1])
                for n in range(first, last + 1)
            ],
        )

    async def GetFileOutline(
        self, request: ast_pb2.GetFileOutlineRequest, context: grpc.aio.ServicerContext
    ) -> ast_pb2.GetFileOutlineResponse:
        self.requests.append(request)
        symbol = common_pb2.Symbol(
            qualified_name="shop.payments.charge_card",
            name="charge_card",
            kind=common_pb2.SYMBOL_KIND_FUNCTION,
            location=common_pb2.CodeLocation(
                relative_path=request.relative_path, start_line=1, end_line=3
            ),
        )
        broken = request.relative_path.endswith("broken.py")
        return ast_pb2.GetFileOutlineResponse(symbols=[symbol], parse_errors=2 if broken else 0)

    async def GetRequest(
        self, request: gateway_pb2.GetRequestRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.RequestRecord:
        hit = retrieval_pb2.SearchHit(score=0.5)
        hit.chunk.chunk_id = "c1"
        hit.chunk.location.relative_path = "pay.py"
        record = gateway_pb2.RequestRecord(
            request_id=request.request_id,
            kind="ask",
            status="completed",
            question="how are cards charged?",
            principal="key:abc",
            trace_id="0" * 32,
            retrieved=[hit],
            feedback=[gateway_pb2.FeedbackRecord(feedback_id="fb_1", rating=5)],
        )
        record.timings_ms["answer"] = 12.5
        return record

    async def ListFeedback(
        self, request: gateway_pb2.ListFeedbackRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListFeedbackResponse:
        self.requests.append(request)
        if not request.page.page_token:
            return gateway_pb2.ListFeedbackResponse(
                feedback=[gateway_pb2.FeedbackRecord(feedback_id="fb_2", rating=4)],
                next_page_token="next",
            )
        return gateway_pb2.ListFeedbackResponse(
            feedback=[gateway_pb2.FeedbackRecord(feedback_id="fb_1", rating=2, comment="off")]
        )


@pytest.fixture
async def gateway() -> AsyncIterator[tuple[ScriptedGateway, str]]:
    servicer = ScriptedGateway()
    async with serve_gateway(servicer) as address:
        yield servicer, address


@pytest.fixture
def locus(tmp_path: Path, gateway: tuple[ScriptedGateway, str]) -> LocusRunner:
    return locus_runner(cli_environment(tmp_path), gateway[1])


async def test_read_prints_the_numbered_lines_asked_for(gateway, locus) -> None:
    servicer, _ = gateway
    code, out, err = await locus("read", "shop", "src/pay.py:2-3")
    assert code == 0, err
    sent = servicer.requests[-1]
    assert (sent.project_id, sent.relative_path, sent.start_line, sent.end_line) == (
        "shop",
        "src/pay.py",
        2,
        3,
    )
    assert out.startswith("**src/pay.py:2-3**\n```python\n")
    assert f"2  {LINES[1]}\n3  {LINES[2]}\n```\n" in out

    code, out, err = await locus("read", "shop", "src/pay.py", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["lines"] == [{"number": n, "text": t} for n, t in enumerate(LINES, start=1)]
    assert (data["path"], data["language"], data["total_lines"]) == ("src/pay.py", "python", 3)


async def test_read_reports_a_refused_path(locus) -> None:
    code, _, err = await locus("read", "shop", "../etc/passwd")
    assert code == 2
    assert "'..'" in err


async def test_outline_lists_the_files_symbols(gateway, locus) -> None:
    code, out, err = await locus("outline", "shop", "src/pay.py", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [s["qualified_name"] for s in data["symbols"]] == ["shop.payments.charge_card"]
    code, out, err = await locus("outline", "shop", "src/pay.py")
    assert code == 0, err
    assert "charge_card" in out


async def test_outline_warns_of_a_file_that_parsed_with_syntax_errors(locus) -> None:
    code, out, err = await locus("outline", "shop", "src/broken.py")
    assert code == 0, err
    assert "src/broken.py parsed with 2 syntax error(s)" in " ".join(out.split())
    code, out, err = await locus("outline", "shop", "src/broken.py", "--json")
    assert json.loads(out)["parse_errors"] == 2
    code, out, err = await locus("outline", "shop", "src/pay.py")
    assert "syntax error" not in out


async def test_request_show_prints_what_the_log_kept(locus) -> None:
    code, out, err = await locus("request", "show", "r_1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["request_id"] == "r_1"
    assert data["principal"] == "key:abc"
    assert data["retrieved"][0]["chunk_id"] == "c1"
    assert data["timings_ms"] == {"answer": 12.5}
    assert data["feedback"][0]["rating"] == 5
    code, out, err = await locus("request", "show", "r_1")
    assert code == 0, err
    assert "how are cards charged?" in out
    assert "feedback 5/5" in out


async def test_feedback_list_follows_the_pages(gateway, locus) -> None:
    servicer, _ = gateway
    code, out, err = await locus("feedback", "list", "--project", "shop", "--json")
    assert code == 0, err
    assert [f["feedback_id"] for f in json.loads(out)["feedback"]] == ["fb_2", "fb_1"]
    assert servicer.requests[-1].project_id == "shop"
