import hashlib

import pytest

from locus.ast.plain_text import line_windows, plain_text_analysis

pytestmark = pytest.mark.unit


def numbered(count: int, width: int = 10) -> str:
    return "".join(f"{index:0{width}d}\n" for index in range(1, count + 1))


def test_text_is_cut_into_consecutive_windows_of_max_lines() -> None:
    chunks = line_windows(numbered(130), max_lines=60, max_chars=100_000)

    assert [(c.ordinal, c.start_line, c.end_line) for c in chunks] == [
        (0, 1, 60),
        (1, 61, 120),
        (2, 121, 130),
    ]
    assert {c.kind for c in chunks} == {"fragment"}
    assert {c.symbol_qualified_name for c in chunks} == {None}
    assert chunks[2].text == numbered(130)[-11 * 10 :].rstrip("\n")
    assert chunks[0].content_sha256 == hashlib.sha256(chunks[0].text.encode()).hexdigest()


def test_long_lines_close_a_window_early_and_a_huge_line_stands_alone() -> None:
    text = "a" * 100 + "\n" + "b" * 100 + "\n" + "c" * 1000 + "\n" + "d" * 10 + "\n"

    chunks = line_windows(text, max_lines=60, max_chars=250)

    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (3, 3), (4, 4)]
    assert chunks[1].text == "c" * 1000


def test_blank_windows_are_dropped_and_numbering_stays_dense() -> None:
    text = "title\n" + "\n" * 5 + "  \n" * 5 + "end\n"

    chunks = line_windows(text, max_lines=5, max_chars=1000)

    assert [(c.ordinal, c.start_line, c.end_line, c.text) for c in chunks] == [
        (0, 1, 5, "title\n\n\n\n"),
        (1, 11, 12, "  \nend"),
    ]
    assert line_windows("", max_lines=5, max_chars=10) == ()
    assert line_windows("\n\n", max_lines=5, max_chars=10) == ()


def test_line_endings_are_kept_verbatim() -> None:
    [chunk] = line_windows("key: 1\r\nother: 2\r\n", max_lines=60, max_chars=1000)

    assert chunk.text == "key: 1\r\nother: 2\r"
    assert (chunk.start_line, chunk.end_line) == (1, 2)


def test_a_plain_text_analysis_has_only_chunks() -> None:
    analysis = plain_text_analysis("# Title\n\nBody.\n", "markdown", max_lines=60, max_chars=3000)

    assert analysis.language == "markdown"
    assert analysis.module_name == ""
    assert (analysis.symbols, analysis.relations, analysis.dependencies) == ((), (), ())
    assert [(c.start_line, c.end_line) for c in analysis.chunks] == [(1, 3)]
