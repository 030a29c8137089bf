"""The learned ranking: the hand ranking's candidates, re-ordered by models trained on real
fixes (``make train-ranker``; ``bench/ranker/``). One model scores files, one scores symbols,
each over the features of ``features.candidate_features``; the evidence shown to users stays the
hand ranking's (which signals matched), the order and scores are the model's.

A model file is JSON (``MODEL_FORMAT``): per target its feature names, and either a tree
ensemble (LambdaMART from LightGBM, flattened to arrays and evaluated here with numpy, so the
gateway needs no LightGBM) or a linear model; plus what it was trained on (the training data's
hash, the instances, the metrics it reached)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from locus.codepaths import PathRole, classify_path
from locus.gateway.domain.features import (
    FILE_FEATURES,
    SYMBOL_FEATURES,
    VECTOR_SIMILARITY_FEATURES,
    candidate_features,
    with_file_scores,
)
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import RankedSymbol, Ranking, RankingInput
from locus.gateway.domain.symbol_kinds import DOCUMENT_KINDS

MODEL_FORMAT = 1
SHIPPED_MODEL = "ranker.json"  # in locus.gateway.models


class RankerModelError(ValueError):
    """A model file that cannot be used: unreadable, another format, unknown features."""


@dataclass(frozen=True)
class TreeEnsemble:
    """Trees flattened into one node table; a leaf has feature -1 and its value in ``value``."""

    feature: np.ndarray  # int32, per node
    threshold: np.ndarray  # float64
    left: np.ndarray  # int32, global node index
    right: np.ndarray
    value: np.ndarray
    roots: np.ndarray  # int32, the root node of each tree
    depth: int
    base: float = 0.0
    codes: _LeafCodes | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "codes", _LeafCodes.of(self))

    def predict(self, rows: np.ndarray) -> np.ndarray:
        if rows.shape[0] == 0 or self.roots.size == 0:
            return np.full(rows.shape[0], self.base)
        if self.codes is not None:
            scores: np.ndarray = self.codes.leaf_values(rows).sum(axis=1) + self.base
            return scores
        return self.predict_by_walking(rows)

    def predict_by_walking(self, rows: np.ndarray) -> np.ndarray:
        """Every row down every tree, one level at a time (any tree size)."""
        if rows.shape[0] == 0 or self.roots.size == 0:
            return np.full(rows.shape[0], self.base)
        index = np.broadcast_to(self.roots, (rows.shape[0], self.roots.size)).copy()
        row_index = np.arange(rows.shape[0])[:, None]
        for _ in range(self.depth):
            features = self.feature[index]
            internal = features >= 0
            if not internal.any():
                break
            values = rows[row_index, np.where(internal, features, 0)]
            go_left = values <= self.threshold[index]
            following = np.where(go_left, self.left[index], self.right[index])
            index = np.where(internal, following, index)
        scores: np.ndarray = self.value[index].sum(axis=1) + self.base
        return scores

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TreeEnsemble:
        return cls(
            feature=np.asarray(data["feature"], dtype=np.int32),
            threshold=np.asarray(data["threshold"], dtype=np.float64),
            left=np.asarray(data["left"], dtype=np.int32),
            right=np.asarray(data["right"], dtype=np.int32),
            value=np.asarray(data["value"], dtype=np.float64),
            roots=np.asarray(data["roots"], dtype=np.int32),
            depth=int(data["depth"]),
            base=float(data.get("base", 0.0)),
        )


# Trees with at most this many splits are evaluated through a table of 2**splits leaves each.
MAX_CODED_SPLITS = 10


@dataclass(frozen=True)
class _LeafCodes:
    """Small trees evaluated without walking them: every split of every tree is compared at
    once, each tree's outcomes read as a binary number, and that number looked up in the tree's
    table of leaf values (built once by walking each possible outcome). Same leaves, same sums
    as the walk; a third of its time on the shipped model (100 trees of 6 splits)."""

    feature: np.ndarray  # (trees * splits,) the feature each split reads (padding: 0)
    threshold: np.ndarray  # (trees * splits,)
    weights: np.ndarray  # (splits,) 1, 2, 4, ...
    table: np.ndarray  # (trees, 2**splits) leaf values
    trees: int
    splits: int

    @classmethod
    def of(cls, ensemble: TreeEnsemble) -> _LeafCodes | None:
        splits_of = [_splits_under(ensemble, int(root)) for root in ensemble.roots]
        splits = max((len(s) for s in splits_of), default=0)
        if splits > MAX_CODED_SPLITS or not splits_of:
            return None
        trees = len(splits_of)
        feature = np.zeros((trees, splits), dtype=np.int64)
        threshold = np.zeros((trees, splits), dtype=np.float64)
        table = np.zeros((trees, 1 << splits), dtype=np.float64)
        for tree, (root, nodes) in enumerate(zip(ensemble.roots, splits_of, strict=True)):
            position = {node: bit for bit, node in enumerate(nodes)}
            feature[tree, : len(nodes)] = ensemble.feature[nodes]
            threshold[tree, : len(nodes)] = ensemble.threshold[nodes]
            for code in range(1 << splits):
                node = int(root)
                while ensemble.feature[node] >= 0:
                    left = code >> position[node] & 1
                    node = int(ensemble.left[node] if left else ensemble.right[node])
                table[tree, code] = ensemble.value[node]
        return cls(
            feature=feature.ravel(),
            threshold=threshold.ravel(),
            weights=1 << np.arange(splits, dtype=np.int64),
            table=table,
            trees=trees,
            splits=splits,
        )

    def leaf_values(self, rows: np.ndarray) -> np.ndarray:
        """(rows, trees): the value of the leaf each row reaches in each tree."""
        goes_left = rows[:, self.feature] <= self.threshold
        codes = goes_left.reshape(rows.shape[0], self.trees, self.splits) @ self.weights
        values: np.ndarray = self.table[np.arange(self.trees), codes]
        return values


def _splits_under(ensemble: TreeEnsemble, root: int) -> list[int]:
    """The split (non-leaf) nodes of one tree, root first."""
    found: list[int] = []
    pending = [root]
    while pending:
        node = pending.pop()
        if ensemble.feature[node] >= 0:
            found.append(node)
            pending += [int(ensemble.right[node]), int(ensemble.left[node])]
    return found


@dataclass(frozen=True)
class LinearModel:
    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    bias: float = 0.0

    def predict(self, rows: np.ndarray) -> np.ndarray:
        scores: np.ndarray = ((rows - self.mean) / self.scale) @ self.weights + self.bias
        return scores

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LinearModel:
        return cls(
            weights=np.asarray(data["weights"], dtype=np.float64),
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            bias=float(data.get("bias", 0.0)),
        )


@dataclass(frozen=True)
class TargetModel:
    """The model of one target (files or symbols) and the columns of the features it reads."""

    predictor: TreeEnsemble | LinearModel
    columns: np.ndarray  # indices into FILE_FEATURES / SYMBOL_FEATURES

    def score(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        if len(rows) == 0:
            return np.zeros(0)
        matrix = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)
        return self.predictor.predict(matrix[:, self.columns])

    @classmethod
    def from_json(cls, data: Mapping[str, Any], known: Sequence[str], target: str) -> TargetModel:
        names = list(data["features"])
        unknown = [name for name in names if name not in known]
        if unknown:
            raise RankerModelError(
                f"the {target} model reads features this gateway does not compute: "
                f"{', '.join(unknown)}"
            )
        kind = data.get("kind")
        predictor: TreeEnsemble | LinearModel
        if kind == "trees":
            predictor = TreeEnsemble.from_json(data["trees"])
        elif kind == "linear":
            predictor = LinearModel.from_json(data["linear"])
        else:
            raise RankerModelError(f"the {target} model has an unknown kind {kind!r}")
        columns = np.asarray([list(known).index(name) for name in names], dtype=np.int64)
        return cls(predictor=predictor, columns=columns)


@dataclass(frozen=True)
class RankerModel:
    version: str
    files: TargetModel
    symbols: TargetModel
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RankerModel:
        if data.get("format") != MODEL_FORMAT:
            raise RankerModelError(
                f"ranker model format {data.get('format')!r}; this gateway reads {MODEL_FORMAT}"
            )
        try:
            return cls(
                version=str(data["version"]),
                files=TargetModel.from_json(data["files"], FILE_FEATURES, "file"),
                symbols=TargetModel.from_json(data["symbols"], SYMBOL_FEATURES, "symbol"),
                metadata=dict(data.get("metadata", {})),
            )
        except (KeyError, TypeError, ValueError, IndexError) as error:
            if isinstance(error, RankerModelError):
                raise
            raise RankerModelError(f"malformed ranker model: {error}") from error

    def reads(self, prefix: str) -> bool:
        """Whether either target reads a feature whose name starts with ``prefix``."""
        return any(
            names[int(column)].startswith(prefix)
            for target, names in ((self.files, FILE_FEATURES), (self.symbols, SYMBOL_FEATURES))
            for column in target.columns
        )

    @classmethod
    def load(cls, path: Path | None = None) -> RankerModel:
        """The model at ``path``, or the one shipped with the gateway."""
        try:
            if path is None:
                text = resources.files("locus.gateway.models").joinpath(SHIPPED_MODEL).read_text()
            else:
                text = path.read_text()
            data = json.loads(text)
        except (OSError, json.JSONDecodeError) as error:
            where = path or f"locus.gateway.models/{SHIPPED_MODEL}"
            raise RankerModelError(f"cannot read the ranker model {where}: {error}") from error
        return cls.from_json(data)


class LearnedRanking:
    """Ranker: every candidate of the hand ranking, scored by the model."""

    def __init__(self, model: RankerModel, hand: RankingV1) -> None:
        self.model = model
        self.hand = hand
        self.name = f"learned:{model.version}"
        # Locate asks ingestion for the candidates' change history only for a model that
        # reads it (or for a candidates dump).
        self.uses_history = model.reads("history_")
        # Likewise retrieval's vector similarity of the best candidates (ScoreSymbols).
        self.uses_vectors = any(model.reads(name) for name in VECTOR_SIMILARITY_FEATURES)

    def rank(self, request: RankingInput) -> Ranking:
        candidates = candidate_features(request, self.hand)
        ranking = candidates.ranking
        file_scores = self.model.files.score(candidates.file_rows)
        # Files first: the symbol model reads the file model's verdict on each symbol's file.
        symbol_rows = with_file_scores(
            candidates.symbol_rows,
            [s.symbol.file_id for s in ranking.symbols],
            [f.file_id for f in ranking.files],
            file_scores,
        )
        symbol_scores = self.model.symbols.score(symbol_rows)
        # Ties keep the hand ranking's order (a stable sort of its list). Only the symbols the
        # answer shows are rebuilt with their new score (a thousand candidates, a few dozen
        # shown).
        symbol_order = np.argsort(-symbol_scores, kind="stable").tolist()
        if request.cues.about_docs:
            # No training split asks what the documentation says (every instance is a bug
            # report), so the model never learned to put documents first when asked for them:
            # such a question lists the document sections first (and, below, the documentation
            # files first), each group in the model's order (a stable sort keeps it).
            symbol_order.sort(key=lambda i: ranking.symbols[i].symbol.kind not in DOCUMENT_KINDS)
        rescored: dict[int, RankedSymbol] = {}

        def shown(i: int) -> RankedSymbol:
            found = rescored.get(i)
            if found is None:
                found = rescored[i] = replace(ranking.symbols[i], score=float(symbol_scores[i]))
            return found

        by_file: dict[str, list[int]] = {}
        for i in symbol_order:
            by_file.setdefault(ranking.symbols[i].symbol.file_id, []).append(i)
        per_file = self.hand.weights.symbols_per_file
        file_order = np.argsort(-file_scores, kind="stable").tolist()
        if request.cues.about_docs:  # the documentation files first (see the symbols above)
            file_order.sort(
                key=lambda i: classify_path(ranking.files[i].relative_path) != PathRole.DOCS
            )
        file_order = file_order[: request.max_files]
        files = [
            replace(
                ranking.files[i],
                score=float(file_scores[i]),
                symbols=tuple(
                    shown(j) for j in by_file.get(ranking.files[i].file_id, [])[:per_file]
                ),
            )
            for i in file_order
        ]
        symbols = [shown(i) for i in symbol_order[: request.max_symbols]]
        return Ranking(files=tuple(files), symbols=tuple(symbols))
