"""A deterministic subset of a locbench split for collecting ranker training material: per
repository (with a mirror), instances in base-commit order, at most ``--per-repo`` of them picked
evenly across time; instances already dumped (``--skip-done``) are left out, so a collection
can be resumed or extended."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", type=Path, required=True)
    parser.add_argument("--mirror-root", type=Path, required=True)
    parser.add_argument("--per-repo", type=int, default=12)
    parser.add_argument("--repos", default="")
    parser.add_argument("--skip-done", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    wanted = {r for r in args.repos.split(",") if r}
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for line in args.split.read_text().splitlines():
        row = json.loads(line)
        repo = row["repo"]
        if wanted and repo not in wanted:
            continue
        if not (args.mirror_root / repo.replace("/", "+") / "repo").is_dir():
            continue
        by_repo[repo].append(row)
    done = set()
    if args.skip_done and args.skip_done.is_dir():
        done = {p.name.removesuffix(".json.gz") for p in args.skip_done.glob("*.json.gz")}
    chosen = []
    for repo in sorted(by_repo, key=lambda r: (len(by_repo[r]), r)):
        rows = sorted(
            by_repo[repo], key=lambda r: (r.get("base_commit_time", ""), r["instance_id"])
        )
        if args.per_repo and len(rows) > args.per_repo:
            step = len(rows) / args.per_repo
            rows = [rows[int(i * step)] for i in range(args.per_repo)]
        chosen += [r for r in rows if r["instance_id"] not in done]
    args.out.write_text("".join(json.dumps(r) + "\n" for r in chosen))
    print(f"{len(chosen)} instances from {len(by_repo)} repositories -> {args.out}")


if __name__ == "__main__":
    main()
