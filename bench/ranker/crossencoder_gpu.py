"""Fine-tune a MiniLM cross-encoder on the stage-1 windows (``crossencoder.py windows``) and score
every window out of fold. Runs where a GPU is (torch + transformers only; no Locus import), e.g.:

  python crossencoder_gpu.py --windows windows.json.xz --model minilm/ --out OUT/

Listwise: per question, a softmax over its window's documents, the gold functions' share
maximized. Models: one per repository group (``fold_of``, as ``crossencoder.py``), each scoring
the training windows of its held-out group, and one on every training repository, which scores
the dev windows and is saved (fp16, in parts that fit the device tool's file limit).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import random
import time
from pathlib import Path

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

QUESTION_CHARS = 2000  # the question as the rerank stage sends it is cut here too
MAX_TOKENS = 512
DEVICE = "cuda"
PART_BYTES = 15_000_000
KEY = "documents_full"  # or "documents": bodies only where retrieval returned a chunk


def fold_of(repo: str, folds: int = 3) -> int:
    """finetune.fold_of, repeated: this script runs where Locus is not installed."""
    return int(hashlib.sha256(repo.encode()).hexdigest(), 16) % folds


def encode(tokenizer, question: str, documents: list[str]) -> dict:
    return tokenizer(
        [question[:QUESTION_CHARS]] * len(documents),
        documents,
        truncation="longest_first",
        max_length=MAX_TOKENS,
        padding=True,
        return_tensors="pt",
    )


def train(records: list[dict], args: argparse.Namespace, tokenizer) -> torch.nn.Module:
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        args.model, num_labels=1, dtype=torch.float32
    ).to(DEVICE)
    usable = [r for r in records if any(r["labels"][: args.train_top])]
    encoded = [
        (encode(tokenizer, r["question"], r[KEY][: args.train_top]), r["labels"][: args.train_top])
        for r in usable
    ]
    steps = args.epochs * ((len(encoded) + args.batch - 1) // args.batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    model.train()
    step = 0
    for _ in range(args.epochs):
        rng.shuffle(encoded)
        for begin in range(0, len(encoded), args.batch):
            loss = torch.zeros((), device=DEVICE)
            for features, labels in encoded[begin : begin + args.batch]:
                with torch.autocast(DEVICE, dtype=torch.bfloat16):
                    logits = model(**{k: v.to(DEVICE) for k, v in features.items()}).logits[:, 0]
                logits = logits.float()
                gold = torch.tensor(labels, device=DEVICE) > 0
                loss = loss + torch.logsumexp(logits, 0) - torch.logsumexp(logits[gold], 0)
            loss = loss / len(encoded[begin : begin + args.batch])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            step += 1
            if step % 25 == 0:
                print(f"  step {step}/{steps} loss {loss.item():.3f}", flush=True)
    model.eval()
    print(f"  {len(usable)} questions with a gold function in the window, {steps} steps")
    return model


@torch.no_grad()
def score(model, tokenizer, record: dict) -> list[float]:
    if not record[KEY]:
        return []
    features = encode(tokenizer, record["question"], record[KEY])
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        logits = model(**{k: v.to(DEVICE) for k, v in features.items()}).logits[:, 0]
    return [round(float(x), 5) for x in logits.float().cpu()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--train-top", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--keys", nargs="+", default=["documents_full", "documents"])
    parser.add_argument("--limit", type=int, default=0, help="smoke test: first N windows")
    args = parser.parse_args()
    global DEVICE
    DEVICE = args.device
    started = time.perf_counter()
    with lzma.open(args.windows, "rt") as handle:
        records = json.load(handle)
    if args.limit:
        records = records[: args.limit] + [r for r in records if r["split"] == "dev"][:2]
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    train_records = [r for r in records if r["split"].startswith("train")]
    args.out.mkdir(parents=True, exist_ok=True)
    global KEY
    for key in args.keys:
        KEY = key
        scores: dict[str, list[float]] = {}
        for fold in range(3):
            model = train([r for r in train_records if fold_of(r["repo"]) != fold], args, tokenizer)
            for record in train_records:
                if fold_of(record["repo"]) == fold:
                    scores[record["instance_id"]] = score(model, tokenizer, record)
            print(f"{key}: fold {fold} done, {time.perf_counter() - started:.0f} s", flush=True)
        model = train(train_records, args, tokenizer)
        for record in records:
            if not record["split"].startswith("train"):
                scores[record["instance_id"]] = score(model, tokenizer, record)
        (args.out / f"scores-{key}.json").write_text(json.dumps(scores))
        if key == args.keys[0]:
            # One safetensors file cut in parts (the device tool returns files of 16 MiB at
            # most; the word embeddings alone are 23 MB): concatenate them to load.
            from safetensors.torch import save

            data = save({k: v.half().contiguous() for k, v in model.state_dict().items()})
            for n, begin in enumerate(range(0, len(data), PART_BYTES)):
                (args.out / f"model.safetensors.part{n}").write_bytes(
                    data[begin : begin + PART_BYTES]
                )
            model.config.to_json_file(args.out / "config.json")
    print(f"all done, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
