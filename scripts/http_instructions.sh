#!/usr/bin/env bash
# Instructions the command's HTTP mode runs per call, counted by callgrind:
# the same on a busy machine, where the timings of cli/benches/http_proxy.rs
# move by 10 to 20%.
#
#   scripts/http_instructions.sh [COMMAND...]
#
# Each COMMAND (default: target/release/mcp-tool-errors, built here) runs under
# callgrind in front of the rmcp_http example (MCP_TOOL_ERRORS=off), on
# 127.0.0.1; a client in Python's standard library makes one MCP session and
# its `tools/call`s one at a time, `echo` (a plain result) or `fail` (a tool
# error, which the command rewraps). The figure is the difference between runs
# of 100 and 1,100 calls, over 1,000: start-up and the session cancel out;
# it is the main thread's (the command runs on one CPU: one worker) and the
# median of HTTP_INSTRUCTIONS_RUNS (3) such figures, which move by about 1%
# from run to run (the runtime's timers follow the clock, slow under
# callgrind).
# Give several builds to compare them (valgrind and python3 needed).
# HTTP_INSTRUCTIONS_OPTIONS holds options for the command, for instance
# `--tool-timeout 60s`, under which every call goes through an exchange.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${CARGO_TARGET_DIR:-target}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

if [[ $# -eq 0 ]]; then
    cargo build --release -p mcp-tool-errors-cli
    set -- "$target/release/mcp-tool-errors"
fi
cargo build --release --example rmcp_http --features rmcp
example="$target/release/examples/rmcp_http"

cat >"$work/client.py" <<'EOF'
import http.client, json, sys

host, port, calls, tool = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
connection = http.client.HTTPConnection(host, port, timeout=60)
headers = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
}

def post(message):
    connection.request("POST", "/mcp", body=json.dumps(message), headers=headers)
    response = connection.getresponse()
    body = response.read()
    assert response.status in (200, 202), (response.status, body)
    return response, body

response, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "http_instructions", "version": "0"}}})
headers["mcp-session-id"] = response.getheader("mcp-session-id")
post({"jsonrpc": "2.0", "method": "notifications/initialized"})
arguments = {"echo": {"text": "bench-echo"}, "fail": {"message": "bench-failure"}}[tool]
for id in range(1, calls + 1):
    _, body = post({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments}})
    assert (b"<error tool=" in body) == (tool == "fail"), body
EOF

# Waits for `text` in the file `log`; prints the address after it.
address_in() {
    local log=$1 text=$2
    for _ in $(seq 600); do
        if grep -q "$text" "$log"; then
            grep -o "$text[0-9.:]*" "$log" | head -1 | sed "s|$text||"
            return
        fi
        sleep 0.1
    done
    echo "nothing says \`$text\` in $log" >&2
    exit 1
}

# Instructions of the command `$1` over `$2` calls of tool `$3`.
instructions() {
    local command=$1 calls=$2 tool=$3 upstream proxy
    PORT=0 MCP_TOOL_ERRORS=off "$example" >"$work/upstream.log" 2>&1 &
    local upstream_pid=$!
    upstream=$(address_in "$work/upstream.log" "listening on http://")
    $pin valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/callgrind.out" \
        "$command" ${HTTP_INSTRUCTIONS_OPTIONS:-} --upstream "http://$upstream/mcp" --listen 127.0.0.1:0 \
        >"$work/proxy.log" 2>&1 &
    local proxy_pid=$!
    proxy=$(address_in "$work/proxy.log" "listening on ")
    python3 "$work/client.py" "${proxy%:*}" "${proxy##*:}" "$calls" "$tool"
    kill -TERM "$proxy_pid"
    wait "$proxy_pid" || true
    kill "$upstream_pid"
    wait "$upstream_pid" 2>/dev/null || true
    # The main thread's alone: it serves every request (one worker); the
    # threads beside it (the sweep of the client connections) wake by the
    # clock, which runs slow under callgrind.
    sed -n 's/^summary: //p' "$work/callgrind.out-01"
    rm -f "$work"/callgrind.out*
}

# One CPU, so one worker: the session's connection is served on the main
# thread in every run (on a worker thread, the allocator's arena of that
# thread costs some hundreds of instructions a call more, and which worker
# accepts the connection changes from run to run).
pin=""
if command -v taskset >/dev/null; then
    pin="taskset -c 0"
fi

echo "instructions per call (callgrind), in front of the rmcp_http example, one worker"
runs=${HTTP_INSTRUCTIONS_RUNS:-3}
for command in "$@"; do
    for tool in echo fail; do
        figures=()
        for _ in $(seq "$runs"); do
            short=$(instructions "$command" 100 "$tool")
            long=$(instructions "$command" 1100 "$tool")
            figures+=($(((long - short) / 1000)))
        done
        sorted=($(printf '%s\n' "${figures[@]}" | sort -n))
        echo "$command: $tool ${sorted[$((runs / 2))]} (median of ${figures[*]})"
    done
done
