"""Experiment: a cross-encoder second stage over the learned ranking (issue 10, after the
feature plateau), measured out of fold.

Stage 1 is the shipped learned ranker. Its first ``--window`` symbols become documents exactly as
the gateway's rerank stage builds them (``reranking.rerank_document``: path, lines, kind,
qualified name, then the best matching chunk's text, chunked by the ast service's own code from
the mirror at the base commit). A cross-encoder (MiniLM, fine-tuned on the training splits by
``crossencoder_gpu.py`` on a lent GPU) scores each (question, document) pair; ``combine`` learns,
on the training splits only, how to mix its score with stage 1's and reports the effect.

Honesty: stage-1 scores of training instances are leave-one-repository-out (each from a model
that never saw the instance's repository), so stage 2 learns how far to trust stage 1 from
scores it would really meet. Cross-encoder scores of training instances come from a model
fine-tuned without the instance's repository group (``fold_of``), and dev instances are scored by
a model fine-tuned on every training repository. Dev is only reported, never fitted.

Steps:
  windows  --out FILE      stage-1 windows of train + train-multilang (LORO) and dev splits
  combine  --windows FILE --scores FILE      fit the mix on train, report train (out of fold)
                                             and dev beside BM25 and stage 1
"""

from __future__ import annotations

import argparse
import json
import lzma
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from dumps import blobs, mirror_of, read_dump, split_rows, write_dump

from locus.ast.domain import UndecodableSource, extract, supported_languages
from locus.ast.settings import AstSettings
from locus.gateway.domain.candidates import candidates_from_json
from locus.gateway.domain.features import (
    FILE_FEATURES,
    SYMBOL_FEATURES,
    VECTOR_SIMILARITY_FEATURES,
    candidate_features,
)
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_weights import RankingWeights
from locus.gateway.domain.reranking import rerank_document
from locus.gateway.settings import GatewaySettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train as ranker_train
from finetune import fold_of

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "bench"
TRAIN = [("train", "train.jsonl"), ("train-multilang", "train-multilang.jsonl")]
DEV = [("dev", "dev.jsonl"), ("dev-multilang", "dev-multilang.jsonl")]
MAX_DOCUMENT_CHARS = GatewaySettings.model_fields["rerank_max_document_chars"].default
FOLDS = 3  # repository groups, as crossencoder_gpu.py forms them


def stage_one_scores(
    instances: list[ranker_train.Instance], dev: list[ranker_train.Instance]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(file scores, symbol scores) per instance: leave-one-repository-out for training
    instances, the model of every training repository for dev."""
    file_columns = ranker_train.columns_without(FILE_FEATURES, VECTOR_SIMILARITY_FEATURES)
    symbol_columns = ranker_train.columns_without(SYMBOL_FEATURES, VECTOR_SIMILARITY_FEATURES)

    def scores(models: Any, instance: ranker_train.Instance) -> tuple[np.ndarray, np.ndarray]:
        files = ranker_train.predict(models[0], "trees", instance.file_rows, file_columns)
        rows = ranker_train.stacked_rows(instance, files)
        return files, ranker_train.predict(models[1], "trees", rows, symbol_columns)

    out = {}
    repos = sorted({i.repo for i in instances})
    started = time.perf_counter()
    for n, repo in enumerate(repos, start=1):
        rest = [i for i in instances if i.repo != repo]
        models = ranker_train.train_both(rest, "trees", file_columns, symbol_columns)
        for instance in instances:
            if instance.repo == repo:
                out[instance.instance_id] = scores(models, instance)
        print(f"LORO {n}/{len(repos)} {time.perf_counter() - started:.0f} s", flush=True)
    models = ranker_train.train_both(instances, "trees", file_columns, symbol_columns)
    for instance in dev:
        out[instance.instance_id] = scores(models, instance)
    return out


def chunk_texts(contents: dict[str, bytes], languages: dict[str, str]) -> dict[tuple, str]:
    """(path, start, end) -> chunk text, by the ast service's own chunker."""
    policy = AstSettings().chunking_policy
    out: dict[tuple, str] = {}
    for path, data in contents.items():
        language = languages[path]
        if language not in supported_languages():
            continue
        try:
            analysis = extract(path, data, language, policy)
        except UndecodableSource:
            continue
        for chunk in analysis.chunks:
            out.setdefault((path, chunk.start_line, chunk.end_line), chunk.text)
    return out


def window_documents(
    ranking: Any, request: Any, window: list[int], row: dict[str, Any], mirror_root: Path
) -> tuple[list[str], list[str]]:
    """The window's documents as the rerank stage builds them today (the best retrieved chunk,
    or the header alone for a symbol retrieval did not return: a graph neighbour, a symbol
    found by name), and with the symbol's own first chunk in place of a missing one."""
    ranked = [ranking.symbols[i] for i in window]
    spans = {c.chunk_id: (c.relative_path, c.start_line, c.end_line) for c in request.chunks}
    wanted = sorted({r.symbol.relative_path for r in ranked})
    contents = blobs(mirror_of(mirror_root, row["repo"]), row["base_commit"], wanted)
    by_span = chunk_texts(contents, {r.symbol.relative_path: r.symbol.language for r in ranked})
    texts = {
        chunk_id: by_span.get(span, "") for chunk_id, span in spans.items() if span[0] in contents
    }
    first_chunk: dict[tuple[str, int], str] = {}
    for (path, start, _), text in sorted(by_span.items()):
        first_chunk.setdefault((path, start), text)
    documents, full = [], []
    for r in ranked:
        document = rerank_document(r, texts, MAX_DOCUMENT_CHARS)
        documents.append(document)
        if not document.split("\n", 1)[1]:
            own = first_chunk.get((r.symbol.relative_path, r.symbol.start_line), "")
            document = (document + own)[:MAX_DOCUMENT_CHARS]
        full.append(document)
    return documents, full


def fill(args: argparse.Namespace) -> None:
    """Recompute the documents of saved windows (the stage-1 scores are kept)."""
    hand = RankingV1(RankingWeights())
    with lzma.open(args.windows, "rt") as handle:
        records = json.load(handle)
    rows: dict[str, dict[str, Any]] = {}
    for _, split in TRAIN + DEV:
        rows.update(split_rows(SHARED / split))
    started = time.perf_counter()
    for n, record in enumerate(records, start=1):
        dump = (
            ROOT / "bench/ranker/candidates" / record["split"] / f"{record['instance_id']}.json.gz"
        )
        _, request = candidates_from_json(read_dump(dump)["candidates"])
        ranking = candidate_features(request, hand).ranking
        record["documents"], record["documents_full"] = window_documents(
            ranking, request, record["window"], rows[record["instance_id"]], args.mirror_root
        )
        if n % 100 == 0:
            print(f"{n} windows, {time.perf_counter() - started:.0f} s", flush=True)
    with lzma.open(args.out, "wt") as handle:
        json.dump(records, handle)
    print(f"{len(records)} windows -> {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")


def as_features(args: argparse.Namespace) -> None:
    """Copies of the dumps whose window symbols carry the cross-encoder's score, squashed to
    (0, 1), where the vector similarity goes: ``train.py --vector-similarity`` then learns it
    as a feature (stacking; every score is out of fold for its own instance)."""
    hand = RankingV1(RankingWeights())
    scores = json.loads(Path(args.scores).read_text())
    with lzma.open(args.windows, "rt") as handle:
        records = json.load(handle)
    for record in records:
        source = ROOT / "bench/ranker/candidates" / record["split"]
        dump = read_dump(source / f"{record['instance_id']}.json.gz")
        _, request = candidates_from_json(dump["candidates"])
        symbols = candidate_features(request, hand).ranking.symbols
        scored = scores.get(record["instance_id"], [])
        dump["candidates"]["symbol_vectors"] = {
            symbols[index].symbol.node_id: round(1.0 / (1.0 + float(np.exp(-value))), 6)
            for index, value in zip(record["window"][: args.top], scored[: args.top], strict=False)
        }
        target = args.out / record["split"]
        target.mkdir(parents=True, exist_ok=True)
        write_dump(target / f"{record['instance_id']}.json.gz", dump)
    for name, _ in TRAIN + DEV:
        bm25 = ROOT / f"bench/ranker/candidates/{name}.bm25.jsonl"
        (args.out / bm25.name).write_bytes(bm25.read_bytes())
    print(f"{len(records)} dumps with cross-encoder scores -> {args.out}")


def build_windows(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    loaded: dict[str, list[ranker_train.Instance]] = {}
    for name, split in TRAIN + DEV:
        loaded[name] = ranker_train.load_instances(
            ROOT / "bench/ranker/candidates" / name, SHARED / split
        )
        print(f"{name}: {len(loaded[name])} instances", flush=True)
    train = [i for name, _ in TRAIN for i in loaded[name]]
    dev = [i for name, _ in DEV for i in loaded[name]]
    stage_one = stage_one_scores(train, dev)
    print(f"stage 1 scored, {time.perf_counter() - started:.0f} s", flush=True)
    hand = RankingV1(RankingWeights())
    records = []
    for name, split in TRAIN + DEV:
        rows = split_rows(SHARED / split)
        by_id = {i.instance_id: i for i in loaded[name]}
        for path in sorted((ROOT / "bench/ranker/candidates" / name).glob("*.json.gz")):
            record = read_dump(path)
            instance = by_id.get(record["instance_id"])
            if instance is None:
                continue
            row = rows[instance.instance_id]
            question, request = candidates_from_json(record["candidates"])
            ranking = candidate_features(request, hand).ranking
            file_scores, symbol_scores = stage_one[instance.instance_id]
            order = sorted(range(len(symbol_scores)), key=lambda i: -symbol_scores[i])
            window = order[: args.window]
            documents, full = window_documents(ranking, request, window, row, args.mirror_root)
            records.append(
                {
                    "instance_id": instance.instance_id,
                    "repo": instance.repo,
                    "split": name,
                    "question": question,
                    "window": window,
                    "documents": documents,
                    "documents_full": full,
                    "labels": [float(instance.symbol_labels[i]) for i in window],
                    "file_scores": file_scores.tolist(),
                    "symbol_scores": symbol_scores.tolist(),
                }
            )
        print(f"{name}: windows built, {time.perf_counter() - started:.0f} s", flush=True)
    with lzma.open(args.out, "wt") as handle:
        json.dump(records, handle)
    print(f"{len(records)} windows -> {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")


def mixed(
    record: dict[str, Any], ce: list[float], weight: float, top: int
) -> tuple[np.ndarray, np.ndarray]:
    """Stage 1's symbol scores with the window's cross-encoder scores mixed in: within the
    window, z(stage 1) + weight * z(cross-encoder), kept above every symbol outside it; and
    z(cross-encoder) itself, for the files."""
    symbols = np.asarray(record["symbol_scores"], dtype=float)
    window = record["window"][:top]

    def z(values: np.ndarray) -> np.ndarray:
        spread = values.std()
        return (values - values.mean()) / spread if spread > 0 else values * 0.0

    ce_z = z(np.asarray(ce[:top], dtype=float))
    combined = z(symbols[window]) + weight * ce_z
    out = symbols.copy()
    out[window] = symbols.max() + 1.0 + combined - combined.min()
    return out, ce_z


def combine(args: argparse.Namespace) -> None:
    locbench = ranker_train.load_locbench()
    with lzma.open(args.windows, "rt") as handle:
        records = {r["instance_id"]: r for r in json.load(handle)}
    scores = json.loads(Path(args.scores).read_text())
    loaded = {}
    for name, split in TRAIN + DEV:
        for instance in ranker_train.load_instances(
            ROOT / "bench/ranker/candidates" / name, SHARED / split
        ):
            loaded[instance.instance_id] = instance
    bm25 = ranker_train.bm25_of(
        [ROOT / f"bench/ranker/candidates/{name}.bm25.jsonl" for name, _ in TRAIN + DEV]
    )

    def evaluate(ids: list[str], weight: float, file_weight: float) -> dict[str, dict]:
        out = {}
        for instance_id in ids:
            record, instance = records[instance_id], loaded[instance_id]
            files = np.asarray(record["file_scores"], dtype=float)
            symbols = np.asarray(record["symbol_scores"], dtype=float)
            if weight is not None and record["window"]:
                symbols, ce_z = mixed(record, scores[instance_id], weight, args.top)
                if file_weight:
                    best: dict[str, float] = {}
                    for position, index in enumerate(record["window"][: args.top]):
                        path = instance.symbol_paths[index]
                        best[path] = max(best.get(path, -9.0), ce_z[position])
                    spread = files.std() or 1.0
                    files = files + file_weight * spread * np.asarray(
                        [best.get(p, 0.0) for p in instance.file_paths]
                    )
            out[instance_id] = locbench.score_instance(
                instance.gold, *ranker_train.ranked_lists(instance, files, symbols)
            )
        return out

    def summary(scored: dict[str, dict], ids: list[str]) -> dict[str, float]:
        return ranker_train.summarize([scored[i] for i in ids], locbench)

    train_ids = [i for i, r in records.items() if r["split"].startswith("train") and i in bm25]
    grid = [(w, f) for w in (0.0, 0.25, 0.5, 1.0, 2.0, 4.0) for f in (0.0, 0.1, 0.25, 0.5)]

    def objective(s: dict[str, float]) -> float:
        return s["acc@5"] + s["facc@10"]

    # Choose (weight, file weight) on two repository folds, report on the third.
    out_of_fold: dict[str, dict] = {}
    chosen = []
    for fold in range(FOLDS):
        fit_ids = [i for i in train_ids if fold_of(records[i]["repo"], FOLDS) != fold]
        test_ids = [i for i in train_ids if fold_of(records[i]["repo"], FOLDS) == fold]
        best = max(grid, key=lambda g: objective(summary(evaluate(fit_ids, *g), fit_ids)))
        chosen.append(best)
        out_of_fold.update(evaluate(test_ids, *best))
    final = max(grid, key=lambda g: objective(summary(evaluate(train_ids, *g), train_ids)))
    print(f"chosen per fold {chosen}; on all training repositories {final}")
    rows = []
    rows.append(("bm25", summary({i: bm25[i] for i in train_ids}, train_ids)))
    rows.append(("stage 1 (LORO)", summary(evaluate(train_ids, None, 0.0), train_ids)))
    rows.append(("+ cross-encoder, mix chosen out of fold", summary(out_of_fold, train_ids)))
    rows.append(
        ("cross-encoder alone in the window", summary(evaluate(train_ids, 1e6, 0.0), train_ids))
    )
    print("## train + train-multilang\n" + ranker_train.table(rows))
    for name, _ in DEV:
        ids = [i for i, r in records.items() if r["split"] == name and i in bm25]
        rows = [
            ("bm25", summary({i: bm25[i] for i in ids}, ids)),
            ("stage 1", summary(evaluate(ids, None, 0.0), ids)),
            (f"+ cross-encoder {final}", summary(evaluate(ids, *final), ids)),
            ("cross-encoder alone in the window", summary(evaluate(ids, 1e6, 0.0), ids)),
        ]
        print(f"## {name}\n" + ranker_train.table(rows))
    # Fold means on train.jsonl, as issue 10 counts them.
    for split in ("train", "train-multilang"):
        gains = defaultdict(list)
        for repo in sorted({records[i]["repo"] for i in train_ids if records[i]["split"] == split}):
            ids = [i for i in train_ids if records[i]["repo"] == repo]
            b = summary({i: bm25[i] for i in ids}, ids)
            for label, scored in (("stage1", evaluate(ids, None, 0.0)), ("mixed", out_of_fold)):
                m = summary(scored, ids)
                gains[label + " file"].append(m["acc@5"] - b["acc@5"])
                if b["n_fn"]:
                    gains[label + " func"].append(m["facc@10"] - b["facc@10"])
        print(split, {k: round(statistics.mean(v), 1) for k, v in gains.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("windows", "fill", "combine", "features"))
    parser.add_argument("--out", type=Path, default=Path(".locbench/crossencoder/windows.json.xz"))
    parser.add_argument(
        "--windows", type=Path, default=Path(".locbench/crossencoder/windows.json.xz")
    )
    parser.add_argument("--scores", type=Path, default=Path(".locbench/crossencoder/scores.json"))
    parser.add_argument("--window", type=int, default=50, help="symbols kept per instance")
    parser.add_argument("--top", type=int, default=30, help="symbols reranked (combine)")
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    steps = {"windows": build_windows, "fill": fill, "combine": combine, "features": as_features}
    steps[args.step](args)


if __name__ == "__main__":
    main()
