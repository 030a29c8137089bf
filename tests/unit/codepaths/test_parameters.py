"""Reading a callable's parameters from its signature as written (overload names, folding a
declaration into its definition, matching an override to the base overloads of its arity)."""

import pytest

from locus.codepaths.parameters import arity, parameter_list

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("signature", "name", "expected"),
    [
        ("public <T> T readValue(JsonParser p, Class<T> valueType)", "readValue", 2),
        ("void put(Map<K, V> entries, int (*cb)(int, int))", "put", 2),
        ("size_t ZSTD_compress(void* dst, size_t cap, const void* src)", "ZSTD_compress", 3),
        ("int run(void)", "run", 1),  # C's `(void)` reads as written: a declaration matches it
        ("fn len(&self) -> usize", "len", 1),
        ("def close()", "close", 0),
        ("Parser(int depth)", "~Parser", 1),  # no `name(`: the first list
        ("class Shape", "Shape", None),
    ],
)
def test_arity_counts_the_top_level_parameters_after_the_name(
    signature: str, name: str, expected: int | None
) -> None:
    assert arity(signature, name) == expected


def test_the_parameter_list_after_the_name_keeps_its_brackets_balanced() -> None:
    signature = "public <T> T readValue(JsonParser p, Class<T> type) throws IOException"
    assert parameter_list(signature, "readValue") == "(JsonParser p, Class<T> type)"
    assert parameter_list("int f(int (*cb)(int))", "f") == "(int (*cb)(int))"
    # A name that only ends another word is not the callable's: `unread(` is not `read(`.
    assert parameter_list("void unread(int n)", "read") == ""
