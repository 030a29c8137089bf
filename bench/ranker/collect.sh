#!/usr/bin/env bash
# Collect the learned ranker's training material: Locus answers every instance of a training
# split through the real stack (`locus up`, `locus locbench-rank`, searchable only) and dumps
# the candidates each Locate ranked (bench/ranker/candidates/<split>/<instance>.json.gz); the
# harness scores BM25 beside it in the same run. Run by `make collect-ranker-data`; hours on
# 2 cores for the whole split, so PER_REPO keeps an even spread of at most N instances a
# repository (0 = all). Settings (environment):
#   LOCBENCH_MIRROR_ROOT   folder of the repository mirrors (required; ../shared/bench/README.md)
#   SPLIT                  the training split (default ../shared/bench/train.jsonl)
#   REPOS                  comma list of owner/name (default: every repository with a mirror)
#   PER_REPO               at most this many instances a repository (default 12)
#   VECTORS                1: also give each dump the candidates' vector similarity (vectors.py;
#                          ~15 min a split; only a model trained with --vector-similarity reads it)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SPLIT=${SPLIT:-$ROOT/../shared/bench/train.jsonl}
NAME=$(basename "$SPLIT" .jsonl)
OUT=${CANDIDATES_DIR:-$ROOT/bench/ranker/candidates/$NAME}
SUBSET=$ROOT/.locbench/ranker-$NAME-subset.jsonl
mkdir -p "$ROOT/.locbench" "$OUT"
"$ROOT/.venv/bin/python" "$ROOT/bench/ranker/subset.py" --split "$SPLIT" \
    --mirror-root "${LOCBENCH_MIRROR_ROOT:?set LOCBENCH_MIRROR_ROOT}" \
    --per-repo "${PER_REPO:-12}" --repos "${REPOS:-}" --skip-done "$OUT" --out "$SUBSET"
# Vectors are left out: 2 CPU cores embed a large repository in tens of minutes; the model is
# trained on what every index has at once (BM25, symbols, graph) — see bench/ranker/README.md.
LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED=false LOCBENCH_SPLIT=$SUBSET LOCBENCH_RANKERS=bm25 \
    LOCBENCH_RANK_ARGS="--searchable-only --dump-candidates $OUT ${LOCBENCH_RANK_ARGS:-}" \
    bash "$ROOT/bench/quality.sh" || status=$?
# The candidates' vector similarity, computed as ScoreSymbols would have (vectors were off), on
# request: the shipped model does not read it (ADR 0007; dumps that have it are skipped).
if [ "${VECTORS:-0}" = 1 ]; then
    "$ROOT/.venv/bin/python" "$ROOT/bench/ranker/vectors.py" --candidates "$OUT" --split "$SPLIT" \
        --mirror-root "$LOCBENCH_MIRROR_ROOT" || status=$?
fi
# The harness's BM25 on the same instances, kept beside the dumps: train.py compares with it.
"$ROOT/.venv/bin/python" "$ROOT/bench/ranker/keep_bm25.py" "$OUT.bm25.jsonl" \
    "$ROOT"/.locbench/runs/*/"$(basename "$SUBSET" .jsonl)".bm25.jsonl
exit "${status:-0}"
