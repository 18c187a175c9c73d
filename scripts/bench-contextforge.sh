#!/usr/bin/env bash
# The ContextForge plugin's cost, with its wheel built in release:
#
#   1. the hook's own time per call (contextforge/benches/hook.py): the
#      plugin against a minimal pure-Python hook that only wraps, same
#      payloads, same run;
#   2. calls through the gateway (contextforge/benches/gateway_calls.py), the
#      official Python client at a virtual server in front of the Python SDK
#      server of the gateway test, with the gateway's plugins off and then with
#      the plugin on (redact_secrets, max_error_bytes 4096).
#
#   scripts/bench-contextforge.sh [CALLS]    CALLS per tool and gateway (200)
#
# The gateway and maturin are installed as for scripts/ci/contextforge.sh.
# Loopback only; everything started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
target=${CARGO_TARGET_DIR:-$repo/target}
readonly LISTEN_TIMEOUT_S=60
readonly CALLS=${1:-200}

# shellcheck source=scripts/lib/python_script.sh
source scripts/lib/python_script.sh "bench-contextforge"
# shellcheck source=scripts/lib/contextforge.sh
source scripts/lib/contextforge.sh

echo "machine: $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
ensure_gateway
install_plugin --release

echo "== the hook's own time, microseconds per call"
"$python" contextforge/benches/hook.py

start_upstream cfup
up_port=$port
prepare_gateway "redact_secrets: true
max_error_bytes: 4096"
# The gateway limits calls per minute by default; a benchmark makes more.
printf 'RATE_LIMITING_ENABLED=false\nTOOL_RATE_LIMIT=1000000\n' >>"$gateway_dir/.env"
gateway false
register cfup "$up_port"
virtual_server
echo "== through the gateway, $CALLS sequential calls per tool"
echo "plugins off: $(timeout 600 "$python" contextforge/benches/gateway_calls.py "$endpoint" "$token" "$CALLS")"
stop_gateway
gateway true
echo "plugin on:   $(timeout 600 "$python" contextforge/benches/gateway_calls.py "$endpoint" "$token" "$CALLS")"
stop_gateway
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
