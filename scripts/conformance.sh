#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against the `rmcp_http` example, which serves its tools through the layer.
#
# Scenarios: server-initialize, ping, tools-list and every tools-call-* scenario
# the suite lists. Exits non-zero if any of them fails, or if the suite's answer
# to the tool-error scenario was not rewrapped by the layer.
#
# Node.js 22 and the suite come from the npm registry, installed under .tools/
# (ignored by git); the machine's own npm, of any recent version, installs them.
# A second run reuses them.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly SUITE_VERSION=0.1.16
readonly NODE_MAJOR=22
readonly TOOLS=.tools
# Bounds on every wait, so that a broken server fails the run instead of hanging it.
readonly LISTEN_TIMEOUT_S=60
readonly SCENARIO_TIMEOUT_S=120

log() { echo "conformance: $*" >&2; }
die() { log "$*"; exit 1; }

command -v npm >/dev/null || die "npm is needed to install Node.js $NODE_MAJOR and the suite"

case "$(uname -m)" in
  x86_64 | amd64) node_arch=x64 ;;
  aarch64 | arm64) node_arch=arm64 ;;
  *) die "no node-linux package for $(uname -m)" ;;
esac
readonly node_package="node-linux-$node_arch"
readonly node="$TOOLS/node/node_modules/$node_package/bin/node"
readonly suite_dir="$TOOLS/conformance/node_modules/@modelcontextprotocol/conformance"
readonly suite="$suite_dir/dist/index.js"

# `npm install` into a folder of its own; scripts are not run, so nothing is
# fetched from anywhere but the registry.
npm_install() {
  local prefix=$1 package=$2
  log "installing $package into $prefix"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts --loglevel=error "$package" >&2
}

installed_node_major() {
  [[ -x $node ]] && "$node" --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\..*/\1/p'
}

installed_suite_version() {
  [[ -f $suite_dir/package.json && -x $node ]] &&
    "$node" -p "require('./$suite_dir/package.json').version" 2>/dev/null
}

if [[ $(installed_node_major || true) != "$NODE_MAJOR" ]]; then
  npm_install "$TOOLS/node" "$node_package@$NODE_MAJOR"
fi
[[ $(installed_node_major || true) == "$NODE_MAJOR" ]] || die "Node.js $NODE_MAJOR did not install"
if [[ $(installed_suite_version || true) != "$SUITE_VERSION" ]]; then
  npm_install "$TOOLS/conformance" "@modelcontextprotocol/conformance@$SUITE_VERSION"
fi
[[ $(installed_suite_version || true) == "$SUITE_VERSION" ]] || die "the suite did not install"
log "Node.js $("$node" --version), conformance suite $SUITE_VERSION"

# The scenarios, from the suite itself, so that a tools-call-* scenario is never missed.
mapfile -t all_scenarios < <("$node" "$suite" list --server | sed -n 's/^ *- \([^ ]*\).*/\1/p')
scenarios=()
for wanted in server-initialize ping tools-list; do
  [[ " ${all_scenarios[*]} " == *" $wanted "* ]] || die "the suite has no scenario $wanted"
  scenarios+=("$wanted")
done
mapfile -t tool_calls < <(printf '%s\n' "${all_scenarios[@]}" | grep '^tools-call-' || true)
((${#tool_calls[@]} > 0)) || die "the suite lists no tools-call-* scenario"
scenarios+=("${tool_calls[@]}")

# The same features as the README's test command, so that CI reuses its build.
log "building the rmcp_http example"
server_exe=$(cargo build --quiet --example rmcp_http --all-features --message-format=json-render-diagnostics |
  sed -n 's/.*"executable":"\([^"]*\/rmcp_http\)".*/\1/p' | tail -n 1)
[[ -x $server_exe ]] || die "cargo did not report the rmcp_http executable"

work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Port 0: the system picks a free loopback port, and the server logs which one.
PORT=0 "$server_exe" >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
url=
for ((tenth = 0; tenth < LISTEN_TIMEOUT_S * 10; tenth++)); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/mcp' "$work/server.log" | head -n 1 || true)
  [[ -n $url ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; die "the server exited"; }
  sleep 0.1
done
[[ -n $url ]] || { cat "$work/server.log" >&2; die "the server did not listen within $LISTEN_TIMEOUT_S s"; }
log "server listening on $url"

failed=()
for scenario in "${scenarios[@]}"; do
  output="$work/$scenario.out"
  if timeout "$SCENARIO_TIMEOUT_S" "$node" "$suite" server \
    --url "$url" --scenario "$scenario" --verbose >"$output" 2>&1; then
    echo "PASS $scenario"
  else
    echo "FAIL $scenario"
    cat "$output"
    failed+=("$scenario")
  fi
done

# The suite accepts any isError text; the layer must have made it llmxml.
if [[ -f $work/tools-call-error.out ]] &&
  ! grep -qF '<error tool=\"test_error_handling\">' "$work/tools-call-error.out"; then
  echo "FAIL tools-call-error: the error text was not rewrapped by the layer"
  cat "$work/tools-call-error.out"
  failed+=("tools-call-error (layer)")
fi

if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "FAIL the server died during the run"
  failed+=("server")
fi

echo "${#scenarios[@]} scenarios, ${#failed[@]} failed"
if ((${#failed[@]} > 0)); then
  log "server log:"
  tail -n 50 "$work/server.log" >&2
  exit 1
fi
