# ContextForge's gateway (PyPI mcp-contextforge-gateway) with the plugin of
# contextforge/, on the loopback: what the gateway test
# (scripts/ci/contextforge.sh) and the gateway's benchmark
# (scripts/bench-contextforge.sh) both run. Sourced, not run, after
# scripts/lib/processes.sh, scripts/lib/maturin.sh, scripts/lib/python.sh and
# scripts/lib/python_binding.sh; the caller sets `repo` and `target` and
# defines `log` and `die`.
#
# The gateway needs Python 3.12 or 3.13 (scripts/lib/python.sh). It, the
# official Python SDK (its dependency) and setuptools (which builds the
# plugin, pure Python) are installed into .tools/contextforge (ignored by
# git); a second run reuses them.

readonly GATEWAY_VERSION=1.1.0
readonly GATEWAY_VENV=.tools/contextforge
readonly GATEWAY_TIMEOUT_S=60

installed_gateway() {
  [[ -x $GATEWAY_VENV/bin/python ]] &&
    "$GATEWAY_VENV/bin/python" -c "import importlib.metadata as m; print(m.version('mcp-contextforge-gateway'))" 2>/dev/null
}

# ensure_gateway: installs the gateway unless its version is there; sets
# `python`, the environment's interpreter.
ensure_gateway() {
  if [[ $(installed_gateway || true) != "$GATEWAY_VERSION" ]]; then
    log "installing mcp-contextforge-gateway==$GATEWAY_VERSION into $GATEWAY_VENV"
    rm -rf "$GATEWAY_VENV"
    "$(modern_python)" -m venv "$GATEWAY_VENV"
    "$GATEWAY_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
      "mcp-contextforge-gateway==$GATEWAY_VERSION" >&2
  fi
  "$GATEWAY_VENV/bin/python" -c 'import setuptools' 2>/dev/null ||
    "$GATEWAY_VENV/bin/python" -m pip install --quiet --disable-pip-version-check 'setuptools>=69' >&2
  [[ $(installed_gateway || true) == "$GATEWAY_VERSION" ]] || die "mcp-contextforge-gateway $GATEWAY_VERSION did not install"
  python=$repo/$GATEWAY_VENV/bin/python
}

# install_plugin MATURIN_FLAGS...: the binding's wheel (built with maturin in
# the shared target folder) and the plugin (pure Python, built with the
# environment's setuptools) installed into the gateway's environment.
install_plugin() {
  build_binding_wheel "$@"
  install_binding "$python"
  # Its dependencies, cpex and the binding, are there: nothing is fetched.
  "$python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps --no-build-isolation \
    --force-reinstall ./contextforge >&2
  log "installed $(basename "$binding_wheel") ($*) and the plugin"
}

free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_upstream NAME: contextforge/tests/upstream_server.py as NAME on a free
# port; sets `pid` and `port`.
start_upstream() {
  port=$(free_port)
  start "$1" 'Uvicorn running' "$python" contextforge/tests/upstream_server.py "$1" "$port"
}

# prepare_gateway PLUGIN_CONFIG: the gateway's folder, $work/gateway, with its
# .env (secrets by its own init-secrets, then the settings for the loopback
# and SQLite), and the plugin's entry in its plugins.yaml with PLUGIN_CONFIG
# (YAML lines) as its `config:`; sets `token`, the admin's.
prepare_gateway() {
  gateway_dir=$work/gateway
  mkdir -p "$gateway_dir"
  gateway_port=$(free_port)
  (cd "$gateway_dir" && "$repo/$GATEWAY_VENV/bin/init-secrets" --output .env --force >/dev/null)
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
$(sed 's/^/      /' <<<"$1")
EOF
  local jwt_secret
  jwt_secret=$(sed -n 's/^JWT_SECRET_KEY=//p' "$gateway_dir/.env" | tr -d "\"'")
  [[ -n $jwt_secret ]] || die "init-secrets wrote no JWT_SECRET_KEY"
  # The admin's bearer token, signed with that secret by the gateway's own tool
  # (`--secret=`: a random secret may begin with `-`, which argparse would
  # read as an option).
  token=$(cd "$gateway_dir" && "$python" -m mcpgateway.utils.create_jwt_token \
    --username admin@example.com --admin --exp 60 --secret="$jwt_secret" 2>"$work/token.log" | tail -n 1) || true
  [[ $token == ey* ]] || { cat "$work/token.log" >&2; die "the gateway's create_jwt_token made no token"; }
}

# gateway true|false: runs the gateway, plugins on or off, in its own process
# group (its workers with it), until it answers /health.
gateway_pid=
gateway() {
  (cd "$gateway_dir" && PLUGINS_ENABLED=$1 exec setsid "$repo/$GATEWAY_VENV/bin/mcpgateway" \
    --host 127.0.0.1 --port "$gateway_port") >"$work/gateway-$1.log" 2>&1 &
  gateway_pid=$!
  local tenth
  for ((tenth = 0; tenth < GATEWAY_TIMEOUT_S * 10; tenth++)); do
    curl --silent --fail --max-time 2 "http://127.0.0.1:$gateway_port/health" >/dev/null 2>&1 && return
    kill -0 "$gateway_pid" 2>/dev/null || { tail -n 20 "$work/gateway-$1.log" >&2; die "the gateway exited"; }
    sleep 0.1
  done
  tail -n 20 "$work/gateway-$1.log" >&2
  die "the gateway did not answer within $GATEWAY_TIMEOUT_S s"
}

stop_gateway() {
  [[ -n $gateway_pid ]] || return 0
  kill -- "-$gateway_pid" 2>/dev/null || true
  wait "$gateway_pid" 2>/dev/null || true
  gateway_pid=
}
trap 'stop_gateway; stop_processes' EXIT

# api PATH CURL_ARGS...: the gateway's REST API, as its admin.
api() {
  curl --silent --show-error --fail --max-time 30 -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' "http://127.0.0.1:$gateway_port$1" "${@:2}"
}

# register NAME PORT: the upstream at PORT registered as NAME.
register() {
  api /gateways -d "{\"name\": \"$1\", \"url\": \"http://127.0.0.1:$2/mcp\", \"transport\": \"STREAMABLEHTTP\"}" >/dev/null
}

# virtual_server: a virtual server with every tool registered; sets
# `endpoint`, its MCP endpoint.
virtual_server() {
  local tool_ids id
  tool_ids=$(api /tools | "$python" -c '
import json, sys
tools = json.load(sys.stdin)
tools = tools if isinstance(tools, list) else tools["items"]
print(json.dumps([tool["id"] for tool in tools]))')
  id=$(api /servers -d "{\"server\": {\"name\": \"every-tool\", \"associated_tools\": $tool_ids}}" |
    "$python" -c 'import json, sys; print(json.load(sys.stdin)["id"])')
  endpoint=http://127.0.0.1:$gateway_port/servers/$id/mcp
}
