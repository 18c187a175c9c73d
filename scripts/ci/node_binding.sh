#!/usr/bin/env bash
# The Node.js binding (bindings/node/, npm package mcp-tool-errors): the addon
# crate's fmt and clippy (a workspace of its own, which the root's steps do
# not see), the addon built in the dev profile with @napi-rs/cli, then its
# tests with Node.js 22: withToolErrors against a transport of the tests' own
# (tests/wrapper.test.mjs), index.d.ts against the transports of both SDK
# lines (tsc), and tests/same_bytes.mjs: the official client's bytes through
# the wrapper equal the mcp-tool-errors command's in front of the same server,
# over stdio and Streamable HTTP with @modelcontextprotocol/sdk 1.32 and over
# stdio with @modelcontextprotocol/server 2.4 (versions in the package's
# devDependencies and package-lock.json).
#
# `--install-only` installs Node.js and the package's npm dependencies only,
# as scripts/ci/installs.sh asks.
set -euo pipefail
cd "$(dirname "$0")/../.."
readonly NODE_MAJOR=22
readonly TOOLS=.tools
readonly package=bindings/node

log() { echo "node-binding: $*" >&2; }
die() { log "$*"; exit 1; }
set -E
trap 'log "failed: $BASH_COMMAND (line $LINENO)"' ERR

# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh

# The package's npm dependencies as package-lock.json pins them, unless they
# are installed already from this lock.
ensure_dependencies() {
  ensure_node
  if [[ ! $package/node_modules/.package-lock.json -nt $package/package-lock.json ]]; then
    log "installing the npm dependencies of $package"
    (cd "$package" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
  fi
}

if [[ ${1:-} == --install-only ]]; then
  ensure_dependencies
  exit 0
fi

# The addon's crate is a workspace of its own; built and linted in the shared
# target folder, like the wheels, so that the dependencies it shares with the
# library's builds are compiled once.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo fmt --manifest-path "$package/Cargo.toml" --check
cargo clippy --quiet --manifest-path "$package/Cargo.toml" -- -D warnings

ensure_dependencies
PATH="$PWD/$(dirname "$node"):$PATH"
export PATH

# The oracle: the command, as the other steps build it.
LISTEN_TIMEOUT_S=60
# shellcheck source=scripts/lib/processes.sh
source scripts/lib/processes.sh
command=$(cargo_executable mcp-tool-errors -p mcp-tool-errors-cli --bin mcp-tool-errors)

cd "$package"
node_modules/.bin/napi build --platform --js binding.cjs --dts binding.d.ts >&2
node --test tests/wrapper.test.mjs
node_modules/.bin/tsc -p tests
for setup in sdk1-stdio sdk1-http sdk2-stdio; do
  node tests/same_bytes.mjs "$setup" "$command"
done
