#!/usr/bin/env bash
# Installs the MCP servers that the wrapper's tests run against, none of them
# written here: the official Python SDK (PyPI `mcp`) into a virtual environment,
# the reference servers PyPI `mcp-server-time` (in the same environment: it
# runs on that SDK) and npm `@modelcontextprotocol/server-everything` and
# `@modelcontextprotocol/server-memory` with Node.js 22, and the official
# TypeScript SDK
# (`@modelcontextprotocol/sdk`), on which cli/tests/servers/ts_task_server.mjs
# runs and whose example HTTP server the HTTP mode's tests start; and the MCP
# Inspector (npm), a host that launches the wrapper. Everything goes under
# .tools/ (ignored by git); a second run reuses what is there.
#
# cli/tests/ finds them there; with MCP_TOOL_ERRORS_REQUIRE_SERVERS set (CI sets
# it), a missing server fails those tests instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly PYTHON_SDK_VERSION=2.3.0
readonly SERVER_TIME_VERSION=2026.10.19
readonly EVERYTHING_VERSION=2026.8.31
readonly MEMORY_VERSION=2026.8.31
readonly INSPECTOR_VERSION=2.12.0
readonly TYPESCRIPT_SDK_VERSION=1.32.2
readonly NODE_MAJOR=22
readonly TOOLS=.tools

log() { echo "install-test-servers: $*" >&2; }
die() { log "$*"; exit 1; }

# --- Python: the official SDK in .tools/python --------------------------------
command -v python3 >/dev/null || die "python3 is needed for the Python SDK server"
readonly venv="$TOOLS/python"
# The version of the Python package $1 installed in the environment.
installed_python_version() {
  [[ -x $venv/bin/python ]] &&
    "$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null
}
# mcp-server-time requires mcp>=2.3,<3: both pins in one install, so that pip
# cannot move the SDK's.
if [[ $(installed_python_version mcp || true) != "$PYTHON_SDK_VERSION" ||
  $(installed_python_version mcp-server-time || true) != "$SERVER_TIME_VERSION" ]]; then
  log "installing mcp==$PYTHON_SDK_VERSION and mcp-server-time==$SERVER_TIME_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "mcp==$PYTHON_SDK_VERSION" "mcp-server-time==$SERVER_TIME_VERSION" >&2
fi
[[ $(installed_python_version mcp || true) == "$PYTHON_SDK_VERSION" ]] || die "mcp $PYTHON_SDK_VERSION did not install"
[[ $(installed_python_version mcp-server-time || true) == "$SERVER_TIME_VERSION" ]] ||
  die "mcp-server-time $SERVER_TIME_VERSION did not install"

# --- Node.js 22 and server-everything ------------------------------------------
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
ensure_node
ensure_package "$TOOLS/server-everything" @modelcontextprotocol/server-everything "$EVERYTHING_VERSION"
# The reference knowledge-graph server, whose state (a file) tells sessions
# apart.
ensure_package "$TOOLS/server-memory" @modelcontextprotocol/server-memory "$MEMORY_VERSION"
# The TypeScript SDK, for a server of tasks (its `registerToolTask`) written on
# it, and its own example Streamable HTTP server.
ensure_package "$TOOLS/typescript-sdk" @modelcontextprotocol/sdk "$TYPESCRIPT_SDK_VERSION"
# The MCP Inspector, whose CLI mode launches the command as a host does. Its
# install script (which fetches the Inspector's other clients) is not run; the
# CLI needs none of them.
ensure_package "$TOOLS/inspector" @modelcontextprotocol/inspector "$INSPECTOR_VERSION"

log "Python SDK mcp $PYTHON_SDK_VERSION and mcp-server-time $SERVER_TIME_VERSION in $venv; Node.js $("$node" --version), server-everything $EVERYTHING_VERSION, server-memory $MEMORY_VERSION, TypeScript SDK $TYPESCRIPT_SDK_VERSION, Inspector $INSPECTOR_VERSION"
