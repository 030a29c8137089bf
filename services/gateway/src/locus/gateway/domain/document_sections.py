"""Document sections (ast's ``section`` symbols: a heading of a Markdown, reStructuredText,
AsciiDoc or HTML document) as ranking candidates. Only a question that asks what the
documentation says ranks them as symbols; for every other question a section's chunks count
for their file alone, as documents did before they had sections: the shipped ranker was
trained on code questions without them, so where-to-change rankings stay as they were."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from locus.gateway.domain.question_cues import QuestionCues
from locus.gateway.domain.ranking_types import ChunkMatch, SymbolRef
from locus.gateway.domain.symbol_kinds import DOCUMENT_KINDS


def document_candidates(
    cues: QuestionCues, chunks: Sequence[ChunkMatch], named: Sequence[SymbolRef]
) -> tuple[list[ChunkMatch], list[SymbolRef]]:
    """The chunk matches and named symbols a ranking of the question gets: as they are when it
    asks about the documentation, else with sections dropped (their chunks keep their file)."""
    if cues.about_docs:
        return list(chunks), list(named)
    return (
        [
            replace(chunk, symbol=None)
            if chunk.symbol is not None and chunk.symbol.kind in DOCUMENT_KINDS
            else chunk
            for chunk in chunks
        ],
        [symbol for symbol in named if symbol.kind not in DOCUMENT_KINDS],
    )
