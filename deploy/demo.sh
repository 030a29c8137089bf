#!/usr/bin/env bash
# Locus on its own source: start the stack on a temporary data dir, scan this repository, show
# what Locus finds, stop the stack. Works with whatever services are installed: without the
# gateway and answer services it scans and lists symbols; with them it also locates and asks.
# Run by `make demo` (after `make setup`). LOCUS_DEMO_KEEP=1 keeps the data dir for a look after.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCUS=${LOCUS:-$ROOT/.venv/bin/locus}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
QUESTION=${LOCUS_DEMO_QUESTION:-"where are events dead-lettered after too many deliveries?"}
PROJECT=locus-demo
WORK=$(mktemp -d "${TMPDIR:-/tmp}/locus-demo.XXXXXX")
DATA=$WORK/stack
STATE=$DATA/stack.json
# A private LOCUS_HOME: the demo never takes over the pointer to a stack you already run.
export LOCUS_HOME=$WORK/home
UP_PID=""

step() { printf '\n\033[1;36m==> %s\033[0m\n' "$*"; }

stop_stack() {
    local status=$?
    trap - EXIT INT TERM
    if [[ -n $UP_PID ]] && kill -0 "$UP_PID" 2>/dev/null; then
        step "stopping the stack"
        kill -TERM "$UP_PID" 2>/dev/null || true
        wait "$UP_PID" 2>/dev/null || true
        tail -n +1 "$WORK/up.log" | grep -E '^(stopped|.* did not stop)' || true
    fi
    if [[ ${LOCUS_DEMO_KEEP:-0} == 1 ]]; then
        echo "kept $WORK (logs in $DATA/logs)"
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap stop_stack EXIT
trap 'exit 130' INT TERM

if [[ ! -x $LOCUS ]]; then
    echo "$LOCUS not found: run \`make setup\` first" >&2
    exit 1
fi

step "locus up (data dir $DATA, sources allowed under $ROOT)"
"$LOCUS" up --data-dir "$DATA" --allow-base "$ROOT" >"$WORK/up.log" 2>&1 &
UP_PID=$!
for _ in $(seq 1 3000); do
    [[ -f $STATE ]] && break
    if ! kill -0 "$UP_PID" 2>/dev/null; then
        cat "$WORK/up.log" >&2
        echo "locus up failed to start" >&2
        exit 1
    fi
    sleep 0.1
done
if [[ ! -f $STATE ]]; then
    cat "$WORK/up.log" >&2
    echo "locus up did not become ready in 300 s" >&2
    exit 1
fi
cat "$WORK/up.log"

running() { "$PYTHON" -c 'import json, sys; sys.exit(sys.argv[2] not in json.load(open(sys.argv[1]))["services"])' "$STATE" "$1"; }

step "locus status"
"$LOCUS" status

step "locus project create $PROJECT"
"$LOCUS" project create "$PROJECT" --system locus

step "locus source add $PROJECT $ROOT"
"$LOCUS" source add "$PROJECT" "$ROOT"

step "locus scan $PROJECT --wait"
if running retrieval; then
    echo "(returns once every file is searchable; retrieval embeds the chunks in the background, source first)"
fi
"$LOCUS" scan "$PROJECT" --wait

if running ast; then
    step "locus symbols $PROJECT dead_letter"
    "$LOCUS" symbols "$PROJECT" dead_letter --limit 15
    step "locus symbols $PROJECT Locus --kind class"
    "$LOCUS" symbols "$PROJECT" Locus --kind class --limit 15
else
    echo "(the ast service is not installed: no symbols yet)"
fi

# Locate needs the gateway and retrieval; ask also needs the answer service.
if running gateway && running retrieval; then
    step "locus locate $PROJECT \"$QUESTION\" --json | head -40"
    "$LOCUS" locate "$PROJECT" "$QUESTION" --json --max-files 5 | head -40 || true
    if running answer; then
        step "locus ask $PROJECT \"$QUESTION\""
        "$LOCUS" ask "$PROJECT" "$QUESTION"
    else
        echo "(the answer service is not installed yet: skipping locus ask)"
    fi
    step "locus requests $PROJECT"
    "$LOCUS" requests "$PROJECT"
    if running mcp; then
        # What a coding agent sees: one MCP tool call over Streamable HTTP (the stack's admin key
        # as its bearer credential; an agent would use its own key).
        MCP_URL=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["mcp_url"])' "$STATE")
        step "MCP: tools/call locate at $MCP_URL | head -25"
        LOCUS_API_KEY_FILE="$DATA/admin.key" "$PYTHON" -m locus.mcp.call "$MCP_URL" locate \
            "$("$PYTHON" -c 'import json, sys; print(json.dumps({"project": sys.argv[1], "question": sys.argv[2], "max_files": 3}))' "$PROJECT" "$QUESTION")" \
            | head -25 || true
    fi
else
    echo "(the gateway or retrieval service is not installed yet: skipping locus locate and ask)"
fi
