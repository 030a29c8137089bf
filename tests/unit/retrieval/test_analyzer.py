"""The code-aware analyzer: identifiers split on case, underscores, digits and paths."""

from __future__ import annotations

from collections import Counter

import pytest

from locus.retrieval.domain.analyzer import (
    analyze,
    code_tokens,
    indexed_terms,
    light_stem,
    query_terms,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("spelling", ["HTTPClient", "HttpClient", "http_client", "httpClient"])
def test_identifier_spellings_share_parts_and_joined_form(spelling: str) -> None:
    assert analyze(spelling) == ["http", "client", "httpclient"]


def test_plain_words_meet_identifier_parts() -> None:
    assert set(analyze("http client")) <= set(analyze("HTTPClient"))


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        (
            "parseHTTPResponse2xx",
            ["parse", "pars", "http", "response", "respons", "2", "xx", "parsehttpresponse2xx"],
        ),
        ("utf8Decode", ["utf", "8", "decode", "decod", "utf8decode"]),
        ("services/retrieval/main.py", ["servic", "services", "retrieval", "main", "py"]),
        ("__init__", ["init"]),
        ("MAX_RETRIES", ["max", "retries", "retry", "maxretries"]),
        ("ÉtéHTTPServeur", ["été", "http", "serveur", "étéhttpserveur"]),
        ("a-b.c", ["a", "b", "c"]),
    ],
)
def test_splitting(text: str, tokens: list[str]) -> None:
    assert sorted(analyze(text)) == sorted(tokens)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("输入框", ["输入", "入框"]),
        ("框", ["框"]),
        ("[建议]input框太小", ["建议", "input", "框太", "太小"]),
        ("getUser用户名", ["get", "user", "用户", "户名"]),
        ("ファイルを開く", ["ファ", "ァイ", "イル", "ルを", "を開", "開く"]),
        ("파일을 열 수", ["파일", "일을", "열", "수"]),
        ("中文_v2", ["中文", "v", "2"]),
    ],
)
def test_chinese_japanese_and_korean_runs_become_overlapping_bigrams(
    text: str, tokens: list[str]
) -> None:
    assert analyze(text) == tokens


def test_a_chinese_report_and_the_comment_it_describes_share_terms() -> None:
    report = set(analyze("多行输入还是不方便，input框太小了"))
    comment = set(analyze("# 输入框的高度：多行输入时自动调整"))
    assert {"多行", "行输", "输入"} <= report & comment


def test_positions_and_offsets() -> None:
    tokens = code_tokens("x = UploadClient()")
    assert [(t.text, t.position) for t in tokens] == [
        ("x", 0),
        ("upload", 1),
        ("client", 2),
        ("uploadclient", 1),  # the joined form stands where the identifier starts
    ]
    upload = tokens[1]
    assert "x = UploadClient()"[upload.start : upload.end] == "Upload"


def test_overlong_runs_are_dropped() -> None:
    assert analyze("a" * 41) == []
    assert analyze("deadbeef" * 6 + " ok") == ["ok"]


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("uploading", "upload"),
        ("uploads", "upload"),
        ("retries", "retry"),
        ("parsed", "pars"),
        ("parse", "pars"),
        ("stopped", "stop"),
        ("class", "class"),
        ("status", "status"),
        ("process", "process"),
        ("bus", "bus"),
    ],
)
def test_light_stem(word: str, stem: str) -> None:
    assert light_stem(word) == stem


def test_query_terms_are_distinct_and_bounded() -> None:
    assert query_terms("Upload upload UPLOAD") == ["upload"]
    assert len(query_terms(" ".join(f"w{i}x" for i in range(1000)), limit=10)) == 10


@pytest.mark.parametrize(
    "text",
    [
        "class HTTPClient:\n    def get_retry_limit(self, uploads): return self._max_uploads",
        "résuméParser_v2 = ΔValue + parse(parsed, parses)  # running stopped",
        "# 输入框的高度，多行输入时自动调整 getUser用户名 ファイル",
        "x" * 60 + " short_name " + "aB" * 30,
        "",
        "    \n\t",
    ],
)
def test_indexed_terms_are_the_tokens_an_index_counts(text: str) -> None:
    # The BM25 index gets this string and splits it on whitespace: the same terms as the
    # analyzer's tokens, each as often, or searches would rank differently.
    assert Counter(indexed_terms(text).split()) == Counter(analyze(text))
