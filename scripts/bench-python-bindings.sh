#!/usr/bin/env bash
# The Python binding's cost per call, per host: the official client calls the
# same tool of the same server (bindings/python/tests/hosts.py) without the
# adapter and with it, side by side in the same run
# (bindings/python/benches/calls.py): the official SDK's MCPServer and
# low-level Server and FastMCP over stdio, and LiteLLM's proxy (without the
# guardrail, with it) over Streamable HTTP in front of the MCPServer (over
# Streamable HTTP too). One tool
# that fails (`fail`, an isError result the adapter rewraps) and one that
# succeeds (`echo`).
#
#   scripts/bench-python-bindings.sh [CALLS]    CALLS per tool and host (300)
#
# The wheel is built in release; the hosts are installed as for
# scripts/ci/python_bindings.sh. Loopback only; everything started is stopped
# on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
target=${CARGO_TARGET_DIR:-$repo/target}
readonly LISTEN_TIMEOUT_S=120
readonly CALLS=${1:-300}
readonly OPTIONS='{"redact_secrets": true, "max_error_bytes": 4096}'
readonly LITELLM_KEY=sk-mcp-tool-errors-bench

# shellcheck source=scripts/lib/python_script.sh
source scripts/lib/python_script.sh "bench-python-bindings"

ensure_hosts
sdk=$repo/$SDK_VENV/bin/python
build_binding_wheel --release
install_binding "$sdk"
install_binding "$repo/$LITELLM_VENV/bin/python"
hosts=$repo/bindings/python/tests/hosts.py
tools=('fail={"path": "/data/1"}' 'echo={"text": "hello"}')

echo "machine: $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg); $CALLS calls per tool"
echo
echo "| host | tool | without: median / p90 ms | with: median / p90 ms | difference of the medians, ms |"
echo "|---|---|---|---|---|"
# OPTIONS as a JSON string, for the environment of the server with the adapter.
options_string=$("$sdk" -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$OPTIONS")
for kind in mcpserver lowlevel fastmcp; do
  "$sdk" bindings/python/benches/calls.py "$kind" "$CALLS" \
    "{\"stdio\": [\"$sdk\", \"$hosts\", \"$kind\", \"stdio\"]}" \
    "{\"stdio\": [\"$sdk\", \"$hosts\", \"$kind\", \"stdio\"], \"env\": {\"MCP_TOOL_ERRORS_OPTIONS\": $options_string}}" \
    "${tools[@]}"
done

# LiteLLM's proxy, without the guardrail and with it, in front of the
# MCPServer over Streamable HTTP (a stdio upstream is started anew for each
# call, which would be what the calls measure).
free_port() { "$sdk" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
proxy() {
  local dir=$work/$1
  litellm_config "$dir" "http://127.0.0.1:$upstream_port/mcp" "$LITELLM_KEY" "$3"
  (cd "$dir" && LITELLM_LOCAL_MODEL_COST_MAP=True exec \
    "$repo/$LITELLM_VENV/bin/litellm" --config config.yaml --host 127.0.0.1 --port "$2") >"$work/$1.log" 2>&1 &
  pids+=($!)
  local tenth
  for ((tenth = 0; tenth < LISTEN_TIMEOUT_S * 10; tenth++)); do
    curl --silent --fail --max-time 2 "http://127.0.0.1:$2/health/liveliness" >/dev/null 2>&1 && return
    sleep 0.1
  done
  tail -n 20 "$work/$1.log" >&2
  die "LiteLLM's proxy did not answer within $LISTEN_TIMEOUT_S s"
}
upstream_port=$(free_port)
"$sdk" "$hosts" mcpserver http "$upstream_port" >"$work/upstream.log" 2>&1 &
pids+=($!)
without_port=$(free_port)
proxy without "$without_port" false
with_port=$(free_port)
proxy with "$with_port" true
"$sdk" bindings/python/benches/calls.py litellm "$CALLS" \
  "{\"http\": \"http://127.0.0.1:$without_port/mcp\", \"token\": \"$LITELLM_KEY\"}" \
  "{\"http\": \"http://127.0.0.1:$with_port/mcp\", \"token\": \"$LITELLM_KEY\"}" \
  'hosts-fail={"path": "/data/1"}' 'hosts-echo={"text": "hello"}'
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
