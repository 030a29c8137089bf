"""Merge the harness's per-instance BM25 rows (``<run>/<split>.bm25.jsonl``) into one file kept
beside the candidate dumps, so ``train.py`` compares with BM25 on a fresh clone. A later row of
an instance replaces an earlier one; rows with an error are left out.

Usage: python bench/ranker/keep_bm25.py OUT RUN_FILE ..."""

from __future__ import annotations

import json
import sys
from pathlib import Path

KEPT = ("instance_id", "repo", "m", "gold_files", "gold_functions", "files", "functions")


def main() -> None:
    out, *runs = (Path(arg) for arg in sys.argv[1:])
    rows: dict[str, dict] = {}
    if out.exists():
        rows = {r["instance_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    for run in sorted((r for r in runs if r.exists()), key=lambda r: r.stat().st_mtime):
        for line in run.read_text().splitlines():
            row = json.loads(line)
            if not row.get("error"):
                kept = {k: row[k] for k in KEPT if k in row}
                kept["files"] = kept.get("files", [])[:10]
                kept["functions"] = (kept.get("functions") or [])[:10]
                rows[row["instance_id"]] = kept
    out.write_text("".join(json.dumps(rows[i]) + "\n" for i in sorted(rows)))
    print(f"{len(rows)} BM25 rows -> {out}")


if __name__ == "__main__":
    main()
