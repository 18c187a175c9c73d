#!/usr/bin/env bash
# Everything CI installs from the network, in one go: the MCP servers the
# command's tests run (scripts/install-test-servers.sh), nginx, haproxy, the
# ContextForge gateway and maturin, the MCP conformance suites. .ci/run starts
# it in the background at its beginning, so that these downloads overlap the
# steps that compile, and waits for it before the first step that needs one.
# Each script is asked only for its installs (`--install-only`), so that the
# versions stay where they are used; each is idempotent, and the steps that
# use them check them again.
set -euo pipefail
cd "$(dirname "$0")/../.."

scripts/install-test-servers.sh
scripts/ci/deployment.sh --install-only
scripts/ci/bridge_deployment.sh --install-only
scripts/ci/contextforge.sh --install-only
scripts/ci/node_binding.sh --install-only
scripts/ci/python_bindings.sh --install-only
scripts/conformance.sh --install-only
echo "installs: done"
