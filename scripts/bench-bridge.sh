#!/usr/bin/env bash
# The bridge's cost against supergateway (npm), side by side in one run:
# installs supergateway 4.0.0 with Node.js 22 into .tools/supergateway (ignored
# by git; a second run reuses it), then runs cli/benches/bridge.rs, which
# finds it there. Not part of CI. Arguments go to the bench: `-- scripted` or
# `-- python` for one child only.
#
#   scripts/bench-bridge.sh [scripted|python]
set -euo pipefail
cd "$(dirname "$0")/.."

readonly SUPERGATEWAY_VERSION=4.0.0
readonly NODE_MAJOR=22
readonly TOOLS=.tools

log() { echo "bench-bridge: $*" >&2; }
die() { log "$*"; exit 1; }

# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
ensure_node
ensure_package "$TOOLS/supergateway" supergateway "$SUPERGATEWAY_VERSION"

cargo bench -p mcp-tool-errors-cli --bench bridge -- "$@"
