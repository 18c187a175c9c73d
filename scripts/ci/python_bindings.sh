#!/usr/bin/env bash
# The Python binding (bindings/python, import package `mcp_tool_errors`) in
# the real hosts, each called by the official Python client (PyPI `mcp`):
#
# - the official SDK's MCPServer and low-level Server, and FastMCP
#   (bindings/python/tests/hosts.py, the same tools on each), over stdio and
#   over Streamable HTTP, without the adapter and with it; and, over stdio,
#   the mcp-tool-errors command in front of the server without the adapter,
#   and the Rust example server with the layer (examples/rmcp_stdio.rs) for
#   the failures the command cannot see;
# - LiteLLM's proxy (no database, a master key) in front of the MCPServer
#   over Streamable HTTP (over stdio, the proxy starts the server anew for
#   each call), without the guardrail and with it.
#
# bindings/python/tests/compare.py checks, per host, that every case with
# the adapter is what the command (or the Rust server) gives for the same
# failure, and prints a table of the cases. Before that: the binding crate's
# fmt and clippy (a workspace of its own, which the root's steps do not see)
# and the binding's own tests (bindings/python/tests/test_*.py).
#
#   scripts/ci/python_bindings.sh [--install-only]
#
# The hosts are installed into .tools/python-hosts (scripts/lib/python_binding.sh),
# in the background by scripts/ci/installs.sh. The wheel is built once, in the
# dev profile, in the shared target folder. Loopback only; every wait is
# bounded, and everything started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
target=${CARGO_TARGET_DIR:-$repo/target}
readonly LISTEN_TIMEOUT_S=60
# The adapters' options in the test, and the command's that say the same. Only
# the tools that hang are timed: on a loaded machine, the first call of
# another tool may take a second too.
readonly OPTIONS='{"tool_timeouts": {"sleep": 1, "block": 1}, "redact_secrets": true, "max_error_bytes": 4096}'
readonly COMMAND_OPTIONS=(--tool-timeout-for sleep=1s --tool-timeout-for block=1s --redact-secrets --max-error-bytes 4096)
readonly LITELLM_KEY=sk-mcp-tool-errors-test

# shellcheck source=scripts/lib/python_script.sh
source scripts/lib/python_script.sh "python bindings"

if [[ ${1:-} == --install-only ]]; then
  ensure_hosts --upgrade
  ensure_maturin
  exit 0
fi

lint_binding

ensure_hosts
sdk=$repo/$SDK_VENV/bin/python
litellm=$repo/$LITELLM_VENV/bin/python
build_binding_wheel --profile dev
install_binding "$sdk"
install_binding "$litellm"
log "the wheel built and installed ($SECONDS s)"
"$sdk" -m unittest discover -s bindings/python/tests -p 'test_sdk_*.py'
LITELLM_LOCAL_MODEL_COST_MAP=True "$litellm" -m unittest discover -s bindings/python/tests -p 'test_litellm_*.py'

# The oracles: the command, and the Rust server with the layer.
command=$(cargo_executable mcp-tool-errors -p mcp-tool-errors-cli --bin mcp-tool-errors)
rust=$(cargo_executable rmcp_stdio --example rmcp_stdio --all-features)

tests=bindings/python/tests
results=$work/results
mkdir -p "$results"
free_port() { "$sdk" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# wait_listening PORT PID: until PORT accepts a connection.
wait_listening() {
  local tenth
  for ((tenth = 0; tenth < LISTEN_TIMEOUT_S * 10; tenth++)); do
    (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return
    kill -0 "$2" 2>/dev/null || die "the server on port $1 exited"
    sleep 0.1
  done
  die "nothing listened on port $1 within $LISTEN_TIMEOUT_S s"
}
# client NAME CASES ARGS...: client.py's outcomes into $results/NAME.json.
client() {
  local name=$1 cases=$2
  shift 2
  timeout 120 "$sdk" "$tests/client.py" "$cases" "$@" >"$results/$name.json" 2>"$work/$name.log" ||
    { cat "$work/$name.log" >&2; die "the client failed ($name)"; }
}

readonly SERVER_CASES='{"isError result": ["fail", {"path": "/data/1"}], "ToolError": ["deny", {"path": "/data/2"}],
  "imitation": ["imitate", {}], "exception with a secret": ["panic", {}], "hang": ["sleep", {"ms": 60000}, 3],
  "hang in a sync tool": ["block", {"ms": 4000}, 3],
  "unknown tool": ["nope", {}], "missing arguments": ["echo", {}],
  "success": ["echo", {"text": "héllo \"world\" <error>"}]}'

# serve KIND: every run of one host; the hosts run side by side.
serve() {
  local kind=$1 port server_pid
  client "$kind-without" "$SERVER_CASES" stdio "$sdk" "$tests/hosts.py" "$kind" stdio
  client "$kind-command" "$SERVER_CASES" stdio "$command" "${COMMAND_OPTIONS[@]}" -- "$sdk" "$tests/hosts.py" "$kind" stdio
  MCP_TOOL_ERRORS_OPTIONS=$OPTIONS MCP_TOOL_ERRORS_MARKS=$results/$kind-with-stdio.marks \
    client "$kind-with-stdio" "$SERVER_CASES" stdio "$sdk" "$tests/hosts.py" "$kind" stdio
  port=$(free_port)
  MCP_TOOL_ERRORS_OPTIONS=$OPTIONS MCP_TOOL_ERRORS_MARKS=$results/$kind-with-http.marks \
    "$sdk" "$tests/hosts.py" "$kind" http "$port" >"$work/$kind-http.log" 2>&1 &
  server_pid=$!
  wait_listening "$port" "$server_pid"
  client "$kind-with-http" "$SERVER_CASES" http "http://127.0.0.1:$port/mcp"
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
}

# litellm_proxy NAME PORT GUARDRAIL: LiteLLM's proxy in front of the MCPServer
# at $upstream_port, with the guardrail (true) or without; sets `pid`.
litellm_proxy() {
  local dir=$work/$1
  litellm_config "$dir" "http://127.0.0.1:$upstream_port/mcp" "$LITELLM_KEY" "$3"
  (cd "$dir" && LITELLM_LOCAL_MODEL_COST_MAP=True exec setsid \
    "$repo/$LITELLM_VENV/bin/litellm" --config config.yaml --host 127.0.0.1 --port "$2") >"$work/$1.log" 2>&1 &
  pid=$!
  pids+=("$pid")
}

readonly GATEWAY_CASES='{"isError result": ["hosts-fail", {"path": "/data/1"}], "ToolError": ["hosts-deny", {"path": "/data/2"}],
  "imitation": ["hosts-imitate", {}], "exception with a secret": ["hosts-panic", {}],
  "unknown tool": ["hosts-nope", {}], "success": ["hosts-echo", {"text": "héllo \"world\" <error>"}]}'

# --- LiteLLM's proxies start (about 10 s) while the servers are called --------------
started=$SECONDS
upstream_port=$(free_port)
"$sdk" "$tests/hosts.py" mcpserver http "$upstream_port" >"$work/upstream.log" 2>&1 &
upstream_pid=$!
pids+=("$upstream_pid")
without_port=$(free_port)
litellm_proxy litellm-without "$without_port" false
without_pid=$pid
with_port=$(free_port)
litellm_proxy litellm-with "$with_port" true
with_pid=$pid

# --- the servers, each host in its own process ----------------------------------------
serving=()
for kind in mcpserver lowlevel fastmcp; do
  serve "$kind" &
  serving+=($!)
done
client rust '{"panic": ["panic", {}]}' stdio "$rust"
for serving_pid in "${serving[@]}"; do
  wait "$serving_pid" || die "a host's runs failed"
done
log "the servers' runs done ($SECONDS s)"

# --- the proxies -------------------------------------------------------------------------
wait_listening "$upstream_port" "$upstream_pid"
wait_listening "$without_port" "$without_pid"
wait_listening "$with_port" "$with_pid"
log "LiteLLM's proxies answered $((SECONDS - started)) s after their start"
client litellm-without "$GATEWAY_CASES" http "http://127.0.0.1:$without_port/mcp" "$LITELLM_KEY"
client litellm-with-http "$GATEWAY_CASES" http "http://127.0.0.1:$with_port/mcp" "$LITELLM_KEY"
kill -- "-$without_pid" "-$with_pid" 2>/dev/null || true
log "the proxies' runs done ($SECONDS s)"

# --- the verdicts ---------------------------------------------------------------------------
status=0
"$sdk" "$tests/compare.py" server mcpserver "$results" "$SERVER_CASES" || status=1
"$sdk" "$tests/compare.py" server lowlevel "$results" "$SERVER_CASES" \
  --by-rust "exception with a secret" || status=1
"$sdk" "$tests/compare.py" server fastmcp "$results" "$SERVER_CASES" \
  --by-rust "exception with a secret" || status=1
"$sdk" "$tests/compare.py" gateway litellm "$results" "$GATEWAY_CASES" \
  --failing "isError result" ToolError imitation "exception with a secret" \
  -- "$command" --redact-secrets --max-error-bytes 4096 || status=1
exit "$status"
