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

from locus.gateway.domain.features import VECTOR_SIMILARITY_FEATURES
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
    # A model that reads vector similarity is also scored on each dump without it.
    reads_vectors = any(model.reads(name) for name in VECTOR_SIMILARITY_FEATURES)
    instances = load_instances(candidates, args.split, vectorless_copies=reads_vectors)
    bm25 = bm25_of([candidates.with_name(candidates.name + ".bm25.jsonl")])
    learned_name = f"learned {model.version}"
    searchable_name = f"{learned_name}, the same dumps without vectors (searchable level)"
    scored: dict[str, dict[str, dict[str, float]]] = {
        "bm25 (harness, same run)": {},
        "hand ranking": {},
        learned_name: {},
        searchable_name: {},
    }
    for instance in instances:
        # As LearnedRanking.rank: files first, their verdict goes into the symbols' rows.
        file_scores = model.files.score(instance.file_rows.tolist())
        learned = ranked_lists(
            instance, file_scores, model.symbols.score(stacked_rows(instance, file_scores))
        )
        if instance.copy_of:  # a dump with vector similarities, without them
            scored[searchable_name][instance.copy_of] = locbench.score_instance(
                instance.gold, *learned
            )
            continue
        if instance.instance_id in bm25:
            scored["bm25 (harness, same run)"][instance.instance_id] = bm25[instance.instance_id]
        scored["hand ranking"][instance.instance_id] = locbench.score_instance(
            instance.gold, *hand_lists(instance)
        )
        scored[learned_name][instance.instance_id] = locbench.score_instance(
            instance.gold, *learned
        )
    if not scored[searchable_name]:  # dumps without vectors: nothing to compare
        del scored[searchable_name]
    else:  # a dump with no similarity at all is its own searchable level
        for instance_id, metrics in scored[learned_name].items():
            scored[searchable_name].setdefault(instance_id, metrics)
    instances = [i for i in instances if not i.copy_of]
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
