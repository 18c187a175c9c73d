#!/usr/bin/env bash
# Installs the MCP servers that the wrapper's tests run against, none of them
# written here: the official Python SDK (PyPI `mcp`) into a virtual environment,
# and the TypeScript reference server `@modelcontextprotocol/server-everything`
# with Node.js 22 from npm. Everything goes under .tools/ (ignored by git); a
# second run reuses what is there.
#
# tests/cli/ finds them there; with MCP_TOOL_ERRORS_REQUIRE_SERVERS set (CI sets
# it), a missing server fails those tests instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly PYTHON_SDK_VERSION=2.3.0
readonly EVERYTHING_VERSION=2026.8.31
readonly NODE_MAJOR=22
readonly TOOLS=.tools

log() { echo "install-test-servers: $*" >&2; }
die() { log "$*"; exit 1; }

# --- Python: the official SDK in .tools/python --------------------------------
command -v python3 >/dev/null || die "python3 is needed for the Python SDK server"
readonly venv="$TOOLS/python"
installed_sdk_version() {
  [[ -x $venv/bin/python ]] &&
    "$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null
}
if [[ $(installed_sdk_version || true) != "$PYTHON_SDK_VERSION" ]]; then
  log "installing mcp==$PYTHON_SDK_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$PYTHON_SDK_VERSION" >&2
fi
[[ $(installed_sdk_version || true) == "$PYTHON_SDK_VERSION" ]] || die "mcp $PYTHON_SDK_VERSION did not install"

# --- Node.js 22 and server-everything ------------------------------------------
command -v npm >/dev/null || die "npm is needed to install Node.js $NODE_MAJOR and server-everything"
case "$(uname -m)" in
  x86_64 | amd64) node_arch=x64 ;;
  aarch64 | arm64) node_arch=arm64 ;;
  *) die "no node-linux package for $(uname -m)" ;;
esac
readonly node="$TOOLS/node/node_modules/node-linux-$node_arch/bin/node"
readonly everything_dir="$TOOLS/server-everything/node_modules/@modelcontextprotocol/server-everything"

# Scripts are not run, so nothing is fetched from anywhere but the registry.
npm_install() {
  local prefix=$1 package=$2
  log "installing $package into $prefix"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts --loglevel=error "$package" >&2
}
installed_node_major() {
  [[ -x $node ]] && "$node" --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\..*/\1/p'
}
installed_everything_version() {
  [[ -f $everything_dir/package.json && -x $node ]] &&
    "$node" -p "require('./$everything_dir/package.json').version" 2>/dev/null
}

if [[ $(installed_node_major || true) != "$NODE_MAJOR" ]]; then
  npm_install "$TOOLS/node" "node-linux-$node_arch@$NODE_MAJOR"
fi
[[ $(installed_node_major || true) == "$NODE_MAJOR" ]] || die "Node.js $NODE_MAJOR did not install"
if [[ $(installed_everything_version || true) != "$EVERYTHING_VERSION" ]]; then
  npm_install "$TOOLS/server-everything" "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
fi
[[ $(installed_everything_version || true) == "$EVERYTHING_VERSION" ]] || die "server-everything did not install"

log "Python SDK mcp $PYTHON_SDK_VERSION in $venv; Node.js $("$node" --version), server-everything $EVERYTHING_VERSION"
