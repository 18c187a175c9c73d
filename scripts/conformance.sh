#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against the `rmcp_http` example, which serves its tools through the layer.
#
# Two suites, each pinned:
# - 0.1.16 (the 2025 revisions): server-initialize, ping, tools-list and every
#   tools-call-* scenario it lists;
# - 0.2.0-alpha.12: every tools-* and input-required-result-* scenario under
#   `--spec-version 2026-07-28`, and every tasks-* scenario (the tasks
#   extension, which is on no spec timeline).
# Exits non-zero if any of them fails (but for the expected failures listed
# below, each with its reason), or if the suite's answer to the tool-error
# scenario was not rewrapped by the layer. Prints the figures of each suite.
#
# Node.js 22 and the suite come from the npm registry, installed under .tools/
# (ignored by git); the machine's own npm, of any recent version, installs them.
# A second run reuses them.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly SUITE_VERSION=0.1.16
readonly SUITE2_VERSION=0.2.0-alpha.12
readonly SPEC2=2026-07-28
# Scenarios that fail because of rmcp itself, each proven by failing the same
# way against the example with the layer off (MCP_TOOL_ERRORS=off), and kept
# out of the layer's figures: none at present. An entry that passes fails the
# run, so the list cannot go stale.
readonly EXPECTED_FAILURES=()
readonly NODE_MAJOR=22
readonly TOOLS=.tools
# Bounds on every wait, so that a broken server fails the run instead of hanging it.
readonly LISTEN_TIMEOUT_S=60
readonly SCENARIO_TIMEOUT_S=120

log() { echo "conformance: $*" >&2; }
die() { log "$*"; exit 1; }

# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
readonly suite_dir="$TOOLS/conformance/node_modules/@modelcontextprotocol/conformance"
readonly suite="$suite_dir/dist/index.js"
readonly suite2_dir="$TOOLS/conformance-$SUITE2_VERSION/node_modules/@modelcontextprotocol/conformance"
readonly suite2="$suite2_dir/dist/index.js"

ensure_node
ensure_package "$TOOLS/conformance" @modelcontextprotocol/conformance "$SUITE_VERSION"
ensure_package "$TOOLS/conformance-$SUITE2_VERSION" @modelcontextprotocol/conformance "$SUITE2_VERSION"
log "Node.js $("$node" --version), conformance suites $SUITE_VERSION and $SUITE2_VERSION"

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

# The 0.2.0 suite: what 2026-07-28 lists for tools and input-required results,
# and the tasks extension's scenarios.
mapfile -t scenarios2 < <(
  "$node" "$suite2" list --server --spec-version "$SPEC2" |
    sed -n 's/^ *- \(tools-[^ ]*\|input-required-result-[^ ]*\).*/\1/p'
)
mapfile -t tasks2 < <("$node" "$suite2" list --server | sed -n 's/^ *- \(tasks-[^ ]*\).*/\1/p')
((${#scenarios2[@]} > 0 && ${#tasks2[@]} > 0)) || die "the suite $SUITE2_VERSION lists no tools or tasks scenario"

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
listed() { local wanted=$1; shift; [[ " $* " == *" $wanted "* ]]; }

# run_scenario SUITE_JS LABEL SCENARIO [ARGS...]: one scenario, with its verdict.
passed_count=0 expected_count=0
run_scenario() {
  local suite_js=$1 label=$2 scenario=$3
  shift 3
  local output="$work/$label-$scenario.out"
  local ok=true
  timeout "$SCENARIO_TIMEOUT_S" "$node" "$suite_js" server \
    --url "$url" --scenario "$scenario" "$@" >"$output" 2>&1 || ok=false
  if $ok && listed "$scenario" "${EXPECTED_FAILURES[@]}"; then
    echo "FAIL $label $scenario: passes, so take it off EXPECTED_FAILURES"
    failed+=("$label $scenario (list)")
  elif $ok; then
    echo "PASS $label $scenario"
    passed_count=$((passed_count + 1))
  elif listed "$scenario" "${EXPECTED_FAILURES[@]}"; then
    echo "EXPECTED FAIL $label $scenario (rmcp, see EXPECTED_FAILURES)"
    expected_count=$((expected_count + 1))
  else
    echo "FAIL $label $scenario"
    cat "$output"
    failed+=("$label $scenario")
  fi
  # The suite accepts any isError text; the layer must have made it llmxml.
  if [[ $scenario == tools-call-error ]] && $ok &&
    ! grep -qF '<error tool=\"test_error_handling\">' "$output"; then
    echo "FAIL $label tools-call-error: the error text was not rewrapped by the layer"
    cat "$output"
    failed+=("$label tools-call-error (layer)")
  fi
}

# figures LABEL TOTAL: adds one line of figures per suite and requirement set.
summary=()
figures() {
  summary+=("$1: $passed_count of $2 passed, $expected_count expected failures (rmcp)")
  passed_count=0 expected_count=0
}

for scenario in "${scenarios[@]}"; do
  run_scenario "$suite" "$SUITE_VERSION" "$scenario" --verbose
done
figures "suite $SUITE_VERSION (2025-11-25)" "${#scenarios[@]}"
for scenario in "${scenarios2[@]}"; do
  run_scenario "$suite2" "$SUITE2_VERSION" "$scenario" --spec-version "$SPEC2" --verbose
done
figures "suite $SUITE2_VERSION ($SPEC2)" "${#scenarios2[@]}"
for scenario in "${tasks2[@]}"; do
  run_scenario "$suite2" "$SUITE2_VERSION" "$scenario" --verbose
done
figures "suite $SUITE2_VERSION (tasks extension)" "${#tasks2[@]}"

if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "FAIL the server died during the run"
  failed+=("server")
fi

printf '%s\n' "${summary[@]}"
echo "$((${#scenarios[@]} + ${#scenarios2[@]} + ${#tasks2[@]})) scenarios, ${#failed[@]} failed"
if ((${#failed[@]} > 0)); then
  log "server log:"
  tail -n 50 "$work/server.log" >&2
  exit 1
fi
