"""Train the learned ranker (`make train-ranker`) from the candidates Locate ranked on a training
split (``collect.sh``), validate it leave-one-repository-out, and write the model the gateway
ships (``services/gateway/src/locus/gateway/models/ranker.json``) with a report.

Features come from ``locus.gateway.domain.features.candidate_features`` — the code the gateway
runs — over each dumped ``RankingInput``; labels from the split's gold (a file is positive when
the fix changed it, a symbol when its harness function id is a gold function). Metrics are the
harness's own (``locbench.score_instance``), BM25 from the harness runs of the same instances.

Usage: python bench/ranker/train.py [--candidates DIR ...] [--split FILE ...] [--out MODEL]
       [--report FILE] [--model trees|linear] [--no-loro] [--ablations] [--without GROUP] [--check]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import multiprocessing
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from locus.cli.locbench import function_id
from locus.gateway.domain.candidates import candidates_from_json
from locus.gateway.domain.features import (
    FILE_FEATURES,
    FILE_MODEL_FEATURES,
    SYMBOL_FEATURES,
    VECTOR_SIMILARITY_FEATURES,
    candidate_features,
    with_file_scores,
)
from locus.gateway.domain.learned_ranking import MODEL_FORMAT, RankerModel
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_weights import RankingWeights

ROOT = Path(__file__).resolve().parents[2]
SHARED_BENCH = ROOT.parent / "shared" / "bench"
DEFAULT_MODEL = ROOT / "services/gateway/src/locus/gateway/models/ranker.json"
SEED = 7
LGB_PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [5, 10],
    # Chosen by leave-one-repository-out on the training split (bench/ranker/README.md): 15
    # leaves / 300 rounds / 20 per leaf overfit the repositories it saw. Rounds chosen again on
    # the 982 instances of session 25 (repository-grouped 5-fold CV, bench/RESULTS.md): 100 ->
    # 300 gained about two points of both fold means; 500 lost Func Acc@10 again.
    "num_leaves": 7,
    "learning_rate": 0.05,
    "min_data_in_leaf": 50,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "lambdarank_truncation_level": 30,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
    "seed": SEED,
    "verbosity": -1,
    "rounds": 300,
}
ABLATIONS = {
    "without graph": ("graph", "cue_graph", "best_symbol_cue_graph", "graph_symbols"),
    "without path roles": ("role_", "path_role_penalty"),
    "without vectors": ("vector", "q_vectors_present"),
    "without the hand score": ("v1_", "file_v1_"),
    "without whole files": ("whole_file_",),
    "without the question's parts": ("part_",),
    "without the parts' chunks": ("part_title_chunk_", "part_opening_chunk_"),
    "without change history": ("history_",),
    "without the file model's verdict": ("file_model_",),
}
# How many boosters (seeds seed, seed + 1, ...) each model averages. LightGBM's seed alone moved
# LORO by up to a point pooled and dev by up to 4 instances (bench/RESULTS.md, session 19);
# the mean of three cuts that dependence at three times the trees (``--bag``).
BAG = {"models": 3}
# Out-of-fold file scores for the symbol model's training rows: the file model of each fold
# never saw the repositories it scores (folds are whole repositories, assigned in order).
FILE_MODEL_FOLDS = 5
# The last scoring's first 100 files and functions of each instance (``--scores-out``).
RANKED: dict[str, tuple[list[str], list[str]]] = {}
# A repository's instances together weigh at most this many instances' worth in training (0: every
# instance weighs 1). The held-out measure averages over repositories, and a few repositories
# bring three times the instances of the rest (``--repo-cap``).
WEIGHTING = {"repo_cap": 0}
# Leave-one-repository-out folds trained at once (``--jobs``; one process each).
JOBS = {"workers": os.cpu_count() or 1}


def instance_weights(instances: list[Instance]) -> list[float]:
    """Each instance's training weight: 1, or its share of its repository's capped weight,
    scaled so the weights average 1 (LightGBM's leaf sizes and regularization stay comparable)."""
    cap = WEIGHTING["repo_cap"]
    if cap <= 0 or not instances:
        return [1.0] * len(instances)
    sizes = Counter(i.repo for i in instances)
    raw = [min(1.0, cap / sizes[i.repo]) for i in instances]
    mean = sum(raw) / len(raw)
    return [w / mean for w in raw]


@dataclass
class Instance:
    instance_id: str
    repo: str
    gold: dict[str, Any]
    file_rows: np.ndarray
    file_labels: np.ndarray
    file_paths: list[str]
    symbol_rows: np.ndarray
    symbol_labels: np.ndarray
    symbol_ids: list[str]  # the harness function id, "" for classes and modules
    symbol_paths: list[str]  # each symbol's file (relative path)
    split: str  # the split's file name
    language: str  # the row's language ("Python" for rows without one)
    # For a copy of a dump with its vector similarities taken out (the searchable level, before
    # the vectors lane is done): the original's id. Trained on, scored apart.
    copy_of: str = ""
    has_vectors: bool = False  # the dump holds the candidates' vector similarity


# A copy of each dump that has vector similarities, without them: the model meets projects
# whose vectors are not in yet, and learns that case from the same instances.
WITHOUT_VECTORS = "#without-vectors"


def load_locbench() -> Any:
    if str(SHARED_BENCH) not in sys.path:
        sys.path.insert(0, str(SHARED_BENCH))
    import locbench  # type: ignore[import-not-found]

    return locbench


def gold_matcher(row: dict[str, Any]) -> Any:
    """Whether a harness function id is one of the row's gold functions, by the harness's own
    rule: exact ids for Python rows, its tolerant ``func_match`` for other languages."""
    gold_functions = set(row.get("gold_functions") or [])
    locbench = load_locbench()
    if locbench.is_python_row(row):
        return gold_functions.__contains__
    return lambda i: bool(i) and any(locbench.func_match(i, g) for g in gold_functions)


def load_instances(
    candidates: Path, split: Path, vectorless_copies: bool = False
) -> list[Instance]:
    gold = {}
    for line in split.read_text().splitlines():
        row = json.loads(line)
        gold[row["instance_id"]] = row
    hand = RankingV1(RankingWeights())
    instances = []
    for path in sorted(candidates.glob("*.json.gz")):
        record = json.loads(gzip.decompress(path.read_bytes()))
        row = gold.get(record["instance_id"])
        if row is None:
            continue
        _, request = candidates_from_json(record["candidates"])
        instances.append(instance_of(row, request, hand, split.name))
        if vectorless_copies and request.symbol_similarity:
            without = replace(request, symbol_similarity={})
            instances.append(instance_of(row, without, hand, split.name, copy=True))
    return instances


def instance_of(
    row: dict[str, Any], request: Any, hand: RankingV1, split: str, copy: bool = False
) -> Instance:
    features = candidate_features(request, hand)
    gold_files = set(row["gold_files"])
    is_gold = gold_matcher(row)
    files = features.ranking.files
    symbols = features.ranking.symbols
    ids = [
        function_id(s.symbol.kind, s.symbol.scope_name, s.symbol.relative_path, s.symbol.language)
        for s in symbols
    ]
    return Instance(
        instance_id=row["instance_id"] + (WITHOUT_VECTORS if copy else ""),
        repo=row["repo"],
        gold=row,
        file_rows=np.asarray(features.file_rows, dtype=np.float64).reshape(
            len(files), len(FILE_FEATURES)
        ),
        file_labels=np.asarray([f.relative_path in gold_files for f in files], dtype=float),
        file_paths=[f.relative_path for f in files],
        symbol_rows=np.asarray(features.symbol_rows, dtype=np.float64).reshape(
            len(symbols), len(SYMBOL_FEATURES)
        ),
        symbol_labels=np.asarray([is_gold(i) for i in ids], dtype=float),
        symbol_ids=ids,
        symbol_paths=[s.symbol.relative_path for s in symbols],
        split=split,
        language=row.get("language") or "Python",
        copy_of=row["instance_id"] if copy else "",
        has_vectors=bool(request.symbol_similarity),
    )


def candidate_recall(instances: list[Instance]) -> dict[str, float]:
    """Share of instances whose gold files (functions) are all among the candidates, and the
    share of gold files (functions) that are: the ceiling any ranking of them can reach."""
    with_functions = [i for i in instances if i.gold.get("gold_functions")]
    files_all = [set(i.gold["gold_files"]) <= set(i.file_paths) for i in instances]
    files_each = [p in i.file_paths for i in instances for p in i.gold["gold_files"]]
    # Per instance, per gold function: whether a candidate matches it (the harness's rule).
    found = [
        [
            any(map(gold_matcher({**i.gold, "gold_functions": [g]}), i.symbol_ids))
            for g in i.gold["gold_functions"]
        ]
        for i in with_functions
    ]
    functions_all = [all(each) for each in found]
    functions_each = [hit for each in found for hit in each]
    return {
        "instances with every gold file among the candidates": 100 * np.mean(files_all),
        "gold files among the candidates": 100 * np.mean(files_each),
        "instances with every gold function among the candidates": 100 * np.mean(functions_all),
        "gold functions among the candidates": 100 * np.mean(functions_each),
        "candidate files per instance (median)": float(
            np.median([len(i.file_paths) for i in instances])
        ),
        "candidate functions per instance (median)": float(
            np.median([sum(1 for x in i.symbol_ids if x) for i in instances])
        ),
    }


def training_hash(sources: list[tuple[Path, Path]]) -> str:
    """sha256 over each (candidates, split) pair: the split, then every dump by name. One pair
    hashes as it did before there could be several."""
    digest = hashlib.sha256()
    for candidates, split in sources:
        digest.update(split.read_bytes())
        for path in sorted(candidates.glob("*.json.gz")):
            digest.update(path.name.encode())
            digest.update(hashlib.sha256(gzip.decompress(path.read_bytes())).digest())
    return digest.hexdigest()


# ---------------------------------------------------------------- models


def columns_without(names: tuple[str, ...], dropped: tuple[str, ...]) -> list[int]:
    return [i for i, n in enumerate(names) if not any(n.startswith(d) for d in dropped)]


def fit_trees(
    groups: list[tuple[np.ndarray, np.ndarray]],
    columns: list[int],
    weights: list[float] | None = None,
) -> Any:
    import lightgbm as lgb

    weighted = zip(groups, weights or [1.0] * len(groups), strict=True)
    usable = [(x, y, w) for (x, y), w in weighted if len(y) > 1 and y.any()]
    data = lgb.Dataset(
        np.vstack([x[:, columns] for x, _, _ in usable]),
        label=np.concatenate([y for _, y, _ in usable]),
        group=[len(y) for _, y, _ in usable],
        # A query's weight on each of its rows (LightGBM's lambdarank scales its gradients).
        weight=None
        if weights is None
        else np.concatenate([np.full(len(y), w) for _, y, w in usable]),
        free_raw_data=False,
    )
    params = {k: v for k, v in LGB_PARAMS.items() if k != "rounds"}
    # One booster per seed (``--bag``): their mean is the model; one seed is the usual model.
    return [
        lgb.train({**params, "seed": params["seed"] + k}, data, LGB_PARAMS["rounds"])
        for k in range(BAG["models"])
    ]


def fit_linear(
    groups: list[tuple[np.ndarray, np.ndarray]],
    columns: list[int],
    weights: list[float] | None = None,
) -> dict[str, Any]:
    """Pairwise logistic regression (RankNet with a linear scorer), full-batch gradient descent
    on every (positive, negative) pair of a group, standardized features, L2."""
    if weights is not None and any(w != 1.0 for w in weights):
        raise SystemExit("--repo-cap trains trees only")
    matrix = np.vstack([x[:, columns] for x, _ in groups])
    mean = matrix.mean(axis=0)
    scale = matrix.std(axis=0)
    scale[scale == 0] = 1.0
    differences = []
    for x, y in groups:
        if not y.any() or y.all():
            continue
        z = (x[:, columns] - mean) / scale
        positives, negatives = z[y > 0], z[y == 0]
        differences.append((positives[:, None, :] - negatives[None, :, :]).reshape(-1, z.shape[1]))
    pairs = np.vstack(differences)
    weights = np.zeros(pairs.shape[1])
    for _ in range(400):
        margin = pairs @ weights
        gradient = -(pairs * (1 / (1 + np.exp(margin)))[:, None]).mean(axis=0) + 1e-3 * weights
        weights -= 0.5 * gradient
    return {"weights": weights.tolist(), "mean": mean.tolist(), "scale": scale.tolist()}


def predict(model: Any, kind: str, rows: np.ndarray, columns: list[int]) -> np.ndarray:
    if len(rows) == 0:
        return np.zeros(0)
    if kind == "trees":
        return np.mean([b.predict(rows[:, columns], num_threads=1) for b in model], axis=0)
    z = (rows[:, columns] - np.asarray(model["mean"])) / np.asarray(model["scale"])
    return z @ np.asarray(model["weights"])


def flatten_trees(boosters: list[Any]) -> dict[str, Any]:
    """LightGBM's trees as the flat node table ``learned_ranking.TreeEnsemble`` evaluates: every
    booster's trees, each leaf divided by the number of boosters (their mean; one booster is
    written as it is)."""
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    roots: list[int] = []
    depth = 0

    def add(node: dict[str, Any], level: int) -> int:
        nonlocal depth
        depth = max(depth, level)
        index = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(index)
        right.append(index)
        value.append(0.0)
        if "leaf_value" in node:
            value[index] = float(node["leaf_value"]) / len(boosters)
            return index
        if node["decision_type"] != "<=":
            raise ValueError(f"unsupported split {node['decision_type']}")
        feature[index] = int(node["split_feature"])
        threshold[index] = float(node["threshold"])
        left[index] = add(node["left_child"], level + 1)
        right[index] = add(node["right_child"], level + 1)
        return index

    for booster in boosters:
        for tree in booster.dump_model()["tree_info"]:
            roots.append(add(tree["tree_structure"], 0))
    return {
        "feature": feature,
        "threshold": threshold,
        "left": left,
        "right": right,
        "value": value,
        "roots": roots,
        "depth": depth,
    }


def target_json(model: Any, kind: str, names: tuple[str, ...], columns: list[int]) -> dict:
    data: dict[str, Any] = {"kind": kind, "features": [names[i] for i in columns]}
    if kind == "trees":
        data["trees"] = flatten_trees(model)
    else:
        data["linear"] = model
    return data


# ---------------------------------------------------------------- evaluation


def ranked_lists(
    instance: Instance, file_scores: np.ndarray, symbol_scores: np.ndarray
) -> tuple[list[str], list[str]]:
    # A stable sort: ties keep the hand ranking's order, as the gateway does.
    files = [
        instance.file_paths[i]
        for i in sorted(range(len(file_scores)), key=lambda i: -file_scores[i])
    ]
    order = sorted(range(len(symbol_scores)), key=lambda i: -symbol_scores[i])
    functions = list(dict.fromkeys(instance.symbol_ids[i] for i in order if instance.symbol_ids[i]))
    return files[:100], functions[:100]


def hand_lists(instance: Instance) -> tuple[list[str], list[str]]:
    files = instance.file_paths[:100]
    functions = list(dict.fromkeys(i for i in instance.symbol_ids if i))
    return files, functions[:100]


METRICS = ("acc@1", "acc@3", "acc@5", "acc@10", "mrr", "facc@5", "facc@10")


def summarize(scored: list[dict[str, float]], locbench: Any) -> dict[str, float]:
    rows = [{"m": m, "query_s": 0.0} for m in scored]
    summary = locbench.summarize(rows)
    return {k: 100 * summary[k] if k not in ("n", "n_fn") else summary[k] for k in summary}


def reads_file_model(symbol_columns: list[int]) -> bool:
    return any(SYMBOL_FEATURES[i] in FILE_MODEL_FEATURES for i in symbol_columns)


def stacked_rows(instance: Instance, file_scores: np.ndarray) -> np.ndarray:
    """The instance's symbol rows with the file model's verdict, as the gateway fills them."""
    return with_file_scores(
        instance.symbol_rows, instance.symbol_paths, instance.file_paths, file_scores
    )


def out_of_fold_file_scores(
    instances: list[Instance], kind: str, file_columns: list[int]
) -> dict[str, np.ndarray]:
    fit = fit_trees if kind == "trees" else fit_linear
    repos = sorted({i.repo for i in instances})
    fold_of = {repo: n % FILE_MODEL_FOLDS for n, repo in enumerate(repos)}
    scores: dict[str, np.ndarray] = {}
    for fold in range(FILE_MODEL_FOLDS):
        rest = [i for i in instances if fold_of[i.repo] != fold]
        model = fit(
            [(i.file_rows, i.file_labels) for i in rest], file_columns, instance_weights(rest)
        )
        for instance in instances:
            if fold_of[instance.repo] == fold:
                scores[instance.instance_id] = predict(
                    model, kind, instance.file_rows, file_columns
                )
    return scores


def train_both(
    instances: list[Instance], kind: str, file_columns: list[int], symbol_columns: list[int]
) -> tuple[Any, Any]:
    fit = fit_trees if kind == "trees" else fit_linear
    weights = instance_weights(instances)
    files = fit([(i.file_rows, i.file_labels) for i in instances], file_columns, weights)
    if reads_file_model(symbol_columns):
        verdicts = out_of_fold_file_scores(instances, kind, file_columns)
        groups = [(stacked_rows(i, verdicts[i.instance_id]), i.symbol_labels) for i in instances]
    else:
        groups = [(i.symbol_rows, i.symbol_labels) for i in instances]
    symbols = fit(groups, symbol_columns, weights)
    return files, symbols


def score_with(
    instances: list[Instance],
    models: tuple[Any, Any],
    kind: str,
    file_columns: list[int],
    symbol_columns: list[int],
    locbench: Any,
) -> dict[str, dict[str, float]]:
    out = {}
    for instance in instances:
        file_scores = predict(models[0], kind, instance.file_rows, file_columns)
        symbol_rows = stacked_rows(instance, file_scores)
        files, functions = ranked_lists(
            instance, file_scores, predict(models[1], kind, symbol_rows, symbol_columns)
        )
        out[instance.instance_id] = locbench.score_instance(instance.gold, files, functions)
        RANKED[instance.instance_id] = (files[:100], functions[:100])
    return out


# What the fold workers read: set before the pool forks, so the instances are not pickled.
_FOLD_STATE: dict[str, Any] = {}


def _one_fold(repo: str) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """Train on every repository but ``repo``, score ``repo`` (one LORO fold)."""
    instances, kind, file_columns, symbol_columns, locbench = _FOLD_STATE["args"]
    rest = [i for i in instances if i.repo != repo]
    held_out = [i for i in instances if i.repo == repo]
    models = train_both(rest, kind, file_columns, symbol_columns)
    scored = score_with(held_out, models, kind, file_columns, symbol_columns, locbench)
    return scored, {i.instance_id: RANKED[i.instance_id] for i in held_out}


def leave_one_repository_out(
    instances: list[Instance], kind: str, dropped: tuple[str, ...], locbench: Any
) -> dict[str, dict[str, float]]:
    """Each repository scored by models trained on the others. Folds are independent and each
    booster is single-threaded and deterministic, so ``--jobs`` workers give the same scores."""
    file_columns = columns_without(FILE_FEATURES, dropped)
    symbol_columns = columns_without(SYMBOL_FEATURES, dropped)
    repos = sorted({i.repo for i in instances})
    _FOLD_STATE["args"] = (instances, kind, file_columns, symbol_columns, locbench)
    scored: dict[str, dict[str, float]] = {}
    try:
        if JOBS["workers"] > 1:
            with multiprocessing.get_context("fork").Pool(JOBS["workers"]) as pool:
                folds = list(pool.imap_unordered(_one_fold, repos))
        else:
            folds = [_one_fold(repo) for repo in repos]
    finally:
        _FOLD_STATE.clear()
    for fold_scores, ranked in folds:
        scored.update(fold_scores)
        RANKED.update(ranked)
    return scored


def bm25_of(runs: list[Path]) -> dict[str, dict[str, float]]:
    """The harness's BM25 metrics per instance (``keep_bm25.py``; a later row wins)."""
    found: dict[str, dict[str, float]] = {}
    for path in (r for r in runs if r.exists()):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if not row.get("error"):
                found[row["instance_id"]] = row["m"]
    return found


def table(rows: list[tuple[str, dict[str, float]]]) -> str:
    header = "| ranker | n | File Acc@1 | @3 | @5 | @10 | MRR | n_fn | Func Acc@5 | @10 |"
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in rows:
        cells = [f"{s[k]:.1f}" for k in ("acc@1", "acc@3", "acc@5", "acc@10", "mrr")]
        functions = [f"{s[k]:.1f}" for k in ("facc@5", "facc@10")]
        lines.append(
            f"| {name} | {s['n']} | {' | '.join(cells)} | {s['n_fn']} | {' | '.join(functions)} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--candidates",
        type=Path,
        nargs="+",
        default=[
            ROOT / "bench/ranker/candidates/train",
            ROOT / "bench/ranker/candidates/train-multilang",
        ],
        help="dump folders (collect.sh), each paired with the --split of the same position",
    )
    parser.add_argument(
        "--split",
        type=Path,
        nargs="+",
        default=[SHARED_BENCH / "train.jsonl", SHARED_BENCH / "train-multilang.jsonl"],
    )
    parser.add_argument(
        "--bm25",
        type=Path,
        help="the harness's BM25 rows of the same instances (default: <candidates>.bm25.jsonl)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--report", type=Path, default=ROOT / "bench/ranker/REPORT.md")
    parser.add_argument("--model", choices=("trees", "linear"), default="trees")
    parser.add_argument("--no-loro", action="store_true", help="skip leave-one-repository-out")
    parser.add_argument("--ablations", action="store_true", help="LORO without feature groups")
    parser.add_argument(
        "--ablation",
        action="append",
        choices=list(ABLATIONS),
        default=[],
        help="LORO without this feature group only (repeatable)",
    )
    parser.add_argument(
        "--without",
        action="append",
        choices=list(ABLATIONS),
        default=[],
        help="train the model (and its LORO) without this feature group (repeatable)",
    )
    parser.add_argument("--compare-linear", action="store_true")
    parser.add_argument(
        "--vector-similarity",
        action="store_true",
        help="train on the vector similarity columns too (and on a copy of each dump that has "
        "them, without them, for projects whose vectors are not in yet)",
    )
    parser.add_argument(
        "--no-vectorless-copies",
        action="store_true",
        help="with --vector-similarity: no copies without vectors",
    )
    parser.add_argument(
        "--repo-cap",
        type=int,
        default=WEIGHTING["repo_cap"],
        help="a repository's instances weigh at most this many instances' worth (0: all weigh 1)",
    )
    parser.add_argument(
        "--scores-out", type=Path, help="each instance's LORO and BM25 scores (JSON lines)"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=JOBS["workers"],
        help="leave-one-repository-out folds trained at once (default: the CPU count)",
    )
    parser.add_argument("--version", default="")
    parser.add_argument("--rounds", type=int, default=LGB_PARAMS["rounds"])
    parser.add_argument("--leaves", type=int, default=LGB_PARAMS["num_leaves"])
    parser.add_argument("--min-leaf", type=int, default=LGB_PARAMS["min_data_in_leaf"])
    parser.add_argument("--learning-rate", type=float, default=LGB_PARAMS["learning_rate"])
    parser.add_argument(
        "--seed", type=int, default=SEED, help="LightGBM's seed (the spread of LORO over seeds)"
    )
    parser.add_argument(
        "--bag",
        type=int,
        default=BAG["models"],
        help="average this many boosters of consecutive seeds (1: a single booster)",
    )
    args = parser.parse_args()
    BAG["models"] = args.bag
    JOBS["workers"] = max(1, args.jobs)
    WEIGHTING["repo_cap"] = args.repo_cap
    LGB_PARAMS.update(
        seed=args.seed,
        num_leaves=args.leaves,
        min_data_in_leaf=args.min_leaf,
        learning_rate=args.learning_rate,
        rounds=args.rounds,
    )
    locbench = load_locbench()
    started = time.perf_counter()
    if len(args.candidates) != len(args.split):
        parser.error("give one --split for each --candidates folder, in the same order")
    sources = list(zip(args.candidates, args.split, strict=True))
    # The question's vector similarity (retrieval ScoreSymbols; dumps get it from vectors.py) was
    # measured and not adopted (bench/RESULTS.md): without --vector-similarity its columns are
    # left out everywhere, and no vectorless copies are made.
    left_out = () if args.vector_similarity else VECTOR_SIMILARITY_FEATURES
    left_out += tuple(prefix for name in args.without for prefix in ABLATIONS[name])
    instances = [
        i
        for c, split in sources
        for i in load_instances(c, split, args.vector_similarity and not args.no_vectorless_copies)
    ]
    copies = [i for i in instances if i.copy_of]
    originals = [i for i in instances if not i.copy_of]
    repos = sorted({i.repo for i in instances})
    print(
        f"{len(originals)} instances from {len(repos)} repositories, {len(copies)} with vector "
        f"similarities ({time.perf_counter() - started:.0f} s of feature extraction)",
        flush=True,
    )
    report = [
        "# Learned ranker: training report\n",
        f"{len(originals)} instances, {len(repos)} repositories of "
        f"{' + '.join(f'`{split.name}`' for split in args.split)} "
        "(candidates dumped by `bench/ranker/collect.sh` at the searchable level; "
        f"{sum(i.has_vectors for i in originals)} of them hold the candidates' vector "
        "similarity, from `bench/ranker/vectors.py`; "
        + (
            f"this model reads it, and trained on {len(copies)} copies without it too, as the "
            "searchable level sees them).\n"
            if args.vector_similarity
            else "this model does not read it: `--vector-similarity` trains with it).\n"
        ),
    ]

    recall = candidate_recall(originals)
    report.append("## Candidate recall (what any ranking of the candidates can reach)\n")
    report.append("\n".join(f"- {name}: {value:.1f}" for name, value in recall.items()) + "\n")
    print("\n".join(report[-1:]), flush=True)
    bm25 = bm25_of(
        [args.bm25] if args.bm25 else [c.with_name(c.name + ".bm25.jsonl") for c in args.candidates]
    )
    with_bm25 = [i for i in originals if i.instance_id in bm25]
    hand = {i.instance_id: locbench.score_instance(i.gold, *hand_lists(i)) for i in originals}
    loro_rows: list[tuple[str, dict[str, float]]] = []

    def over(scored: dict[str, dict[str, float]]) -> dict[str, float]:
        return summarize([scored[i.instance_id] for i in with_bm25], locbench)

    per_fold: dict[str, dict[str, dict[str, float]]] = {}
    if not args.no_loro:
        kinds = [args.model] + (
            ["linear"] if args.compare_linear and args.model != "linear" else []
        )
        for kind in kinds:
            scored = leave_one_repository_out(instances, kind, left_out, locbench)
            per_fold[kind] = scored
            if args.scores_out and kind == args.model:
                with args.scores_out.open("w") as out:
                    for i in with_bm25:
                        row = {"instance_id": i.instance_id, "repo": i.repo, "split": i.split}
                        learned = {f"learned_{k}": v for k, v in scored[i.instance_id].items()}
                        plain = {f"bm25_{k}": v for k, v in bm25[i.instance_id].items()}
                        files, functions = RANKED[i.instance_id]
                        lists = {"files": files, "functions": functions}
                        out.write(json.dumps({**row, **learned, **plain, **lists}) + "\n")
            loro_rows.append(
                (
                    f"learned ({kind}), leave-one-repository-out",
                    summarize([scored[i.instance_id] for i in with_bm25], locbench),
                )
            )
            if copies:  # a dump without any similarity is its own searchable level
                searchable = [
                    scored.get(i.instance_id + WITHOUT_VECTORS, scored[i.instance_id])
                    for i in with_bm25
                ]
                loro_rows.append(
                    (
                        f"learned ({kind}), the same instances without vectors (searchable level)",
                        summarize(searchable, locbench),
                    )
                )
        loro_rows.insert(
            0,
            (
                "hand ranking (RankingV1)",
                summarize([hand[i.instance_id] for i in with_bm25], locbench),
            ),
        )
        loro_rows.insert(
            0,
            (
                "bm25 (harness, same run)",
                summarize([bm25[i.instance_id] for i in with_bm25], locbench),
            ),
        )
        if args.ablations or args.ablation:
            for name, dropped in ABLATIONS.items():
                if not args.ablations and name not in args.ablation:
                    continue
                scored = leave_one_repository_out(
                    instances, args.model, left_out + dropped, locbench
                )
                loro_rows.append(
                    (
                        f"learned, {name}",
                        summarize([scored[i.instance_id] for i in with_bm25], locbench),
                    )
                )
        loro_start = len(report)
        report.append(
            "## Leave-one-repository-out\n\nTrained on the other repositories, tested on the "
            "held-out one.\n"
        )
        report.append(f"Instances with a BM25 row from the same harness runs: {len(with_bm25)}.\n")
        report.append(table(loro_rows) + "\n")
        # Per fold: File Acc@5 and Func Acc@10, BM25 vs learned.
        scored = per_fold[args.model]
        fold_lines = [
            "| held-out repository | n | BM25 File Acc@5 | learned | BM25 Func Acc@10 | learned |",
            "|---|---|---|---|---|---|",
        ]
        gains: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
        for repo in repos:
            members = [i for i in with_bm25 if i.repo == repo]
            if not members:
                continue
            b = summarize([bm25[i.instance_id] for i in members], locbench)
            m = summarize([scored[i.instance_id] for i in members], locbench)
            gains_file, gains_func = gains[members[0].split]
            gains_file.append(m["acc@5"] - b["acc@5"])
            if b["n_fn"]:
                gains_func.append(m["facc@10"] - b["facc@10"])
            fold_lines.append(
                f"| {repo} | {len(members)} | {b['acc@5']:.1f} | {m['acc@5']:.1f} "
                f"| {b['facc@10']:.1f} | {m['facc@10']:.1f} |"
            )
        report.append("### Per fold\n")
        report.append("\n".join(fold_lines) + "\n")
        for split, (gains_file, gains_func) in sorted(gains.items()):
            report.append(
                f"Averaged over the folds of `{split}`: File Acc@5 "
                f"{statistics.mean(gains_file):+.1f} points over BM25, Func Acc@10 "
                f"{statistics.mean(gains_func):+.1f} points ({len(gains_file)} folds, "
                f"{len(gains_func)} with gold functions).\n"
            )
        languages = sorted({i.language for i in with_bm25})
        if len(languages) > 1:
            language_rows = []
            for language in languages:
                members = [i for i in with_bm25 if i.language == language]
                language_rows.append(
                    (
                        f"bm25, {language}",
                        summarize([bm25[i.instance_id] for i in members], locbench),
                    )
                )
                language_rows.append(
                    (
                        f"learned, {language}",
                        summarize([scored[i.instance_id] for i in members], locbench),
                    )
                )
            report.append("### Per language\n")
            report.append(table(language_rows) + "\n")
        print("\n".join(report[loro_start + 2 :]), flush=True)

    file_columns = columns_without(FILE_FEATURES, left_out)
    symbol_columns = columns_without(SYMBOL_FEATURES, left_out)
    models = train_both(instances, args.model, file_columns, symbol_columns)
    data_hash = training_hash(sources)
    files_json = target_json(models[0], args.model, FILE_FEATURES, file_columns)
    symbols_json = target_json(models[1], args.model, SYMBOL_FEATURES, symbol_columns)
    # The version names the data, the features read, the kind and its parameters, whether
    # vectorless copies were trained on, and the fitted models themselves (the same dumps read
    # by other feature or candidate code fit other trees): any of them changed is another model.
    design = hashlib.sha256(
        json.dumps(
            [
                data_hash,
                [FILE_FEATURES[i] for i in file_columns],
                [SYMBOL_FEATURES[i] for i in symbol_columns],
                args.model,
                LGB_PARAMS if args.model == "trees" else {},
                len(copies),
                files_json,
                symbols_json,
            ]
        ).encode()
    ).hexdigest()
    version = args.version or f"{args.model}-{design[:12]}"
    model_json = {
        "format": MODEL_FORMAT,
        "version": version,
        "files": files_json,
        "symbols": symbols_json,
        "metadata": {
            "trained_on": " + ".join(split.name for split in args.split),
            "training_data_sha256": data_hash,
            "instances": len(originals),
            "vectorless_copies": len(copies),
            "repositories": repos,
            "params": LGB_PARAMS if args.model == "trees" else {"pairwise_logistic": True},
            **({"bagged_seeds": BAG["models"]} if BAG["models"] > 1 else {}),
            **({"repo_cap": WEIGHTING["repo_cap"]} if WEIGHTING["repo_cap"] > 0 else {}),
            "leave_one_repository_out": {
                name: {k: round(v, 2) for k, v in s.items()} for name, s in loro_rows
            },
        },
    }
    # The gateway's evaluator must reproduce the trainer's scores exactly.
    loaded = RankerModel.from_json(model_json)
    for instance in instances[:50]:
        symbol_rows = stacked_rows(
            instance, predict(models[0], args.model, instance.file_rows, file_columns)
        )
        for target, rows, model, columns in (
            (loaded.files, instance.file_rows, models[0], file_columns),
            (loaded.symbols, symbol_rows, models[1], symbol_columns),
        ):
            if len(rows):
                expected = predict(model, args.model, rows, columns)
                got = target.score(rows.tolist())
                if not np.allclose(expected, got, atol=1e-6):
                    raise SystemExit("the gateway's evaluator disagrees with the trainer")
    args.out.write_text(json.dumps(model_json, separators=(",", ":")) + "\n")
    print(f"model {version} -> {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")

    if args.model == "trees":
        report.append("## Feature importance (gain, share of the total)\n")
        for name, model, names, columns in (
            ("files", models[0], FILE_FEATURES, file_columns),
            ("symbols", models[1], SYMBOL_FEATURES, symbol_columns),
        ):
            gains = sum(b.feature_importance(importance_type="gain") for b in model)
            total = gains.sum() or 1.0
            top = sorted(zip(gains, [names[i] for i in columns], strict=True), reverse=True)[:15]
            shares = ", ".join(f"{n} {100 * g / total:.1f} %" for g, n in top)
            report.append(f"**{name}**: {shares}\n")
    report.append(f"Model `{version}`, training data sha256 `{data_hash}`.\n")
    args.report.write_text("\n".join(report))
    print(f"report -> {args.report} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
