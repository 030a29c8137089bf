"""Every knob of the hand ranking (``RankingV1``), so a benchmark can set them without touching
the logic; the learned ranking reads the same cues as columns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from locus.codepaths import PathRole

_DEFAULT_ROLE_FACTORS: Mapping[PathRole, float] = MappingProxyType(
    {
        PathRole.TEST: 0.35,
        PathRole.DOCS: 0.4,
        PathRole.EXAMPLE: 0.5,
        PathRole.VENDORED: 0.25,
        PathRole.GENERATED: 0.5,
        # Not tuned: the roles added with the learned ranker take the factor of their kin
        # (benchmarks like tests; notebooks, templates, CI and build files like docs).
        PathRole.BENCHMARK: 0.35,
        PathRole.NOTEBOOK: 0.4,
        PathRole.TEMPLATE: 0.4,
        PathRole.CI: 0.4,
        PathRole.BUILD: 0.4,
    }
)


@dataclass(frozen=True)
class RankingWeights:
    """Every knob of RankingV1, so a benchmark can tune them without touching the logic."""

    # Retrieval scores are normalized so that the best hit scores 1.0; a cue the question
    # states outright (a name, a path, a frame) is worth about as much as the best hit.
    multi_hit_bonus: float = 0.15  # times the normalized score of each further hit
    multi_hit_cap: float = 0.45
    identifier: float = 1.2  # an identifier of the question is the symbol's name
    identifier_casefold: float = 0.5  # ... ignoring case
    identifier_plain_word: float = 0.6  # ... a lower-case word (`put`, `data`)
    # ... an identifier is a run of a longer name's words (`world_to_pixel` in
    # `world_to_pixel_values`, `subs` in `_eval_subs`), times the share of the name it covers
    identifier_part: float = 0.8
    dotted_name: float = 1.5  # a dotted name is the symbol's qualified/scope name or its tail
    title_name: float = 0.5  # an identifier the question's title uses weighs this much more
    path: float = 0.6  # a path of the question is the file (or a tail of it)
    path_basename: float = 0.35  # a bare file name of the question is the file's name
    path_directory: float = 0.15  # a directory of the question contains the file
    path_share_for_symbols: float = 0.8  # symbols get this share of their file's path boost
    stacktrace_line: float = 1.5  # a frame's file and line fall inside the symbol
    stacktrace_function: float = 1.0  # a frame's file and function name match the symbol
    stacktrace_file: float = 0.5  # a frame names the file
    module_path: float = 0.5  # an imported or dotted module path of the question is the file
    member_of_named: float = 0.4  # a method of a class the question names
    name_words: float = 0.4  # times the share of the symbol name's words the question uses
    # An identifier that names several symbols points at each of them less: the boost is
    # divided by the square root of how many were found by that name.
    identifier_ambiguity: bool = True
    file_context: float = 0.5  # a symbol gets this share of its file's score
    # When its best symbol outscores a file's own matches, the file still keeps this share of
    # the bonus its further matches earn (multi_hit_bonus).
    file_keeps_multi_hit: float = 1.0
    # Propagation from the first ranking's best symbols to their graph neighbours: a neighbour
    # gets graph x the seed's score x the factor of the hop (below), the best over its seeds.
    graph: float = 0.5
    graph_contains: float = 0.6  # a member of a seed class
    graph_calls: float = 0.6  # a function a seed calls
    graph_called_by: float = 0.3  # a caller of a seed
    graph_inherits: float = 0.3  # a base class or a subclass of a seed
    graph_cap: float = 1.0
    boost_cap: float = 3.0
    module_factor: float = 0.85  # a module is a coarser answer than its functions
    role_factors: Mapping[PathRole, float] = field(default_factory=lambda: _DEFAULT_ROLE_FACTORS)
    # A question that asks what the documentation says (QuestionCues.about_docs): each docs
    # candidate gets this instead of the docs factor (not tuned: no split asks such questions).
    docs_asked_for: float = 0.5
    max_evidence: int = 8
    symbols_per_file: int = 5

    @classmethod
    def with_overrides(cls, overrides: Mapping[str, float]) -> RankingWeights:
        """The defaults with some numeric weights replaced (bool weights: 0 is off)."""
        defaults = cls()
        changed: dict[str, object] = {}
        for name, value in overrides.items():
            current = getattr(defaults, name)
            changed[name] = bool(value) if isinstance(current, bool) else float(value)
        return replace(defaults, **changed)  # type: ignore[arg-type]
