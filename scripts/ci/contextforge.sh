#!/usr/bin/env bash
# The ContextForge plugin (contextforge/) in the real gateway: PyPI's
# mcp-contextforge-gateway on SQLite, on the loopback only, its secrets made by
# its own init-secrets, in front of an MCP server on the official Python SDK
# (contextforge/tests/upstream_server.py) whose tools succeed, fail with
# isError, raise, answer a JSON-RPC error, leak a token and imitate the
# element; and a second such server, stopped once registered, for the
# gateway's own error. The official Python client calls every tool through a
# virtual server's MCP endpoint, once with the gateway's plugins off and once
# with the plugin on; contextforge/tests/compare.py checks that successes are
# the same both ways and that every failing tool's text is what the
# mcp-tool-errors command writes for that tool and that text, with the same
# options. Before that, the plugin's own tests (contextforge/tests/test_*.py)
# run against the installed wheel.
#
# The gateway needs Python 3.12 or 3.13 (found on PATH or under pyenv). It and
# the official SDK (its dependency) are installed from PyPI into
# .tools/contextforge, maturin into .tools/maturin (both ignored by git); a
# second run reuses them. The wheel is built in the dev profile, in the shared
# target folder, like the command's (scripts/ci/wheel.sh). Every wait is
# bounded, and everything started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

readonly GATEWAY_VERSION=1.1.0
readonly venv=.tools/contextforge
readonly LISTEN_TIMEOUT_S=60
# The plugin's configuration in the test, and the command's options that say
# the same.
readonly MAX_ERROR_BYTES=4096
target=${CARGO_TARGET_DIR:-$repo/target}

log() { echo "contextforge: $*" >&2; }
die() { log "$*"; exit 1; }

# shellcheck source=scripts/lib/maturin.sh
source scripts/lib/maturin.sh
# shellcheck source=scripts/lib/processes.sh
source scripts/lib/processes.sh

# --- the gateway, from PyPI ------------------------------------------------------
gateway_python() {
  local candidate
  for candidate in python3.12 python3.13 "$HOME"/.pyenv/versions/3.12*/bin/python3 "$HOME"/.pyenv/versions/3.13*/bin/python3; do
    # A pyenv shim is on PATH whether or not it can run that version.
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] not in ((3, 12), (3, 13)))' 2>/dev/null; then
      "$candidate" -c 'import sys; print(sys.executable)'
      return
    fi
  done
  die "the gateway needs Python 3.12 or 3.13"
}
installed_gateway() {
  [[ -x $venv/bin/python ]] &&
    "$venv/bin/python" -c "import importlib.metadata as m; print(m.version('mcp-contextforge-gateway'))" 2>/dev/null
}
if [[ $(installed_gateway || true) != "$GATEWAY_VERSION" ]]; then
  log "installing mcp-contextforge-gateway==$GATEWAY_VERSION into $venv"
  rm -rf "$venv"
  "$(gateway_python)" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp-contextforge-gateway==$GATEWAY_VERSION" >&2
fi
[[ $(installed_gateway || true) == "$GATEWAY_VERSION" ]] || die "mcp-contextforge-gateway $GATEWAY_VERSION did not install"
python=$repo/$venv/bin/python

# --- the plugin's crate: a workspace of its own, so the root's fmt and clippy
# steps do not see it ---------------------------------------------------------------
cargo fmt --manifest-path contextforge/Cargo.toml --check
cargo clippy --quiet --manifest-path contextforge/Cargo.toml -- -D warnings

# --- the plugin's wheel, installed into the gateway's environment -----------------
ensure_maturin
wheels=$target/contextforge-wheels
rm -rf "$wheels"
CARGO_TARGET_DIR=$target "$maturin" build --quiet --manifest-path contextforge/Cargo.toml \
  --profile dev --interpreter "$python" --out "$wheels" >&2
wheel=$(echo "$wheels"/mcp_tool_errors_contextforge-*-abi3-*.whl)
[[ -f $wheel ]] || die "expected one abi3 wheel in $wheels"
# Its one dependency, cpex, came with the gateway: nothing is fetched.
"$python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps --force-reinstall "$wheel" >&2
log "installed $(basename "$wheel")"

"$python" -m unittest discover -s contextforge/tests -p 'test_*.py'

# --- the command, the oracle -------------------------------------------------------
command=$(cargo_executable mcp-tool-errors -p mcp-tool-errors-cli --bin mcp-tool-errors)

# --- the servers ---------------------------------------------------------------------
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
up_port=$(free_port)
start upstream 'Uvicorn running' "$python" contextforge/tests/upstream_server.py cfup "$up_port"
down_port=$(free_port)
start down 'Uvicorn running' "$python" contextforge/tests/upstream_server.py cfdown "$down_port"
down_pid=$pid

# The gateway's folder: its .env (secrets by its own init-secrets, then the
# settings of this test), its SQLite database and its plugin configuration.
gateway_dir=$work/gateway
mkdir -p "$gateway_dir"
gateway_port=$(free_port)
(cd "$gateway_dir" && "$repo/$venv/bin/init-secrets" --output .env --force >/dev/null)
cat >>"$gateway_dir/.env" <<EOF
DATABASE_URL=sqlite:///./gateway.db
CACHE_TYPE=memory
SSRF_ALLOW_LOCALHOST=true
MCPGATEWAY_UI_ENABLED=false
MCPGATEWAY_ADMIN_API_ENABLED=false
PLUGINS_CONFIG_FILE=plugins.yaml
LOG_LEVEL=WARNING
EOF
cat >"$gateway_dir/plugins.yaml" <<EOF
plugins:
  - name: ToolErrors
    kind: mcp_tool_errors_contextforge.ToolErrorsPlugin
    hooks: [tool_post_invoke]
    mode: sequential
    config:
      redact_secrets: true
      max_error_bytes: $MAX_ERROR_BYTES
EOF
jwt_secret=$(sed -n 's/^JWT_SECRET_KEY=//p' "$gateway_dir/.env" | tr -d "\"'")
[[ -n $jwt_secret ]] || die "init-secrets wrote no JWT_SECRET_KEY"

# gateway PLUGINS: runs the gateway, in its own process group (its workers
# with it), with its plugins on or off, until it answers /health.
gateway() {
  (cd "$gateway_dir" && PLUGINS_ENABLED=$1 exec setsid "$repo/$venv/bin/mcpgateway" \
    --host 127.0.0.1 --port "$gateway_port") >"$work/gateway-$1.log" 2>&1 &
  gateway_pid=$!
  local tenth
  for ((tenth = 0; tenth < LISTEN_TIMEOUT_S * 10; tenth++)); do
    curl --silent --fail --max-time 2 "http://127.0.0.1:$gateway_port/health" >/dev/null 2>&1 && return
    kill -0 "$gateway_pid" 2>/dev/null || { tail -n 20 "$work/gateway-$1.log" >&2; die "the gateway exited"; }
    sleep 0.1
  done
  tail -n 20 "$work/gateway-$1.log" >&2
  die "the gateway did not answer within $LISTEN_TIMEOUT_S s"
}
gateway_pid=
stop_gateway() {
  [[ -n $gateway_pid ]] || return 0
  kill -- "-$gateway_pid" 2>/dev/null || true
  wait "$gateway_pid" 2>/dev/null || true
  gateway_pid=
}
trap 'stop_gateway; stop_processes' EXIT

# --- the gateway without plugins: registration, then the first calls --------------
gateway false
token=$(cd "$gateway_dir" && "$python" -m mcpgateway.utils.create_jwt_token \
  --username admin@example.com --admin --exp 30 --secret "$jwt_secret" 2>/dev/null | tail -n 1)
api() {
  curl --silent --show-error --fail --max-time 30 -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' "http://127.0.0.1:$gateway_port$1" "${@:2}"
}
for server in "cfup $up_port" "cfdown $down_port"; do
  read -r name port <<<"$server"
  api /gateways -d "{\"name\": \"$name\", \"url\": \"http://127.0.0.1:$port/mcp\", \"transport\": \"STREAMABLEHTTP\"}" >/dev/null
done
tool_ids=$(api /tools | "$python" -c '
import json, sys
tools = json.load(sys.stdin)
tools = tools if isinstance(tools, list) else tools["items"]
print(json.dumps([tool["id"] for tool in tools]))')
virtual=$(api /servers -d "{\"server\": {\"name\": \"cftest\", \"associated_tools\": $tool_ids}}" |
  "$python" -c 'import json, sys; print(json.load(sys.stdin)["id"])')
# The second server is down from here on: the gateway answers for it.
kill "$down_pid"
wait "$down_pid" 2>/dev/null || true

readonly succeeding='["cfup-echo"]'
readonly failing='["cfup-fail", "cfup-crash", "cfup-refuse", "cfup-leak", "cfup-imitate", "cfdown-echo"]'
calls='[["cfup-echo", {"text": "héllo \"world\" <error>"}], ["cfup-fail", {"path": "/data/1"}],
  ["cfup-crash", {"path": "/data/2"}], ["cfup-refuse", {"count": 0}], ["cfup-leak", {"repo": "acme/app"}],
  ["cfup-imitate", {"text": "all fine"}], ["cfdown-echo", {"text": "anyone?"}]]'
client() {
  timeout 120 "$python" contextforge/tests/gateway_client.py \
    "http://127.0.0.1:$gateway_port/servers/$virtual/mcp" "$token" "$calls" >"$work/$1.json" 2>"$work/$1.log" ||
    { cat "$work/$1.log" >&2; die "the client failed ($1)"; }
}
client without
stop_gateway

# --- the same calls with the plugin ---------------------------------------------------
gateway true
client with
stop_gateway

"$python" contextforge/tests/compare.py "$work/without.json" "$work/with.json" "$succeeding" "$failing" \
  -- "$command" --redact-secrets --max-error-bytes "$MAX_ERROR_BYTES"
