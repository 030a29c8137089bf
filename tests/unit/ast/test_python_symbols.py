from collections.abc import Callable

import pytest

from locus.ast.domain import FileAnalysis, Symbol, extract

pytestmark = pytest.mark.unit

AnalyseFile = Callable[[str], FileAnalysis]


def by_name(analysis: FileAnalysis) -> dict[str, Symbol]:
    return {symbol.qualified_name: symbol for symbol in analysis.symbols}


def test_client_symbols_have_exact_kinds_parents_and_line_ranges(
    analyse_uploads_file: AnalyseFile,
) -> None:
    analysis = analyse_uploads_file("client.py")

    assert analysis.module_name == "uploads.client"
    assert [
        (s.qualified_name, s.kind, s.start_line, s.end_line, s.parent_qualified_name)
        for s in analysis.symbols
    ] == [
        ("uploads.client", "module", 1, 64, None),
        ("uploads.client.LOGGER", "constant", 10, 10, "uploads.client"),  # module UPPER_CASE
        ("uploads.client.traced", "function", 13, 20, "uploads.client"),
        ("uploads.client.traced.wrapper", "function", 16, 18, "uploads.client.traced"),
        ("uploads.client.UploadClient", "class", 23, 61, "uploads.client"),
        ("uploads.client.UploadClient.__init__", "method", 31, 32, "uploads.client.UploadClient"),
        (
            "uploads.client.UploadClient.from_environment",
            "method",
            34,
            36,
            "uploads.client.UploadClient",
        ),
        (
            "uploads.client.UploadClient.default_endpoint",
            "method",
            38,
            40,
            "uploads.client.UploadClient",
        ),
        ("uploads.client.UploadClient.upload", "method", 42, 51, "uploads.client.UploadClient"),
        ("uploads.client.UploadClient._retry", "method", 53, 58, "uploads.client.UploadClient"),
        ("uploads.client.UploadClient._send", "method", 60, 61, "uploads.client.UploadClient"),
        ("uploads.client.DEFAULT_CLIENT", "constant", 64, 64, "uploads.client"),
    ]


def test_scope_and_short_names_are_relative_to_the_file(analyse_uploads_file: AnalyseFile) -> None:
    symbols = by_name(analyse_uploads_file("client.py"))

    module = symbols["uploads.client"]
    method = symbols["uploads.client.UploadClient.upload"]
    nested = symbols["uploads.client.traced.wrapper"]
    assert (module.scope_name, module.name) == ("", "client")
    assert (method.scope_name, method.name) == ("UploadClient.upload", "upload")
    assert (nested.scope_name, nested.name) == ("traced.wrapper", "wrapper")


def test_decorated_definitions_start_at_their_first_decorator() -> None:
    source = b"""import functools


@functools.cache
@staticmethod
def cached() -> int:
    return 1


@dataclass
class Point:
    x: int
"""
    symbols = by_name(extract("geometry.py", source, "python"))

    assert (symbols["geometry.cached"].start_line, symbols["geometry.cached"].end_line) == (4, 7)
    assert (symbols["geometry.Point"].start_line, symbols["geometry.Point"].end_line) == (10, 12)


def test_signatures_are_headers_up_to_the_colon_with_whitespace_normalised(
    analyse_uploads_file: AnalyseFile,
) -> None:
    symbols = by_name(analyse_uploads_file("client.py"))

    assert symbols["uploads.client.UploadClient.upload"].signature == (
        "def upload(self, path: str, attempts: int = 3) -> bool"
    )
    assert symbols["uploads.client.traced"].signature == (
        "def traced(operation: Callable[..., bool]) -> Callable[..., bool]"
    )
    assert symbols["uploads.client.UploadClient"].signature == "class UploadClient"
    assert symbols["uploads.client"].signature == ""


def test_class_signature_keeps_bases_and_keywords_and_async_defs_keep_async() -> None:
    source = b"""class Uploader(Base, metaclass=Meta):
    async def retry(self,   attempts: int = 3,
                    *, jitter=(1,)) -> bool:
        return True
"""
    symbols = by_name(extract("transfer.py", source, "python"))

    assert symbols["transfer.Uploader"].signature == "class Uploader(Base, metaclass=Meta)"
    assert symbols["transfer.Uploader.retry"].signature == (
        "async def retry(self, attempts: int = 3, *, jitter=(1,)) -> bool"
    )


def test_docstrings_are_unquoted_and_dedented(analyse_uploads_file: AnalyseFile) -> None:
    symbols = by_name(analyse_uploads_file("client.py"))

    assert symbols["uploads.client"].docstring == "Upload client with bounded retries."
    assert symbols["uploads.client.UploadClient"].docstring == (
        "Sends files to remote storage.\n\nRetries transient failures."
    )
    assert symbols["uploads.client.UploadClient.upload"].docstring == (
        "Upload one file, retrying on failure."
    )
    assert symbols["uploads.client.UploadClient._retry"].docstring is None


def test_docstring_literal_forms_are_cleaned_like_inspect_cleandoc() -> None:
    source = b'''# a leading comment does not hide the module docstring
r"""Raw \\d module docstring."""


def single() -> None:
    'Single quoted.'


def indented() -> None:
    """Summary line.

        Indented detail.
    Back at the margin.
    """


def not_first() -> None:
    value = 1
    """Not a docstring: not the first statement."""
'''
    symbols = by_name(extract("docs.py", source, "python"))

    assert symbols["docs"].docstring == "Raw \\d module docstring."
    assert symbols["docs.single"].docstring == "Single quoted."
    assert symbols["docs.indented"].docstring == (
        "Summary line.\n\n    Indented detail.\nBack at the margin."
    )
    assert symbols["docs.not_first"].docstring is None


def test_nested_functions_belong_to_their_function_and_classes_in_functions_have_methods() -> None:
    source = b"""def outer():
    def inner():
        def innermost():
            pass

    class Local:
        def run(self):
            pass
"""
    symbols = by_name(extract("nesting.py", source, "python"))

    assert [(s.qualified_name, s.kind, s.parent_qualified_name) for s in symbols.values()] == [
        ("nesting", "module", None),
        ("nesting.outer", "function", "nesting"),
        ("nesting.outer.inner", "function", "nesting.outer"),
        ("nesting.outer.inner.innermost", "function", "nesting.outer.inner"),
        ("nesting.outer.Local", "class", "nesting.outer"),
        ("nesting.outer.Local.run", "method", "nesting.outer.Local"),
    ]


def test_redefinitions_fold_into_the_first_so_qualified_names_stay_unique() -> None:
    source = b"""class Box:
    @property
    def size(self) -> int:
        return self._size

    @size.setter
    def size(self, value: int) -> None:
        self._size = value
"""
    analysis = extract("box.py", source, "python")

    names = [symbol.qualified_name for symbol in analysis.symbols]
    assert names == ["box", "box.Box", "box.Box.size"]
    assert by_name(analysis)["box.Box.size"].start_line == 2
    method_chunks = [chunk for chunk in analysis.chunks if chunk.kind == "method"]
    assert [(c.symbol_qualified_name, c.start_line) for c in method_chunks] == [
        ("box.Box.size", 2),
        ("box.Box.size", 6),
    ]


def test_module_symbol_covers_the_whole_file_and_at_least_one_line() -> None:
    assert extract("empty.py", b"", "python").symbols[0].end_line == 1
    assert extract("one.py", b"x = 1", "python").symbols[0].end_line == 1
    assert extract("two.py", b"x = 1\ny = 2\n", "python").symbols[0].end_line == 2
    assert extract("gap.py", b"x = 1\n\n\n", "python").symbols[0].end_line == 3
