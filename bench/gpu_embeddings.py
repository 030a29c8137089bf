"""The GPU path of the embeddings, checked on a machine with a GPU against vectors computed here.

``reference`` (here, in the project's environment): chunks this repository's own Python files
into the texts the vectors lane embeds (the ast service's chunker), embeds them with the embedded
default (the ONNX embedder on CPU) and saves texts and vectors.

``check`` (on the GPU machine, which needs only torch + sentence-transformers and this tree's
``services/retrieval/src`` on ``PYTHONPATH``): embeds the same texts with the torch embedder on
``cuda`` and on the CPU of that machine, in the same run, and prints the agreement with the
reference (cosine) and the throughput of each.

  python bench/gpu_embeddings.py reference --out DIR [--limit N]
  python bench/gpu_embeddings.py check --reference DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def reference(args: argparse.Namespace) -> None:
    from locus.ast.domain import extract
    from locus.ast.settings import AstSettings
    from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder
    from locus.retrieval.settings import RetrievalSettings

    policy = AstSettings().chunking_policy
    texts: list[str] = []
    for path in sorted(ROOT.glob("services/*/src/**/*.py")):
        relative = str(path.relative_to(ROOT))
        texts += [c.text for c in extract(relative, path.read_bytes(), "python", policy).chunks]
        if len(texts) >= args.limit:
            break
    texts = texts[: args.limit]
    settings = RetrievalSettings()
    embedder = OnnxEmbedder(settings.model_dir, device="cpu")
    asyncio.run(embedder.open())
    started = time.perf_counter()
    vectors = asyncio.run(embedder.embed(texts))
    elapsed = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "texts.json").write_text(json.dumps(texts))
    np.save(args.out / "vectors.npy", vectors.astype(np.float32))
    print(f"{len(texts)} chunks, ONNX on this CPU: {len(texts) / elapsed:.0f} chunks/s")


def check(args: argparse.Namespace) -> None:
    import torch

    from locus.retrieval.adapters.torch_embedder import SentenceTransformerEmbedder

    texts = json.loads((args.reference / "texts.json").read_text())
    expected = np.load(args.reference / "vectors.npy")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {len(texts)} chunks")
    for device, batch in (("cuda", 32), ("cuda", 256), ("cpu", 32)):
        embedder = SentenceTransformerEmbedder(device=device, batch_size=batch)
        embedder.load()
        embedder.encode(texts[:64])  # warm-up: kernels, allocator
        if device == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        vectors = embedder.encode(texts)
        if device == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - started
        cosine = np.sum(vectors * expected, axis=1)
        print(
            f"{device} batch {batch}: {len(texts) / elapsed:,.0f} chunks/s; cosine with the "
            f"reference: min {cosine.min():.5f}, mean {cosine.mean():.6f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("reference", "check"))
    parser.add_argument("--out", type=Path, default=Path(".gpu/embeddings"))
    parser.add_argument("--reference", type=Path, default=Path(".gpu/embeddings"))
    parser.add_argument("--limit", type=int, default=3000)
    args = parser.parse_args()
    {"reference": reference, "check": check}[args.step](args)


if __name__ == "__main__":
    main()
