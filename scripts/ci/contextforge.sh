#!/usr/bin/env bash
# The ContextForge plugin (contextforge/) in the real gateway: PyPI's
# mcp-contextforge-gateway on SQLite, on the loopback only, its secrets made by
# its own init-secrets (scripts/lib/contextforge.sh), in front of an MCP server
# on the official Python SDK (contextforge/tests/upstream_server.py) whose
# tools succeed, fail with isError, raise, answer a JSON-RPC error, leak a
# token, imitate the element and answer with an element already rendered (a
# server behind the command behind the gateway); and a second such server, stopped once
# registered, for the gateway's own error. The official Python client calls
# every tool through a virtual server's MCP endpoint, once with the gateway's
# plugins off and once with the plugin on; contextforge/tests/compare.py
# checks that successes are the same both ways and that every failing tool's
# text is what the mcp-tool-errors command writes for that tool and that
# text, with the same options. Before that: the plugin's own tests
# (contextforge/tests/test_*.py) against the installed plugin.
#
# The plugin is pure Python on the binding (bindings/python), whose wheel is
# built in the dev profile, in the shared target folder, as
# scripts/ci/python_bindings.sh builds it (which lints the binding's crate):
# the second of the two builds finds everything compiled. Every wait is
# bounded, and everything started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
target=${CARGO_TARGET_DIR:-$repo/target}
readonly LISTEN_TIMEOUT_S=60
# The plugin's configuration in the test, and the command's options that say
# the same.
readonly MAX_ERROR_BYTES=4096
readonly PLUGIN_CONFIG="redact_secrets: true
max_error_bytes: $MAX_ERROR_BYTES"

# shellcheck source=scripts/lib/python_script.sh
source scripts/lib/python_script.sh "contextforge"
# shellcheck source=scripts/lib/contextforge.sh
source scripts/lib/contextforge.sh

if [[ ${1:-} == --install-only ]]; then
  ensure_gateway
  ensure_maturin
  exit 0
fi

ensure_gateway
install_plugin --profile dev
"$python" -m unittest discover -s contextforge/tests -p 'test_*.py'

# The oracle: the command, with the options of PLUGIN_CONFIG.
command=$(cargo_executable mcp-tool-errors -p mcp-tool-errors-cli --bin mcp-tool-errors)

start_upstream cfup
up_port=$port
start_upstream cfdown
down_pid=$pid down_port=$port

# --- the gateway without plugins: registration, then the first calls --------------
prepare_gateway "$PLUGIN_CONFIG"
gateway false
register cfup "$up_port"
register cfdown "$down_port"
virtual_server
# The second server is down from here on: the gateway answers for it.
kill "$down_pid"
wait "$down_pid" 2>/dev/null || true

readonly succeeding='["cfup-echo"]'
readonly failing='["cfup-fail", "cfup-crash", "cfup-refuse", "cfup-leak", "cfup-imitate", "cfup-rendered", "cfdown-echo"]'
readonly calls='[["cfup-echo", {"text": "héllo \"world\" <error>"}], ["cfup-fail", {"path": "/data/1"}],
  ["cfup-crash", {"path": "/data/2"}], ["cfup-refuse", {"count": 0}], ["cfup-leak", {"repo": "acme/app"}],
  ["cfup-imitate", {"text": "all fine"}], ["cfup-rendered", {"change": "I8a2"}],
  ["cfdown-echo", {"text": "anyone?"}]]'
client() {
  timeout 120 "$python" contextforge/tests/gateway_client.py "$endpoint" "$token" "$calls" \
    >"$work/$1.json" 2>"$work/$1.log" || { cat "$work/$1.log" >&2; die "the client failed ($1)"; }
}
client without
stop_gateway

# --- the same calls with the plugin ---------------------------------------------------
gateway true
client with
stop_gateway

"$python" contextforge/tests/compare.py "$work/without.json" "$work/with.json" "$succeeding" "$failing" \
  -- "$command" --redact-secrets --max-error-bytes "$MAX_ERROR_BYTES"
