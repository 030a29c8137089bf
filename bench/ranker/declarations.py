"""How often a fix's header is the file that declares the functions Locate ranks first: a
measurement for a future ranker column (nothing is fitted or shipped here).

For each C, C++, JavaScript and TypeScript instance with dumped candidates, the shipped model
ranks the dump as the gateway does; the first ``--top`` functions' names are looked up among
the signatures (prototypes, in-class declarations, `.d.ts` declarations) that the production
extractor finds in each candidate header at the instance's base commit. Reported: how many gold
headers declare one of them, against the candidate headers that are not gold.

Usage: python bench/ranker/declarations.py --split ../shared/bench/train-multilang.jsonl \
    --candidates bench/ranker/candidates/train-multilang --mirror-root /path/to/mirrors
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from dumps import blobs, mirror_of
from train import load_instances, ranked_lists, stacked_rows

from locus.ast.domain import UndecodableSource, extract
from locus.gateway.domain.learned_ranking import RankerModel

HEADERS = {".h": "c", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".ts": "typescript"}


def header_language(path: str) -> str | None:
    if path.endswith(".d.ts"):
        return "typescript"
    for suffix, language in HEADERS.items():
        if path.endswith(suffix) and suffix != ".ts":
            return language
    return None


def declared_names(path: str, source: bytes, language: str) -> set[str]:
    try:
        analysis = extract(path, source, language)
    except UndecodableSource:  # not UTF-8: declares nothing the ast service would read
        return set()
    return {s.name for s in analysis.symbols if s.kind == "signature"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", type=Path, required=True)
    parser.add_argument("--candidates", type=Path, required=True)
    parser.add_argument("--mirror-root", type=Path, required=True)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--files", type=int, default=30, help="candidate files looked at")
    parser.add_argument(
        "--languages", default="C,C++,JavaScript,TypeScript", help="the rows' languages, comma"
    )
    args = parser.parse_args()
    model = RankerModel.load(None)
    counts: Counter[str] = Counter()
    for instance in load_instances(args.candidates, args.split, vectorless_copies=False):
        if instance.language not in args.languages.split(","):
            continue
        file_scores = model.files.score(instance.file_rows.tolist())
        files, functions = ranked_lists(
            instance, file_scores, model.symbols.score(stacked_rows(instance, file_scores))
        )
        top_names = {f.rsplit("::", 1)[-1].rsplit(".", 1)[-1] for f in functions[: args.top]}
        gold = set(instance.gold["gold_files"])
        headers = [p for p in files[: args.files] if header_language(p)]
        gold_headers = [p for p in gold if header_language(p)]
        looked = list(dict.fromkeys([*headers, *gold_headers]))
        sources = blobs(
            mirror_of(args.mirror_root, instance.repo), instance.gold["base_commit"], looked
        )
        for path in looked:
            source = sources.get(path)
            if source is None:
                continue
            declares = bool(declared_names(path, source, header_language(path) or "c") & top_names)
            rank = files.index(path) + 1 if path in files else 0
            kind = "gold" if path in gold else "other"
            where = "top5" if 0 < rank <= 5 else ("after 5" if rank else "not ranked")
            counts[f"{kind} header, {where}"] += 1
            counts[f"{kind} header, {where}, declares a top-{args.top} function"] += declares
    for key in sorted(counts):
        print(f"{counts[key]:6d}  {key}")


if __name__ == "__main__":
    main()
