#!/usr/bin/env bash
# Localization quality on real bug reports: runs ../shared/bench/locbench.py on a split with Locus
# (`locus locbench-rank` against a real `locus up`) and the harness's own BM25, dense and RRF
# rankers in the same invocation, then prints the table (and the per-repository breakdown).
# Run by `make bench-quality`. Settings (environment):
#   LOCBENCH_MIRROR_ROOT  folder of the repository mirrors (<root>/<owner>+<name>/repo), required
#   LOCBENCH_SPLIT        the split (default ../shared/bench/dev.jsonl)
#   LOCBENCH_RANKERS      built-in baselines to run beside Locus (default bm25,dense,rrf; "" for none)
#   LOCBENCH_ARGS         more harness arguments (e.g. "--repos psf/requests --limit 5")
#   LOCBENCH_RANK_ARGS    more `locus locbench-rank` arguments (e.g. --project-per-commit)
#   LOCBENCH_KEEP_STACK=1 keep the stack's data (indexes, embedding cache) for the next run
# The dev tables in bench/RESULTS.md ask as soon as a project is searchable, with vectors off:
#   LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED=false LOCBENCH_RANK_ARGS=--searchable-only (about 10
#   minutes a split). The defaults wait for every vector: an hour or more from a cold stack.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCUS=${LOCUS:-$ROOT/.venv/bin/locus}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
HARNESS=${LOCBENCH_HARNESS:-$ROOT/../shared/bench/locbench.py}
SPLIT=${LOCBENCH_SPLIT:-$ROOT/../shared/bench/dev.jsonl}
RANKERS=${LOCBENCH_RANKERS-bm25,dense,rrf}
WORK=$ROOT/.locbench
DATA=$WORK/stack
STATE=$DATA/stack.json
RUN=$WORK/runs/$(date -u +%Y%m%dT%H%M%SZ)
# A private LOCUS_HOME: the benchmark never takes over the pointer to a stack you already run.
export LOCUS_HOME=$WORK/home
# 128 word pieces: the length MiniLM was fine-tuned at, and what the harness's dense baseline uses.
export LOCUS_RETRIEVAL_EMBED_MAX_TOKENS=${LOCUS_RETRIEVAL_EMBED_MAX_TOKENS:-128}
UP_PID=""

stop_stack() {
    local status=$?
    trap - EXIT INT TERM
    if [[ -n $UP_PID ]] && kill -0 "$UP_PID" 2>/dev/null; then
        kill -TERM "$UP_PID" 2>/dev/null || true
        wait "$UP_PID" 2>/dev/null || true
    fi
    if [[ ${LOCBENCH_KEEP_STACK:-0} != 1 ]]; then
        rm -rf "$DATA"
    fi
    exit "$status"
}

for needed in "$HARNESS" "$SPLIT"; do
    [[ -f $needed ]] || { echo "$needed not found (the benchmark lives in ../shared/bench)" >&2; exit 1; }
done
if [[ -z ${LOCBENCH_MIRROR_ROOT:-} || ! -d ${LOCBENCH_MIRROR_ROOT:-} ]]; then
    echo "set LOCBENCH_MIRROR_ROOT to the folder holding the repository mirrors" >&2
    echo "(<root>/<owner>+<name>/repo; see ../shared/bench/README.md)" >&2
    exit 1
fi
[[ -x $LOCUS ]] || { echo "$LOCUS not found: run \`make setup\` first" >&2; exit 1; }

# One run at a time: every run starts its stack in the same data dir ($DATA) and removes it at
# the end, so a second run would break the first (collect.sh runs this script too).
mkdir -p "$WORK"
exec 9>"$WORK/quality.lock"
if ! flock -n 9; then
    echo "another bench/quality.sh run (or collect-ranker-data) is using $WORK; wait for it" >&2
    exit 1
fi
mkdir -p "$WORK/repos" "$RUN"
trap stop_stack EXIT
trap 'exit 130' INT TERM
"$LOCUS" up --data-dir "$DATA" --allow-base "$WORK/repos" >"$RUN/up.log" 2>&1 &
UP_PID=$!
for _ in $(seq 1 3000); do
    [[ -f $STATE ]] && break
    kill -0 "$UP_PID" 2>/dev/null || { cat "$RUN/up.log" >&2; echo "locus up failed" >&2; exit 1; }
    sleep 0.1
done
[[ -f $STATE ]] || { cat "$RUN/up.log" >&2; echo "locus up did not become ready" >&2; exit 1; }

cd "$ROOT"
# shellcheck disable=SC2086  # LOCBENCH_ARGS and LOCBENCH_RANK_ARGS are lists of arguments
"$PYTHON" "$HARNESS" eval --split "$SPLIT" --rankers "$RANKERS" \
    --ranker-cmd "$LOCUS locbench-rank --timings $RUN/locus-timings.jsonl ${LOCBENCH_RANK_ARGS:-}" \
    --name locus --per-repo --out "$RUN" --cache "$WORK/repos" \
    --mirror-root "$LOCBENCH_MIRROR_ROOT" ${LOCBENCH_ARGS:-} | tee "$RUN/table.md"
"$PYTHON" "$ROOT/bench/locbench_timings.py" "$RUN/locus-timings.jsonl" | tee -a "$RUN/table.md"
echo "results: $RUN"
