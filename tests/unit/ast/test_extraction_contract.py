from collections.abc import Callable

import pytest

from locus.ast.domain import (
    FileAnalysis,
    UndecodableSource,
    UnsupportedLanguage,
    extract,
    supported_languages,
)

pytestmark = pytest.mark.unit

AnalyseFile = Callable[[str], FileAnalysis]

BROKEN = b"""import os


def broken(:
    return os.getcwd()


def healthy(path):
    return os.path.exists(path)


class Survivor:
    def method(self):
        return healthy(".")
"""


def test_same_bytes_give_an_identical_analysis(analyse_uploads_file: AnalyseFile) -> None:
    first = analyse_uploads_file("client.py")
    second = analyse_uploads_file("client.py")

    assert first == second
    assert hash(first.chunks) == hash(second.chunks)


def test_a_file_with_syntax_errors_still_yields_what_was_recovered() -> None:
    analysis = extract("repair.py", BROKEN, "python")

    names = {symbol.qualified_name for symbol in analysis.symbols}
    assert {"repair.healthy", "repair.Survivor", "repair.Survivor.method"} <= names
    assert analysis.parse_errors >= 1
    assert (
        "calls",
        "repair.Survivor.method",
        "healthy",
        "repair.healthy",
    ) in {
        (r.kind, r.source_qualified_name, r.target_name, r.target_qualified_name)
        for r in analysis.relations
    }
    healthy = next(c for c in analysis.chunks if c.symbol_qualified_name == "repair.healthy")
    assert (healthy.start_line, healthy.end_line) == (8, 9)


def test_a_clean_file_has_no_parse_errors(analyse_uploads_file: AnalyseFile) -> None:
    assert analyse_uploads_file("client.py").parse_errors == 0


def test_missing_tokens_count_as_parse_errors() -> None:
    assert extract("call.py", b"print(1\n", "python").parse_errors >= 1


def test_unsupported_language_is_a_domain_error_naming_the_supported_ones() -> None:
    with pytest.raises(UnsupportedLanguage, match="cobol") as raised:
        extract("legacy.cbl", b"IDENTIFICATION DIVISION.\n", "cobol")

    assert raised.value.supported == supported_languages()
    assert "python" in supported_languages()


def test_source_that_is_not_utf8_is_rejected_instead_of_guessed() -> None:
    with pytest.raises(UndecodableSource, match=r"latin\.py"):
        extract("latin.py", "name = 'café'\n".encode("latin-1"), "python")


def test_windows_line_endings_keep_line_numbers_and_clean_docstrings() -> None:
    source = (
        b'def greet():\r\n    """Say hello.\r\n\r\n    Politely.\r\n    """\r\n    return 1\r\n'
    )

    analysis = extract("greet.py", source, "python")

    greet = analysis.symbols[1]
    assert (greet.start_line, greet.end_line) == (1, 6)
    assert greet.docstring == "Say hello.\n\nPolitely."
    assert analysis.chunks[0].text.split("\n")[0] == "def greet():\r"


def test_a_byte_order_mark_does_not_leak_into_text() -> None:
    analysis = extract("bom.py", b'\xef\xbb\xbf"""Doc."""\nVALUE = 1\n', "python")

    assert analysis.symbols[0].docstring == "Doc."
    assert analysis.chunks[0].text == '"""Doc."""\nVALUE = 1'
    assert analysis.parse_errors == 0


def test_an_empty_file_has_only_its_module_symbol() -> None:
    analysis = extract("pkg/__init__.py", b"", "python")

    assert analysis.module_name == "pkg"
    assert [(s.qualified_name, s.start_line, s.end_line) for s in analysis.symbols] == [
        ("pkg", 1, 1)
    ]
    assert analysis.relations == ()
    assert analysis.chunks == ()
