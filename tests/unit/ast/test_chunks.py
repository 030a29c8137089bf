import hashlib
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from locus.ast.domain import Chunk, ChunkingPolicy, FileAnalysis, extract
from locus.ast.domain.chunking import plan_parts

pytestmark = pytest.mark.unit

AnalyseFile = Callable[[str], FileAnalysis]


def layout(chunks: tuple[Chunk, ...]) -> list[tuple[str, str | None, int, int]]:
    return [(c.kind, c.symbol_qualified_name, c.start_line, c.end_line) for c in chunks]


def source_lines(source: bytes, start_line: int, end_line: int) -> str:
    return "\n".join(source.decode().split("\n")[start_line - 1 : end_line])


def test_client_chunks_one_per_function_and_method_plus_class_header_and_module_runs(
    analyse_uploads_file: AnalyseFile,
) -> None:
    chunks = analyse_uploads_file("client.py").chunks

    client = "uploads.client.UploadClient"
    assert layout(chunks) == [
        ("module", "uploads.client", 1, 10),
        ("function", "uploads.client.traced", 13, 20),
        ("class_header", client, 23, 61),
        ("method", f"{client}.__init__", 31, 32),
        ("method", f"{client}.from_environment", 34, 36),
        ("method", f"{client}.default_endpoint", 38, 40),
        ("method", f"{client}.upload", 42, 51),
        ("method", f"{client}._retry", 53, 58),
        ("method", f"{client}._send", 60, 61),
        ("module", "uploads.client", 64, 64),
    ]
    assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks)))


def test_exact_chunks_reproduce_their_source_lines(analyse_uploads_file: AnalyseFile) -> None:
    data = (Path(__file__).parent / "fixtures" / "uploads" / "client.py").read_bytes()

    for chunk in analyse_uploads_file("client.py").chunks:
        if chunk.kind != "class_header":
            assert chunk.text == source_lines(data, chunk.start_line, chunk.end_line)
        assert chunk.content_sha256 == hashlib.sha256(chunk.text.encode()).hexdigest()


def test_nested_functions_stay_inside_the_enclosing_functions_chunk(
    analyse_uploads_file: AnalyseFile,
) -> None:
    chunks = analyse_uploads_file("client.py").chunks

    assert not [c for c in chunks if c.symbol_qualified_name == "uploads.client.traced.wrapper"]
    traced = next(c for c in chunks if c.symbol_qualified_name == "uploads.client.traced")
    assert "    def wrapper(*args: object) -> bool:\n" in traced.text
    assert traced.text.endswith("    return wrapper")


def test_decorated_method_chunk_starts_at_the_decorator(analyse_uploads_file: AnalyseFile) -> None:
    chunks = analyse_uploads_file("client.py").chunks

    upload = next(
        c for c in chunks if c.symbol_qualified_name == "uploads.client.UploadClient.upload"
    )
    assert upload.text.startswith("    @traced\n    def upload(\n")


def test_class_header_is_an_outline_of_class_statements_and_method_stubs(
    analyse_uploads_file: AnalyseFile,
) -> None:
    header = next(c for c in analyse_uploads_file("client.py").chunks if c.kind == "class_header")

    assert header.text == (
        "class UploadClient:\n"
        '    """Sends files to remote storage.\n'
        "\n"
        "    Retries transient failures.\n"
        '    """\n'
        "\n"
        "    timeout_seconds = 30\n"
        "\n"
        "    def __init__(self, endpoint: str) -> None: ...\n"
        "\n"
        "    @classmethod\n"
        '    def from_environment(cls) -> "UploadClient": ...\n'
        "\n"
        "    @staticmethod\n"
        "    def default_endpoint() -> str: ...\n"
        "\n"
        "    @traced\n"
        "    def upload(\n"
        "        self,\n"
        "        path: str,\n"
        "        attempts: int = 3,  # callers rarely need more\n"
        "    ) -> bool: ...\n"
        "\n"
        "    def _retry(self, path: str, attempts: int) -> bool: ...\n"
        "\n"
        "    def _send(self, path: str, attempt: int) -> bool: ..."
    )
    assert "self.endpoint = endpoint" not in header.text


def test_module_chunks_are_contiguous_runs_of_top_level_code(
    analyse_uploads_file: AnalyseFile,
) -> None:
    chunks = analyse_uploads_file("policy.py").chunks

    assert layout(chunks) == [
        ("module", "uploads.policy", 1, 4),
        ("function", "uploads.policy.enforce_retry_limit", 7, 12),
        ("function", "uploads.policy.backoff_for", 15, 16),
    ]
    assert chunks[0].text == (
        '"""Retry policy shared by every upload client."""\n'
        "\n"
        "RETRY_LIMIT = 3\n"
        "BACKOFF_SECONDS = 0.5"
    )


def test_definitions_under_control_flow_stay_in_the_surrounding_chunk() -> None:
    source = b"""import sys

if sys.version_info >= (3, 12):
    def compat():
        return 12
else:
    def compat():
        return 11


class Base:
    if True:
        def hidden(self):
            pass
"""
    analysis = extract("compat.py", source, "python")

    assert layout(analysis.chunks) == [
        ("module", "compat", 1, 8),
        ("class_header", "compat.Base", 11, 14),
    ]
    assert "def hidden(self):\n            pass" in analysis.chunks[1].text


def long_function_source() -> bytes:
    return b"""def process(items):
    total = 0
    for item in items:
        total += item
        total *= 2
    if total > 100:
        total = 100
        print("capped")
    values = [
        1,
        2,
    ]
    return total + sum(values)
"""


def test_long_function_splits_at_statement_boundaries_with_overlap() -> None:
    source = long_function_source()
    policy = ChunkingPolicy(max_lines=6, max_chars=10_000, overlap_lines=1)

    chunks = extract("batch.py", source, "python", chunk_settings=policy).chunks

    assert layout(chunks) == [
        ("function", "batch.process", 1, 5),
        ("function", "batch.process", 5, 8),
        ("function", "batch.process", 8, 13),
    ]
    for chunk in chunks:
        assert chunk.text == source_lines(source, chunk.start_line, chunk.end_line)
        assert chunk.end_line - chunk.start_line + 1 <= policy.max_lines


def test_split_parts_cover_every_line_and_new_content_starts_at_a_statement() -> None:
    source = long_function_source()
    statement_starts = {2, 3, 6, 9, 13}
    policy = ChunkingPolicy(max_lines=5, max_chars=10_000, overlap_lines=2)

    chunks = extract("batch.py", source, "python", chunk_settings=policy).chunks

    covered: set[int] = set()
    for previous, chunk in itertools.pairwise(chunks):
        assert chunk.start_line <= previous.end_line + 1  # no gap
        assert previous.end_line + 1 in statement_starts
    for chunk in chunks:
        covered |= set(range(chunk.start_line, chunk.end_line + 1))
    assert covered == set(range(1, 14))
    assert {chunk.symbol_qualified_name for chunk in chunks} == {"batch.process"}


def test_a_statement_longer_than_the_limit_is_split_by_lines_with_overlap() -> None:
    items = "".join(f"        {index},\n" for index in range(20))
    source = f"def table():\n    return [\n{items}    ]\n".encode()
    policy = ChunkingPolicy(max_lines=8, max_chars=10_000, overlap_lines=2)

    chunks = extract("table.py", source, "python", chunk_settings=policy).chunks

    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 8), (7, 14), (13, 20), (19, 23)]
    for chunk in chunks:
        assert chunk.text == source_lines(source, chunk.start_line, chunk.end_line)


def test_character_limit_splits_too_and_never_cuts_a_line() -> None:
    statements = "".join(f"    value_{index} = {'x' * 40!r}\n" for index in range(6))
    source = f"def constants():\n{statements}".encode()
    policy = ChunkingPolicy(max_lines=60, max_chars=120, overlap_lines=0)

    chunks = extract("consts.py", source, "python", chunk_settings=policy).chunks

    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (3, 4), (5, 6), (7, 7)]
    assert all(len(chunk.text) <= policy.max_chars for chunk in chunks)


def test_plan_parts_keeps_a_line_longer_than_the_limit_whole() -> None:
    policy = ChunkingPolicy(max_lines=10, max_chars=100, overlap_lines=1)

    assert plan_parts([10, 5000, 10], {1, 2}, policy) == [(0, 1), (1, 2), (2, 3)]


def test_long_module_runs_split_at_top_level_statements() -> None:
    source = "".join(f"SETTING_{index} = {index}\n" for index in range(7)).encode()
    policy = ChunkingPolicy(max_lines=3, max_chars=10_000, overlap_lines=1)

    chunks = extract("settings.py", source, "python", chunk_settings=policy).chunks

    assert layout(chunks) == [
        ("module", "settings", 1, 3),
        ("module", "settings", 3, 5),
        ("module", "settings", 5, 7),
    ]


def test_comments_above_a_statement_start_its_part() -> None:
    source = b"""def steps():
    first = 1
    second = 2
    # the third step
    # needs explaining
    third = 3
    return first + second + third
"""
    policy = ChunkingPolicy(max_lines=4, max_chars=10_000, overlap_lines=0)

    chunks = extract("steps.py", source, "python", chunk_settings=policy).chunks

    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 3), (4, 7)]


def test_chunking_policy_rejects_an_overlap_that_cannot_make_progress() -> None:
    with pytest.raises(ValueError, match="overlap_lines"):
        ChunkingPolicy(max_lines=5, overlap_lines=5)
    with pytest.raises(ValueError, match="at least 1"):
        ChunkingPolicy(max_chars=0)
