"""Score the shipped model (and the hand ranking) on dumped candidates of any split — the dev
split for validation — beside the harness's BM25 rows of the same run, overall and per
repository. Nothing is fitted here.

Usage: python bench/ranker/evaluate.py --split ../shared/bench/dev.jsonl
       [--candidates bench/ranker/candidates/dev] [--model ranker.json]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from train import (
    ROOT,
    SHARED_BENCH,
    bm25_of,
    hand_lists,
    load_instances,
    load_locbench,
    ranked_lists,
    stacked_rows,
    summarize,
    table,
)

from locus.gateway.domain.learned_ranking import RankerModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", type=Path, default=SHARED_BENCH / "dev.jsonl")
    parser.add_argument("--candidates", type=Path)
    parser.add_argument("--model", type=Path)
    args = parser.parse_args()
    name = args.split.stem
    candidates = args.candidates or ROOT / "bench/ranker/candidates" / name
    locbench = load_locbench()
    model = RankerModel.load(args.model)
    instances = load_instances(candidates, args.split)
    bm25 = bm25_of([candidates.with_name(candidates.name + ".bm25.jsonl")])
    scored = {"bm25 (harness, same run)": {}, "hand ranking": {}, f"learned {model.version}": {}}
    for instance in instances:
        # As LearnedRanking.rank: files first, their verdict goes into the symbols' rows.
        file_scores = model.files.score(instance.file_rows.tolist())
        learned = ranked_lists(
            instance, file_scores, model.symbols.score(stacked_rows(instance, file_scores))
        )
        hand = hand_lists(instance)
        rows = list(scored.values())
        if instance.instance_id in bm25:
            rows[0][instance.instance_id] = bm25[instance.instance_id]
        rows[1][instance.instance_id] = locbench.score_instance(instance.gold, *hand)
        rows[2][instance.instance_id] = locbench.score_instance(instance.gold, *learned)
    ids = [i.instance_id for i in instances if i.instance_id in bm25]
    print(f"## {name}: {len(ids)} instances with candidates and a BM25 row\n")
    print(table([(n, summarize([s[i] for i in ids], locbench)) for n, s in scored.items()]))
    by_language: dict[str, list[str]] = defaultdict(list)
    by_repo: dict[str, list[str]] = defaultdict(list)
    for instance in instances:
        if instance.instance_id in bm25:
            by_language[instance.language].append(instance.instance_id)
            by_repo[instance.repo].append(instance.instance_id)
    if len(by_language) > 1:
        for language, members in sorted(by_language.items()):
            print(f"\n### {language}\n")
            print(
                table(
                    [(n, summarize([s[i] for i in members], locbench)) for n, s in scored.items()]
                )
            )
    for repo, members in sorted(by_repo.items()):
        print(f"\n### {repo}\n")
        print(table([(n, summarize([s[i] for i in members], locbench)) for n, s in scored.items()]))


if __name__ == "__main__":
    main()
