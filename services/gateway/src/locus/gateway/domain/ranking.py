"""The hand ranking of located code (``RankingV1``): chunk hits from retrieval (already mapped to
their innermost symbol) and symbols found by name become ranked symbols and files, each with the
evidence that put it there. Its inputs and outputs are in ``ranking_types``, its knobs in
``ranking_weights``, how cues match in ``cue_matching``; the learned ranking reranks its lists."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from locus.codepaths import PathRole, classify_path
from locus.gateway.domain.cue_matching import (
    aggregate_hits,
    dotted_matches,
    identifier_part_of,
    match_path,
    module_of_path,
    name_words_of,
    uses_word,
)
from locus.gateway.domain.question_cues import QuestionCues
from locus.gateway.domain.ranking_evidence import retrieval_evidence
from locus.gateway.domain.ranking_types import (
    ChunkMatch,
    Evidence,
    GraphNeighbor,
    RankedFile,
    RankedSymbol,
    Ranking,
    RankingInput,
    SymbolRef,
    file_list_matches,
)
from locus.gateway.domain.ranking_weights import RankingWeights
from locus.gateway.domain.symbol_kinds import (
    CALLABLE_KINDS,
    CONTAINER_KINDS,
    MEMBER_KINDS,
    MODULE_KINDS,
    member_owner,
)


@dataclass
class _SymbolCandidate:
    ref: SymbolRef
    hits: list[tuple[float, ChunkMatch]] = field(default_factory=list)


# A symbol's retrieval score and evidence, and its cue boost and evidence.
_SymbolParts = tuple[tuple[float, list[Evidence]], tuple[float, tuple[Evidence, ...]]]


@dataclass
class _FileCandidate:
    file_id: str
    relative_path: str
    language: str
    hits: list[tuple[float, ChunkMatch]] = field(default_factory=list)


@dataclass(frozen=True)
class _Counts:
    """Counts over one request's candidates: a name, class or word many of them share points
    at each of them less."""

    names: Counter[str]  # name → symbols found by looking names of the question up
    members: Counter[str]  # class scope → candidate methods of it
    words: Counter[str]  # name word → candidates whose name has it

    @classmethod
    def of(cls, request: RankingInput) -> _Counts:
        candidates = {
            *(c.symbol for c in request.chunks if c.symbol is not None),
            *request.named_symbols,
            *(n.symbol for n in request.graph_neighbors),
        }
        return cls(
            names=Counter(ref.name for ref in request.named_symbols),
            members=Counter(
                owner
                for ref in candidates
                if ref.kind in MEMBER_KINDS and (owner := member_owner(ref.scope_name))
            ),
            words=Counter(word for ref in candidates for word in set(name_words_of(ref.name))),
        )


@dataclass(frozen=True)
class _Scored:
    raw: float  # before the path-role factor
    score: float
    evidence: tuple[Evidence, ...]
    cue_evidence: tuple[Evidence, ...]


def lifted_roles(request: RankingInput) -> frozenset[PathRole]:
    """The path roles a request is about, which the ranking does not de-rank: tests when the
    question asks about them (or the caller includes them), documentation when it asks what
    the documentation says."""
    roles = set()
    if request.include_tests or request.cues.about_tests:
        roles.add(PathRole.TEST)
    if request.cues.about_docs:
        roles.add(PathRole.DOCS)
    return frozenset(roles)


class RankingV1:
    """Aggregate chunk hits to symbols and files (max + multi-hit bonus), add boosts for names,
    paths and stack-trace frames the question mentions, de-rank tests/docs/examples/vendored
    and generated code unless the question asks for it (tests, docs) or names the file."""

    name = "v1"

    def __init__(self, weights: RankingWeights | None = None) -> None:
        self.weights = weights or RankingWeights()

    def rank(self, request: RankingInput) -> Ranking:
        w = self.weights
        top = max((c.score for c in request.chunks), default=0.0)
        symbols: dict[str, _SymbolCandidate] = {}
        files: dict[str, _FileCandidate] = {}
        for chunk in sorted(request.chunks, key=lambda c: c.rank):
            normalized = chunk.score / top if top > 0 else 1.0 / max(chunk.rank, 1)
            file = files.setdefault(
                chunk.file_id, _FileCandidate(chunk.file_id, chunk.relative_path, chunk.language)
            )
            file.hits.append((normalized, chunk))
            if chunk.symbol is not None:
                candidate = symbols.setdefault(chunk.symbol.node_id, _SymbolCandidate(chunk.symbol))
                candidate.hits.append((normalized, chunk))
        for ref in (*request.named_symbols, *request.file_symbols):
            symbols.setdefault(ref.node_id, _SymbolCandidate(ref))
            files.setdefault(
                ref.file_id, _FileCandidate(ref.file_id, ref.relative_path, ref.language)
            )

        for match in file_list_matches(request):
            # A file only a file list found competes on what the question says about it.
            files.setdefault(
                match.file_id,
                _FileCandidate(match.file_id, match.relative_path, match.language),
            )

        lifted = lifted_roles(request)
        counts = _Counts.of(request)
        file_paths = {f.file_id: f.relative_path for f in files.values()}
        file_cues = {
            file_id: self._file_cues(path, request.cues) for file_id, path in file_paths.items()
        }

        # What a symbol's chunks and the question's cues give it: scored twice with graph
        # neighbours (before and after their boosts), worked out once.
        parts: dict[str, _SymbolParts] = {}

        def parts_of(candidate: _SymbolCandidate) -> _SymbolParts:
            found = parts.get(candidate.ref.node_id)
            if found is None:
                found = parts[candidate.ref.node_id] = (
                    self._retrieval(candidate.hits),
                    self._symbol_cues(candidate.ref, request.cues, counts),
                )
            return found

        graph_boosts: dict[str, tuple[float, Evidence]] = {}
        if request.graph_neighbors and w.graph:
            first = {
                node_id: self._score_symbol(
                    candidate,
                    parts_of(candidate),
                    file_cues.get(candidate.ref.file_id, (0.0, ()))[0],
                    lifted,
                ).score
                for node_id, candidate in symbols.items()
            }
            names = {n: c.ref.scope_name or c.ref.name for n, c in symbols.items()}
            graph_boosts = self._graph_boosts(request.graph_neighbors, first, names)
            for neighbor in request.graph_neighbors:
                ref = neighbor.symbol
                if ref.node_id in graph_boosts and ref.node_id not in symbols:
                    symbols[ref.node_id] = _SymbolCandidate(ref)
                    files.setdefault(
                        ref.file_id, _FileCandidate(ref.file_id, ref.relative_path, ref.language)
                    )
                    if ref.file_id not in file_cues:
                        file_cues[ref.file_id] = self._file_cues(ref.relative_path, request.cues)

        ranked_symbols: list[RankedSymbol] = []
        best_symbol: dict[str, _Scored] = {}
        for candidate in symbols.values():
            path_boost = file_cues.get(candidate.ref.file_id, (0.0, ()))[0]
            scored = self._score_symbol(
                candidate,
                parts_of(candidate),
                path_boost,
                lifted,
                graph_boosts.get(candidate.ref.node_id),
            )
            ranked_symbols.append(
                RankedSymbol(
                    symbol=candidate.ref,
                    score=scored.score,
                    evidence=scored.evidence,
                    chunk_ids=tuple(c.chunk_id for _, c in _best_first(candidate.hits)),
                )
            )
            current = best_symbol.get(candidate.ref.file_id)
            if current is None or scored.raw > current.raw:
                best_symbol[candidate.ref.file_id] = scored
        ranked_symbols.sort(key=_symbol_order)

        symbols_of_file: dict[str, list[RankedSymbol]] = {}
        for ranked_symbol in ranked_symbols:
            symbols_of_file.setdefault(ranked_symbol.symbol.file_id, []).append(ranked_symbol)
        ranked_files: list[RankedFile] = []
        for file in files.values():
            ranked_files.append(
                self._score_file(
                    file,
                    file_cues[file.file_id],
                    best_symbol.get(file.file_id),
                    symbols_of_file.get(file.file_id, []),
                    lifted,
                )
            )
        ranked_files.sort(key=lambda f: (-f.score, f.relative_path, f.file_id))
        if w.file_context:
            ranked_symbols = self._with_file_context(ranked_symbols, ranked_files)
        return Ranking(
            files=tuple(ranked_files[: request.max_files]),
            symbols=tuple(ranked_symbols[: request.max_symbols]),
        )

    def _with_file_context(
        self, symbols: list[RankedSymbol], files: list[RankedFile]
    ) -> list[RankedSymbol]:
        """Add a share of the file's score to each of its symbols: where the change goes is
        decided by the file first, then by the symbol inside it."""
        share = self.weights.file_context
        file_scores = {f.file_id: f.score for f in files}
        lifted = []
        for ranked in symbols:
            file_score = file_scores.get(ranked.symbol.file_id, 0.0)
            added = share * file_score
            evidence = ranked.evidence
            if added:
                evidence = self._with_evidence(
                    evidence, Evidence("file", "a share of its file's score", round(added, 4))
                )
            lifted.append(
                RankedSymbol(ranked.symbol, ranked.score + added, evidence, ranked.chunk_ids)
            )
        lifted.sort(key=_symbol_order)
        return lifted

    def _with_evidence(
        self, evidence: tuple[Evidence, ...], extra: Evidence
    ) -> tuple[Evidence, ...]:
        """``extra`` before the penalties (which always show last), within max_evidence: the
        weakest retrieval evidence makes room."""
        penalties = [e for e in evidence if e.signal == "path_role"]
        others = [e for e in evidence if e.signal != "path_role"]
        room = max(self.weights.max_evidence - len(penalties) - 1, 0)
        while len(others) > room:
            retrieval = [e for e in others if e.chunk_id]
            others.remove(min(retrieval, key=lambda e: e.weight) if retrieval else others[-1])
        return (*others, extra, *penalties)

    def _graph_boosts(
        self,
        neighbors: Sequence[GraphNeighbor],
        seed_scores: Mapping[str, float],
        seed_names: Mapping[str, str],
    ) -> dict[str, tuple[float, Evidence]]:
        """The best propagated boost of each neighbour over its seeds."""
        w = self.weights
        factors = {
            ("contains", False): (w.graph_contains, "a member of"),
            ("calls", False): (w.graph_calls, "called by"),
            ("calls", True): (w.graph_called_by, "a caller of"),
            ("inherits", False): (w.graph_inherits, "a base class of"),
            ("inherits", True): (w.graph_inherits, "a subclass of"),
        }
        boosts: dict[str, tuple[float, Evidence]] = {}
        for neighbor in neighbors:
            factor, how = factors.get((neighbor.relation, neighbor.reverse), (0.0, ""))
            seed_score = seed_scores.get(neighbor.seed_node_id, 0.0)
            boost = min(w.graph * factor * seed_score, w.graph_cap)
            if boost <= 0:
                continue
            current = boosts.get(neighbor.symbol.node_id)
            if current is None or boost > current[0]:
                seed = seed_names.get(neighbor.seed_node_id, "a top symbol")
                boosts[neighbor.symbol.node_id] = (
                    boost,
                    Evidence("graph", f"{how} {seed}, which ranks high", round(boost, 4)),
                )
        return boosts

    def _score_symbol(
        self,
        candidate: _SymbolCandidate,
        parts: _SymbolParts,
        file_path_boost: float,
        lifted: frozenset[PathRole],
        graph_boost: tuple[float, Evidence] | None = None,
    ) -> _Scored:
        w = self.weights
        ref = candidate.ref
        (retrieval, retrieval_evidence), (boost, cue_evidence) = parts
        if graph_boost is not None:
            boost += graph_boost[0]
            cue_evidence += (graph_boost[1],)
        if file_path_boost:
            share = file_path_boost * w.path_share_for_symbols
            boost += share
            cue_evidence += (Evidence("path", "its file is named in the question", share),)
        raw = retrieval + min(boost, w.boost_cap)
        if ref.kind in MODULE_KINDS:
            raw *= w.module_factor
        score, role_evidence = self._role(ref.relative_path, raw, lifted, bool(file_path_boost))
        evidence = self._top_evidence(cue_evidence, retrieval_evidence, role_evidence)
        return _Scored(raw=raw, score=score, evidence=evidence, cue_evidence=cue_evidence)

    def _score_file(
        self,
        file: _FileCandidate,
        cues: tuple[float, tuple[Evidence, ...]],
        best_symbol: _Scored | None,
        symbols: list[RankedSymbol],
        lifted: frozenset[PathRole],
    ) -> RankedFile:
        w = self.weights
        retrieval, retrieval_evidence = self._retrieval(file.hits)
        path_boost, path_evidence = cues
        raw = retrieval
        inherited: tuple[Evidence, ...] = ()
        if best_symbol is not None and best_symbol.raw > retrieval:
            # The best symbol decides, and the file keeps what its other matches add.
            others = retrieval - max((n for n, _ in file.hits), default=0.0)
            raw = best_symbol.raw + w.file_keeps_multi_hit * others
            inherited = tuple(e for e in best_symbol.cue_evidence if e.signal != "path")
        raw += path_boost
        score, role_evidence = self._role(file.relative_path, raw, lifted, bool(path_boost))
        return RankedFile(
            file_id=file.file_id,
            relative_path=file.relative_path,
            language=file.language,
            score=score,
            symbols=tuple(symbols[: w.symbols_per_file]),
            evidence=self._top_evidence(
                path_evidence + inherited, retrieval_evidence, role_evidence
            ),
            chunk_ids=tuple(c.chunk_id for _, c in _best_first(file.hits)),
        )

    def _retrieval(self, hits: list[tuple[float, ChunkMatch]]) -> tuple[float, list[Evidence]]:
        w = self.weights
        if not hits:
            return 0.0, []
        ordered = _best_first(hits)
        score = aggregate_hits((n for n, _ in ordered), w.multi_hit_bonus, w.multi_hit_cap)
        evidence: list[Evidence] = []
        for normalized, chunk in ordered:
            evidence.extend(retrieval_evidence(normalized, chunk))
        if len(ordered) > 1:
            bonus = score - ordered[0][0]
            evidence.append(
                Evidence("multi_hit", f"{len(ordered)} matching chunks", round(bonus, 4))
            )
        return score, evidence

    def _symbol_cues(
        self, ref: SymbolRef, cues: QuestionCues, counts: _Counts
    ) -> tuple[float, tuple[Evidence, ...]]:
        w = self.weights
        found: list[Evidence] = []
        if ref.kind in MODULE_KINDS:
            # A module the question names (an import, a dotted path) is scored through its
            # file's module cue, which its symbols share; as a symbol it would count the same
            # mention twice more (dotted name and identifier) and outrank what changes.
            return 0.0, ()
        for dotted_name in cues.dotted_names:
            if dotted_matches(dotted_name, ref):
                found.append(
                    Evidence(
                        "dotted_name", f"`{dotted_name}` names {ref.qualified_name}", w.dotted_name
                    )
                )
                break
        for identifier in cues.identifiers:
            if identifier == ref.name:
                weight = w.identifier
                if identifier.isalpha() and identifier.islower():
                    # `put`, `data`, `requests` in a snippet: words as often as names.
                    weight = w.identifier_plain_word
                if identifier in cues.in_title:
                    weight *= 1.0 + w.title_name
                namesakes = counts.names.get(ref.name, 1)
                if w.identifier_ambiguity and namesakes > 1:
                    weight /= math.sqrt(namesakes)
                detail = f"`{identifier}` is its name"
                if namesakes > 1:
                    detail += f" ({namesakes} symbols have it)"
                found.append(Evidence("identifier", detail, round(weight, 4)))
                break
        else:
            lowered = ref.name.lower()
            for identifier in cues.identifiers:
                if identifier.lower() == lowered:
                    found.append(
                        Evidence(
                            "identifier",
                            f"`{identifier}` is its name (ignoring case)",
                            w.identifier_casefold,
                        )
                    )
                    break
            else:
                part = identifier_part_of(cues.identifiers, ref.name)
                if part is not None and w.identifier_part:
                    identifier, share = part
                    found.append(
                        Evidence(
                            "identifier",
                            f"`{identifier}` is part of its name",
                            round(w.identifier_part * share, 4),
                        )
                    )
        owner = member_owner(ref.scope_name)
        if w.member_of_named and owner and ref.kind in MEMBER_KINDS:
            owner_name = owner.rsplit(".", 1)[-1]
            if owner_name in cues.identifiers or any(
                d == owner or d.endswith("." + owner_name) for d in cues.dotted_names
            ):
                # Naming a class points at each of its methods less the more of them are
                # candidates (a class used in a snippet brings many).
                siblings = max(counts.members.get(owner, 1), 1)
                found.append(
                    Evidence(
                        "member",
                        f"a method of {owner_name}, which the question names",
                        round(w.member_of_named / math.sqrt(siblings), 4),
                    )
                )
        named_exactly = any(e.signal in ("identifier", "dotted_name") for e in found)
        has_name_words = ref.kind in CALLABLE_KINDS or ref.kind in CONTAINER_KINDS
        if w.name_words and not named_exactly and has_name_words:
            words = name_words_of(ref.name)
            shared = [p for p in words if uses_word(cues.words, p)]
            if shared:
                # A word many candidates' names share (the topic of the question) tells them
                # apart less than a rare one: each word counts 1/sqrt(candidates using it).
                rarity = sum(1.0 / math.sqrt(max(counts.words.get(p, 1), 1)) for p in shared)
                weight = w.name_words * rarity / len(words)
                found.append(
                    Evidence(
                        "name_words", f"the question uses {', '.join(shared)}", round(weight, 4)
                    )
                )
        for frame in cues.frames:
            if not match_path(frame.path, ref.relative_path):
                continue
            if ref.kind not in MODULE_KINDS and ref.start_line <= frame.line <= ref.end_line:
                found.append(
                    Evidence(
                        "stacktrace",
                        f"frame {frame.path}:{frame.line} is inside it",
                        w.stacktrace_line,
                    )
                )
                break
            if frame.function and frame.function == ref.name:
                found.append(
                    Evidence(
                        "stacktrace",
                        f"frame {frame.path}:{frame.line} names {frame.function} (the line "
                        f"is outside its lines {ref.start_line}-{ref.end_line})",
                        w.stacktrace_function,
                    )
                )
                break
        return sum(e.weight for e in found), tuple(found)

    def _file_cues(
        self, relative_path: str, cues: QuestionCues
    ) -> tuple[float, tuple[Evidence, ...]]:
        w = self.weights
        best: Evidence | None = None
        weights = {
            "exact": w.path,
            "suffix": w.path,
            "basename": w.path_basename,
            "directory": w.path_directory,
        }
        for path in cues.paths:
            how = match_path(path, relative_path)
            if how and (best is None or weights[how] > best.weight):
                best = Evidence("path", f"the question names {path} ({how} match)", weights[how])
        found = [best] if best is not None else []
        module = module_of_path(relative_path)
        for module_path in cues.module_paths:
            if module and (module == module_path or module.endswith("/" + module_path)):
                found.append(
                    Evidence(
                        "module",
                        f"the question names module {module_path.replace('/', '.')}",
                        w.module_path,
                    )
                )
                break
        for frame in cues.frames:
            if match_path(frame.path, relative_path) in ("exact", "suffix", "basename"):
                found.append(
                    Evidence(
                        "stacktrace",
                        f"a stack-trace frame is in this file ({frame.path}:{frame.line})",
                        w.stacktrace_file,
                    )
                )
                break
        return sum(e.weight for e in found), tuple(found)

    def _role(
        self, relative_path: str, raw: float, lifted: frozenset[PathRole], named_by_question: bool
    ) -> tuple[float, tuple[Evidence, ...]]:
        role = classify_path(relative_path)
        factor = self.weights.role_factors.get(role, 1.0)
        if role == PathRole.SOURCE or factor == 1.0 or named_by_question:
            return raw, ()
        if role == PathRole.DOCS and role in lifted and self.weights.docs_asked_for:
            return raw + self.weights.docs_asked_for, (
                Evidence(
                    "docs",
                    "the question asks what the documentation says",
                    self.weights.docs_asked_for,
                ),
            )
        if role in lifted:
            return raw, ()
        score = raw * factor
        return score, (
            Evidence(
                "path_role",
                f"{role.value} path, ranked lower (x{factor:g})",
                round(score - raw, 4),
            ),
        )

    def _top_evidence(
        self,
        cue_evidence: Iterable[Evidence],
        retrieval_evidence: Iterable[Evidence],
        role_evidence: Iterable[Evidence],
    ) -> tuple[Evidence, ...]:
        """Cue evidence first, then the strongest retrieval evidence; a penalty always shows."""
        cues = list(cue_evidence)
        penalties = list(role_evidence)
        room = max(self.weights.max_evidence - len(cues) - len(penalties), 0)
        retrieval = sorted(retrieval_evidence, key=lambda e: -e.weight)[:room]
        return tuple(cues + retrieval + penalties)


def _best_first(hits: list[tuple[float, ChunkMatch]]) -> list[tuple[float, ChunkMatch]]:
    return sorted(hits, key=lambda item: (-item[0], item[1].rank))


def _symbol_order(symbol: RankedSymbol) -> tuple[float, str, int, str]:
    ref = symbol.symbol
    return (-symbol.score, ref.relative_path, ref.start_line, ref.node_id)
