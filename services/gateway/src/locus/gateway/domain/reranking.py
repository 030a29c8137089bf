"""What a reranker sees and what it may change: the best symbols of a ranking become documents
(path, qualified name, the code that matched); the relevance scores a reranker returns, mixed
with the ranking's own scores, reorder those symbols, and the files follow their best reranked
symbol. Everything below the reranked window keeps its order, nothing is invented, nothing is
dropped.

Why a mix and not the reranker's order: measured out of fold on the 697 training questions
(bench/RESULTS.md, session 15), a cross-encoder trained on them ordered the learned ranking's
first 30 symbols far worse alone (Func Acc@10 25.4) than the ranking did (44.3); mixed in with
a weight of 0.25 (chosen on two repository groups, applied to the third, the same in every
group) it added about a point (45.2). A reranker knows how well code answers the question, not
where a fix goes; the learned ranking knows the second."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from locus.gateway.domain.ranking_types import Evidence, RankedFile, RankedSymbol, Ranking


@dataclass(frozen=True)
class RerankWindow:
    """The symbols sent to the reranker (the first ``top_n`` of the ranking) as documents."""

    symbols: tuple[RankedSymbol, ...]
    documents: tuple[str, ...]


def rerank_window(
    ranking: Ranking, texts: Mapping[str, str], top_n: int, max_document_chars: int
) -> RerankWindow:
    """Documents for the first ``top_n`` symbols (``rerank_document``), cut to
    ``max_document_chars``."""
    symbols = ranking.symbols[:top_n]
    documents = tuple(rerank_document(r, texts, max_document_chars) for r in symbols)
    return RerankWindow(symbols=symbols, documents=documents)


def rerank_document(ranked: RankedSymbol, texts: Mapping[str, str], max_chars: int) -> str:
    """One symbol as a reranker reads it (also what a reranker is trained on): its path, line
    range, kind and qualified name, then its best matching chunk's text, or, for a symbol no
    retrieved chunk cites, its own first chunk (``texts`` by its node id)."""
    ref = ranked.symbol
    header = f"{ref.relative_path}:{ref.start_line}-{ref.end_line} {ref.kind} {ref.qualified_name}"
    body = retrieved_code(ranked, texts) or texts.get(ref.node_id, "")
    return f"{header}\n{body}"[:max_chars]


def retrieved_code(ranked: RankedSymbol, texts: Mapping[str, str]) -> str:
    """The text of the best retrieved chunk that cites the symbol ("" when none does)."""
    return next((texts[c] for c in ranked.chunk_ids if texts.get(c)), "")


def apply_relevance(
    ranking: Ranking,
    window: RerankWindow,
    relevance: Mapping[int, float],
    source: str,
    *,
    weight: float,
) -> Ranking:
    """Reorder the window by ``relevance`` (document index → score; a document the reranker
    left out keeps its place after the scored ones), mixed with the ranking's own scores: the
    scored documents are ordered by z(ranking score) + ``weight`` · z(relevance), the z-scores
    taken within the window; an infinite weight is the reranker's order alone. The window's
    scores are handed out again in the new order, so scores still fall down the list and the
    tail stays comparable; each moved symbol says where its place came from."""
    if not weight > 0:
        raise ValueError(f"rerank weight must be above 0, not {weight}")
    size = len(window.symbols)
    unknown = sorted(i for i in relevance if not 0 <= i < size)
    if unknown:
        raise ValueError(f"relevance for documents {unknown} of a window of {size}")
    scored = sorted(relevance)
    if math.isinf(weight):
        key = {i: -relevance[i] for i in scored}
    else:
        own = _z([window.symbols[i].score for i in scored])
        theirs = _z([relevance[i] for i in scored])
        key = {i: -(o + weight * t) for i, o, t in zip(scored, own, theirs, strict=True)}
    order = sorted(range(size), key=lambda i: (i not in key, key.get(i, 0.0), i))
    scores = sorted((s.score for s in window.symbols), reverse=True)
    reranked = []
    for position, index in enumerate(order):
        ranked = window.symbols[index]
        evidence = ranked.evidence
        if index in relevance:
            evidence = (
                Evidence(
                    "rerank",
                    f"{source}: relevance {relevance[index]:.4g}, was #{index + 1}",
                    round(scores[position] - ranked.score, 4),
                ),
                *evidence,
            )
        reranked.append(replace(ranked, score=scores[position], evidence=evidence))
    symbols = (*reranked, *ranking.symbols[size:])
    return Ranking(files=_files_after(ranking.files, reranked), symbols=symbols)


def _z(values: Sequence[float]) -> list[float]:
    """Standard scores (all 0 when the values do not vary)."""
    mean = sum(values) / len(values) if values else 0.0
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) if values else 0.0
    return [(v - mean) / spread if spread > 0 else 0.0 for v in values]


def _files_after(
    files: Sequence[RankedFile], reranked: Sequence[RankedSymbol]
) -> tuple[RankedFile, ...]:
    """Files with a reranked symbol first, in the order of their best one (and with their
    symbols as reranked); the other files keep their order after them. Scores are handed out
    again in the new order, as for symbols."""
    by_file: dict[str, list[RankedSymbol]] = {}  # in the order of each file's best symbol
    for ranked in reranked:
        by_file.setdefault(ranked.symbol.file_id, []).append(ranked)
    order = {file_id: position for position, file_id in enumerate(by_file)}
    touched = sorted((f for f in files if f.file_id in order), key=lambda f: order[f.file_id])
    rest = [f for f in files if f.file_id not in order]
    scores = sorted((f.score for f in touched), reverse=True)
    moved = []
    for file, score in zip(touched, scores, strict=True):
        mine = by_file[file.file_id]
        reranked_ids = {m.symbol.node_id for m in mine}
        others = [s for s in file.symbols if s.symbol.node_id not in reranked_ids]
        symbols = (*mine, *others)[: max(len(file.symbols), len(mine))]
        moved.append(replace(file, score=score, symbols=symbols))
    return (*moved, *rest)
