"""Named constants are symbols (kind constant) in the languages that declare them: found by name
with their doc comment, no chunk of their own, and invisible to call resolution (a call names
what it named before they were symbols)."""

import pytest
from language_fixtures import relation_triples

from locus.ast.domain import extract

pytestmark = pytest.mark.unit

CASES = [
    (
        "go",
        "p/retry.go",
        b"package p\n\n"
        b"// DefaultRetries is how often an upload is tried.\nconst DefaultRetries = 3\n"
        b"\nconst (\n\t// Idle is the first state.\n\tIdle = iota\n\tBusy\n)\n\n"
        b"func f() int {\n\tconst local = 1\n\treturn local\n}\n",
        {
            "p.DefaultRetries": (4, "DefaultRetries is how often an upload is tried."),
            "p.Idle": (8, "Idle is the first state."),
            "p.Busy": (9, None),
        },
    ),
    (
        "rust",
        "src/lib.rs",
        b"/// How often.\npub const MAX_RETRIES: u32 = 3;\n"
        b'static NAME: &str = "x";\npub struct Client;\n'
        b"impl Client {\n    /// Per call.\n    pub const LIMIT: usize = 4;\n    fn f() {\n"
        b"        const L: u8 = 1;\n    }\n}\n",
        {
            "crate::MAX_RETRIES": (2, "How often."),
            "crate::NAME": (3, None),
            "crate::Client::LIMIT": (7, "Per call."),
        },
    ),
    (
        "java",
        "src/main/java/a/Uploads.java",
        b"package a;\n\nclass Uploads {\n"
        b"  /** How often. */\n  public static final int MAX_RETRIES = 3;\n"
        b"  private final int x = 1;\n  enum State { IDLE, BUSY }\n}\n",
        {
            "a.Uploads.MAX_RETRIES": (5, "How often."),
            "a.Uploads.State.IDLE": (7, None),
            "a.Uploads.State.BUSY": (7, None),
        },
    ),
    (
        "kotlin",
        "src/main/kotlin/a/Uploads.kt",
        b'package a\n\n/** How often. */\nconst val MAX_RETRIES = 3\n\nval defaultName = "x"\n\n'
        b"object Limits {\n    const val LIMIT = 4\n}\n\n"
        b"fun f(): Int {\n    val local = 1\n    return local\n}\n",
        {
            "a.MAX_RETRIES": (4, "How often."),
            "a.defaultName": (6, None),
            "a.Limits.LIMIT": (9, None),
        },
    ),
    (
        "typescript",
        "src/retry.ts",
        b"/** How often. */\nexport const MAX_RETRIES = 3;\nconst LIMITS = { upload: 2 };\n"
        b"const makeClient = () => 1;\nconst lower = 3;\n",
        {"src/retry.MAX_RETRIES": (2, "How often."), "src/retry.LIMITS": (3, None)},
    ),
    (
        "python",
        "uploads/policy.py",
        b'"""Upload policy."""\nMAX_RETRIES = 3\nTIMEOUT: float = 2.0\nT = TypeVar("T")\n'
        b"x = 1\n\n\n"
        b"def f():\n    LOCAL = 1\n    return LOCAL\n",
        {"uploads.policy.MAX_RETRIES": (2, None), "uploads.policy.TIMEOUT": (3, None)},
    ),
    (
        "c",
        "lib/zstd.h",
        b"/*! The default level. */\n#define ZSTD_CLEVEL_DEFAULT 3\n#ifndef ZSTD_H\n"
        b"#define ZSTD_H\n#endif\n"
        b"#define SQUARE(x) ((x) * (x))\nint level(void) { return ZSTD_CLEVEL_DEFAULT; }\n",
        {"ZSTD_CLEVEL_DEFAULT": (2, "The default level.")},
    ),
]


@pytest.mark.parametrize(("language", "path", "source", "expected"), CASES)
def test_named_constants_are_symbols_without_chunks(
    language: str, path: str, source: bytes, expected: dict[str, tuple[int, str | None]]
) -> None:
    analysis = extract(path, source, language)
    assert analysis.parse_errors == 0
    constants = {s.qualified_name: s for s in analysis.symbols if s.kind == "constant"}
    # Exactly these: no local, no lower-case module value in JS/TS or Python, no guard, no
    # function-like macro, no single-letter Python name.
    assert {name: (s.start_line, s.docstring) for name, s in constants.items()} == expected
    assert not {c.symbol_qualified_name for c in analysis.chunks} & set(expected)


def test_calls_name_what_they_named_before_constants_were_symbols() -> None:
    # gson's TypeAdapters: a field `URI` beside `new URI(...)`; a typed static field's calls.
    source = b"""package a;

import java.net.URI;
import java.util.logging.Logger;

class Adapters {
  private static final Logger LOG = Logger.getLogger("a");
  public static final Adapter URI = new Adapter() {
    Object read(String s) {
      LOG.info(s);
      return new URI(s);
    }
  };
}
"""
    analysis = extract("src/main/java/a/Adapters.java", source, "java")
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("URI", "java.net.URI") in calls
    assert ("LOG.info", "java.util.logging.Logger.info") in calls
    # A constant calls nothing: its initializer's calls are its type's module's, as before.
    sources = {source for source, _, _ in relation_triples(analysis, "calls")}
    assert not {"a.Adapters.LOG", "a.Adapters.URI"} & sources
