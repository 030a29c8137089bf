"""A file's whole-file document (retrieval's whole-file list) from its chunks."""

from __future__ import annotations

import pytest

from locus.retrieval.domain.model import ChunkFilter, IndexedChunk, whole_file, whole_files

pytestmark = pytest.mark.unit


def chunk(ordinal: int, text: str, *, file_id: str = "f1", seq: int = 2) -> IndexedChunk:
    return IndexedChunk(
        chunk_id=f"{file_id}:{ordinal}",
        project_id="p1",
        snapshot_id=f"s{seq}",
        snapshot_seq=seq,
        file_id=file_id,
        path=f"src/{file_id}.py",
        language="python",
        subsystem="core",
        start_line=ordinal * 10 + 1,
        end_line=ordinal * 10 + 9,
        node_id="",
        kind="function",
        symbol_node_id="",
        symbol_qualified_name="",
        text=text,
        content_sha256="",
        ordinal=ordinal,
    )


def test_the_document_is_the_chunks_in_file_order_whatever_order_they_came_in() -> None:
    document = whole_file([chunk(2, "c"), chunk(0, "a"), chunk(1, "b", seq=3)])
    assert document.text == "a\nb\nc"
    assert (document.file_id, document.path, document.chunks) == ("f1", "src/f1.py", 3)
    assert document.snapshot_seq == 3  # the newest part's scan
    assert ChunkFilter("p1", path_prefix="src/", max_snapshot_seq=3).matches(document)
    assert not ChunkFilter("p1", max_snapshot_seq=2).matches(document)
    assert not ChunkFilter("p2").matches(document)
    assert not ChunkFilter("p1", languages=("go",)).matches(document)


def test_chunks_of_several_files_give_one_document_each() -> None:
    documents = whole_files([chunk(0, "a"), chunk(0, "x", file_id="f2"), chunk(1, "b")])
    assert {(d.file_id, d.text) for d in documents} == {("f1", "a\nb"), ("f2", "x")}
    with pytest.raises(ValueError, match="at least one chunk"):
        whole_file([])


def test_a_whole_file_reuses_its_chunks_analysis_only_when_they_are_exactly_its_text() -> None:
    from locus.retrieval.adapters.tantivy_bm25 import _terms_of_whole_file
    from locus.retrieval.domain.analyzer import indexed_terms

    chunks = [chunk(1, "def parseHTTPHeaders(raw):"), chunk(0, "class UploadClient:"), chunk(2, "")]
    document = whole_file(chunks)

    def analysed(parts: list[IndexedChunk]) -> list[tuple[int, int, str, str]]:
        return [(c.ordinal, c.start_line, c.text, indexed_terms(c.text)) for c in parts]

    reused = _terms_of_whole_file(document, analysed(chunks))
    assert reused is not None
    assert reused.split() == indexed_terms(document.text).split()
    assert "parsehttpheaders" in reused.split()
    assert "upload" in reused.split()
    assert _terms_of_whole_file(document, analysed(chunks[:2])) is None  # a chunk missing
    changed = [chunk(1, "def parse(raw):"), chunks[1], chunks[2]]
    assert _terms_of_whole_file(document, analysed(changed)) is None  # another version's text
