"""Experiment: an issue-tuned embedding model (issue 10, item 6), measured out of fold.

The shipped MiniLM is fine-tuned contrastively on the training splits: the question (as Locate
digests it) against the chunks of the gold functions among the hand ranking's first 100
candidate symbols, with the other candidates' chunks as hard negatives. Its cosine is what
``vectors.py`` writes into a dump as the candidates' vector similarity, so the ranker reads it
through the same features (``--vector-similarity``).

Leave-one-repository-out stays honest: the repositories are split into ``--folds`` groups, and
each instance's similarity comes from a model fine-tuned without its group. Dev instances are
scored by a model fine-tuned on every training repository.

Steps (each writes under --work):
  texts   --candidates DIR --split FILE --mirror-root DIR   question + candidate chunk texts
  train   --fold I (or --all)                               fine-tune one model
  score   --candidates DIR --split FILE --out DIR [--all | --base]
                                  copies of the dumps with similarity: by default each from
                                  its repository's fold model; --all: the model of every
                                  training repository (for dev); --base: the shipped MiniLM
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from dumps import blobs, mirror_of, read_dump, split_dumps, split_rows, write_dump
from vectors import symbol_chunks

from locus.ast.settings import AstSettings
from locus.cli.locbench import function_id
from locus.gateway.domain.candidates import candidates_from_json
from locus.gateway.domain.features import vector_scored_symbols
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_weights import RankingWeights
from locus.retrieval.export_model import bundled_model_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train as ranker_train

SEED = 7
MAX_TOKENS = 128  # the bench's truncation (quality.sh): fast on 2 cores
HARD_NEGATIVES = 3  # per positive: the hand ranking's best non-gold candidates


def fold_of(repo: str, folds: int) -> int:
    """A repository's fold: fixed by its name, so every step agrees without a shared file."""
    return int(hashlib.sha256(repo.encode()).hexdigest(), 16) % folds


def collect_texts(args: argparse.Namespace) -> None:
    rows = split_rows(args.split)
    policy = AstSettings().chunking_policy
    hand = RankingV1(RankingWeights())
    out: list[dict[str, Any]] = []
    started = time.perf_counter()
    for count, _, record, row in split_dumps(args.candidates, rows):
        question, request = candidates_from_json(record["candidates"])
        symbols = vector_scored_symbols(request, hand)
        contents = blobs(
            mirror_of(args.mirror_root, row["repo"]),
            row["base_commit"],
            sorted({s.relative_path for s in symbols}),
        )
        is_gold = ranker_train.gold_matcher(row)
        chunks_of: dict[str, dict[tuple[int, int, str], list[Any]]] = {}
        entries = []
        for rank, symbol in enumerate(symbols):
            data = contents.get(symbol.relative_path)
            if data is None:
                continue
            if symbol.relative_path not in chunks_of:
                chunks_of[symbol.relative_path] = symbol_chunks(
                    symbol.relative_path, data, symbol.language, policy
                )
            found = chunks_of[symbol.relative_path].get(
                (symbol.start_line, symbol.end_line, symbol.kind), []
            )
            if not found:
                continue
            ident = function_id(
                symbol.kind, symbol.scope_name, symbol.relative_path, symbol.language
            )
            entries.append(
                {
                    "node_id": symbol.node_id,
                    "rank": rank,
                    "gold": bool(ident) and is_gold(ident),
                    "texts": [c.text for c in found],
                }
            )
        out.append(
            {
                "instance_id": row["instance_id"],
                "repo": row["repo"],
                "question": question.strip(),
                "symbols": entries,
            }
        )
        if count % 50 == 0:
            print(f"{count} dumps, {time.perf_counter() - started:.0f} s", flush=True)
    target = args.work / f"texts-{args.split.stem}.pkl"
    target.write_bytes(pickle.dumps(out, protocol=4))
    print(f"{len(out)} instances -> {target}")


def load_texts(work: Path, names: list[str]) -> list[dict[str, Any]]:
    found = []
    for name in names:
        found += pickle.loads((work / f"texts-{name}.pkl").read_bytes())
    return found


def train_model(args: argparse.Namespace) -> None:
    """Multiple-negatives ranking loss (in-batch and hard negatives, scale 20), AdamW with a
    linear warm-up: a plain loop, so the experiment needs nothing beyond torch and
    sentence-transformers' model classes."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    torch.set_num_threads(args.threads)
    instances = load_texts(args.work, ["train", "train-multilang"])
    if not args.all:
        instances = [i for i in instances if fold_of(i["repo"], args.folds) != args.fold]
    triples = []
    for instance in instances:
        negatives = [s for s in instance["symbols"] if not s["gold"]][:HARD_NEGATIVES]
        for symbol in instance["symbols"]:
            if symbol["gold"]:
                for negative in negatives:
                    triples.append((instance["question"], symbol["texts"][0], negative["texts"][0]))
    model = SentenceTransformer(str(bundled_model_dir()), device="cpu")
    model.max_seq_length = MAX_TOKENS
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    steps = args.epochs * ((len(triples) + args.batch - 1) // args.batch)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: min((step + 1) / warmup, max(0.0, (steps - step) / (steps - warmup))),
    )

    def embed(texts: list[str]) -> Any:
        features = model.tokenize(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    started = time.perf_counter()
    step = 0
    for _ in range(args.epochs):
        rng.shuffle(triples)
        for begin in range(0, len(triples), args.batch):
            batch = triples[begin : begin + args.batch]
            anchors = embed([t[0] for t in batch])
            candidates = embed([t[1] for t in batch] + [t[2] for t in batch])
            logits = 20.0 * anchors @ candidates.T
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            step += 1
            if step % 20 == 0:
                print(
                    f"step {step}/{steps} loss {loss.item():.3f} "
                    f"{time.perf_counter() - started:.0f} s",
                    flush=True,
                )
    target = args.work / ("model-all" if args.all else f"model-fold{args.fold}")
    shutil.rmtree(target, ignore_errors=True)
    model.eval()
    model.save(str(target))
    print(
        f"{len(instances)} instances, {len(triples)} triples, {steps} steps, "
        f"{time.perf_counter() - started:.0f} s -> {target}"
    )


def score(args: argparse.Namespace) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    instances = {i["instance_id"]: i for i in load_texts(args.work, [args.split.stem])}
    models: dict[str, Any] = {}

    def model_for(repo: str) -> Any:
        if args.base:
            name = "base"
        elif args.all:
            name = "model-all"
        else:
            name = f"model-fold{fold_of(repo, args.folds)}"
        if name not in models:
            path = bundled_model_dir() if name == "base" else args.work / name
            model = SentenceTransformer(str(path), device="cpu")
            model.max_seq_length = MAX_TOKENS
            models[name] = model
        return models[name]

    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for count, path in enumerate(sorted(args.candidates.glob("*.json.gz")), start=1):
        record = read_dump(path)
        instance = instances.get(record["instance_id"])
        if instance is not None and instance["symbols"]:
            model = model_for(instance["repo"])
            texts = [t for s in instance["symbols"] for t in s["texts"]]
            vectors = model.encode(
                [instance["question"], *texts], batch_size=64, normalize_embeddings=True
            )
            query, chunks = vectors[0], vectors[1:]
            scored, position = {}, 0
            for symbol in instance["symbols"]:
                n = len(symbol["texts"])
                scored[symbol["node_id"]] = round(
                    float(np.max(chunks[position : position + n] @ query)), 6
                )
                position += n
            record["candidates"]["symbol_vectors"] = dict(
                sorted(scored.items(), key=lambda item: -item[1])
            )
        write_dump(args.out / path.name, record)
        if count % 50 == 0:
            print(f"{count} dumps, {time.perf_counter() - started:.0f} s", flush=True)
    for bm25 in args.candidates.parent.glob(f"{args.candidates.name}.bm25.jsonl"):
        shutil.copy(bm25, args.out.parent / f"{args.out.name}.bm25.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("texts", "train", "score"))
    parser.add_argument("--work", type=Path, default=Path(".locbench/finetune"))
    parser.add_argument("--candidates", type=Path)
    parser.add_argument("--split", type=Path)
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--base", action="store_true", help="score with the untuned model")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    {"texts": collect_texts, "train": train_model, "score": score}[args.step](args)


if __name__ == "__main__":
    main()
