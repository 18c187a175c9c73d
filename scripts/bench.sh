#!/usr/bin/env bash
# The benchmark suite in release, ending with the tables of ratios and
# throughputs that the performance targets name.
#
#   scripts/bench.sh             criterion and paired timings (a few minutes)
#   scripts/bench.sh callgrind   instructions per iteration under callgrind:
#                                slower, but the same on a busy machine
#
# One bench alone: `cargo bench --bench json -- rewrap` (a criterion filter).
# The json bench is run with `--features redact`, for its `redact_secrets` rows.
set -euo pipefail
cd "$(dirname "$0")/.."

logs=target/bench-logs
mkdir -p "$logs"

machine() {
    local cpu
    cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
    echo "machine: $(nproc) CPUs, ${cpu:-unknown CPU}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# The executable of one bench target, built in release.
executable() {
    cargo bench "$@" --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -1
}

timings() {
    machine
    cargo bench --features redact --bench json 2>&1 | tee "$logs/json.log" >/dev/null
    cargo bench --features rmcp --bench rmcp 2>&1 | tee "$logs/rmcp.log" >/dev/null
    sed -n '/^JSON path/,$p' "$logs/json.log"
    sed -n '/^rmcp end to end/,$p' "$logs/rmcp.log"
    machine
}

# Instructions of one iteration of a routine: two runs of different lengths,
# subtracted, so that start-up and set-up cancel out.
instructions() {
    local bin=$1 routine=$2 short=$3 long=$4 a b
    a=$(BENCH_REPEAT="$routine:$short" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    b=$(BENCH_REPEAT="$routine:$long" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    echo $(((b - a) / (long - short)))
}

# One table row: the instructions of `routine`, and its ratio to `baseline`'s.
compare() {
    local bin=$1 group=$2 baseline=$3 routine=$4 short=$5 long=$6 base own
    base=$(instructions "$bin" "$group/$baseline" "$short" "$long")
    own=$(instructions "$bin" "$group/$routine" "$short" "$long")
    awk -v g="$group" -v r="$routine" -v b="$baseline" -v own="$own" -v base="$base" \
        'BEGIN { printf "| %s: %s / %s | %d / %d | %.3f |\n", g, r, b, own, base, own / base }'
}

callgrind() {
    local json json_otel rmcp
    json=$(executable --features redact --bench json)
    # The feature `opentelemetry` with no meter provider installed: the cost of
    # the metric `mcp.server.operation.duration` when nothing records it.
    json_otel=$(executable --features redact,opentelemetry --bench json)
    rmcp=$(executable --features rmcp --bench rmcp)
    echo "Instructions per iteration (callgrind)"
    echo
    echo "| measure | instructions | ratio |"
    echo "|---|---|---|"
    compare "$json" pass_through bare layered 1000 3000
    compare "$json" pass_through bare catch_panic 1000 3000
    compare "$json" tools_call bare layered 1000 3000
    compare "$json_otel" tools_call bare layered 1000 3000
    compare "$json_otel" tools_call_metered bare layered 1000 3000
    compare "$json" tools_call bare catch_panic 1000 3000
    compare "$json" tools_call bare reads_for_rewrap 1000 3000
    compare "$json" tools_call bare layered_sanitizing 1000 3000
    compare "$json" sanitize "plain/1048576" "redact_secrets/1048576" 2 6
    compare "$json" tools_call_filtered bare layered 1000 3000
    compare "$json" tools_call_traced bare layered 1000 3000
    compare "$json" caught_panic catch_unwind layered 1000 3000
    for size in 64 1024 65536 1048576; do
        if ((size < 65536)); then
            compare "$json" rewrap "string_clone/$size" "render_error/$size" 10000 30000
        else
            compare "$json" rewrap "string_clone/$size" "render_error/$size" 2 6
        fi
    done
    compare "$rmcp" rmcp_tools_call bare with_tool_errors 500 1500
}

case "${1:-}" in
    "") timings ;;
    callgrind) callgrind ;;
    *) echo "usage: $0 [callgrind]" >&2; exit 2 ;;
esac
