"""A pasted log is reduced to what matters before it is searched: the opening, the traceback
and error lines, the prose; repeated lines once; a short question is left as written."""

from __future__ import annotations

import hashlib

import pytest

from locus.gateway.domain.question_cues import extract_cues
from locus.gateway.domain.question_digest import DIGEST_CHARS, digest_question

pytestmark = pytest.mark.unit

TITLE = "Export to parquet crashes when a column is empty"
TRACEBACK = """Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/tablekit/export.py", line 88, in write_parquet
    schema = infer_schema(frame)
  File "/usr/lib/python3/site-packages/tablekit/schema.py", line 41, in infer_schema
    kind = column.dtype.kind
AttributeError: 'NoneType' object has no attribute 'dtype'"""


def long_log() -> str:
    noise = "\n".join(
        f"2024-05-01 12:{i % 60:02d}:{i % 57:02d} INFO worker-{i % 7} processed batch {i} "
        f"in {i % 13} ms"
        for i in range(3000)
    )
    progress = "\n".join(f"[{'#' * (i % 40):<40}] {i}%" for i in range(500))
    prose = "I expected the exporter to skip the empty column instead of crashing the whole job."
    return f"{TITLE}\n\n{noise}\n{progress}\n{TRACEBACK}\n{noise}\n{prose}\n"


def test_a_question_within_the_budget_is_left_as_written() -> None:
    question = f"{TITLE}\n\n{TRACEBACK}"
    assert digest_question(question) == question


def test_a_long_log_keeps_its_title_traceback_error_and_prose_within_the_budget() -> None:
    question = long_log()
    assert len(question) > 5 * DIGEST_CHARS
    digest = digest_question(question)
    assert len(digest) <= DIGEST_CHARS
    assert digest.startswith(TITLE)
    for line in TRACEBACK.splitlines():
        assert line in digest
    assert "skip the empty column instead of crashing" in digest
    # Lines equal up to numbers are kept once: the repeated INFO line does not fill the budget.
    assert digest.count("INFO worker") <= 60


def test_the_cues_of_the_digest_name_the_frames_of_the_log() -> None:
    cues = extract_cues(digest_question(long_log()))
    assert {f.function for f in cues.frames} >= {"write_parquet", "infer_schema"}
    assert "infer_schema" in cues.lookup_names(16)


def test_a_line_too_long_is_cut() -> None:
    blob = "A" * 50_000
    digest = digest_question(f"{TITLE}\n{blob}\n{TRACEBACK}")
    assert len(digest) <= DIGEST_CHARS
    assert "AttributeError" in digest


def test_prose_in_chinese_outranks_unique_noise_when_the_log_is_cut() -> None:
    # Thousands of distinct machine lines (hashes) overflow the budget; the reporter's own
    # sentence, written in Chinese, is prose and is kept before them.
    noise = "\n".join(
        f"cache key {hashlib.sha256(str(i).encode()).hexdigest()}" for i in range(2000)
    )
    prose = "导出到 parquet 时如果某一列为空，整个任务就会崩溃，希望跳过空列。"
    digest = digest_question(f"{TITLE}\n{noise}\n{prose}\n")
    assert len(digest) <= DIGEST_CHARS
    assert prose in digest
    assert digest.count("cache key") < 2000
