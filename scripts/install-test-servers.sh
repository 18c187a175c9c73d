#!/usr/bin/env bash
# Installs the MCP servers that the wrapper's tests run against, none of them
# written here: the official Python SDK (PyPI `mcp`) into a virtual environment,
# the TypeScript reference server `@modelcontextprotocol/server-everything`
# with Node.js 22 from npm, and the official TypeScript SDK
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
readonly EVERYTHING_VERSION=2026.8.31
readonly INSPECTOR_VERSION=2.12.0
readonly TYPESCRIPT_SDK_VERSION=1.32.2
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
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
ensure_node
ensure_package "$TOOLS/server-everything" @modelcontextprotocol/server-everything "$EVERYTHING_VERSION"
# The TypeScript SDK, for a server of tasks (its `registerToolTask`) written on
# it, and its own example Streamable HTTP server.
ensure_package "$TOOLS/typescript-sdk" @modelcontextprotocol/sdk "$TYPESCRIPT_SDK_VERSION"
# The MCP Inspector, whose CLI mode launches the command as a host does. Its
# install script (which fetches the Inspector's other clients) is not run; the
# CLI needs none of them.
ensure_package "$TOOLS/inspector" @modelcontextprotocol/inspector "$INSPECTOR_VERSION"

log "Python SDK mcp $PYTHON_SDK_VERSION in $venv; Node.js $("$node" --version), server-everything $EVERYTHING_VERSION, TypeScript SDK $TYPESCRIPT_SDK_VERSION, Inspector $INSPECTOR_VERSION"
