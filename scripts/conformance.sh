#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against two targets that must pass the same scenarios:
# - `layer`: the `rmcp_http` example, which serves its tools through the layer;
# - `proxy`: the command's HTTP mode (`mcp-tool-errors --upstream URL --listen
#   ADDR`) in front of the same example served without the layer
#   (MCP_TOOL_ERRORS=off), so that every answer the suite checks has gone
#   through the proxy, and the tool error is rewrapped by the proxy alone.
#
# Two suites, each pinned:
# - 0.1.16 (the 2025 revisions): server-initialize, ping, tools-list and every
#   tools-call-* scenario it lists;
# - 0.2.0-alpha.12: every tools-* and input-required-result-* scenario under
#   `--spec-version 2026-07-28`, and every tasks-* scenario (the tasks
#   extension, which is on no spec timeline).
# Exits non-zero if any of them fails on either target (but for the expected
# failures listed below, each with its reason), if the two targets do not pass
# the same scenarios, or if the suite's answer to the tool-error scenario was
# not rewrapped. Prints the figures of each suite, for each target.
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
# out of the figures of both targets: none at present. An entry that passes fails the
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
# shellcheck source=scripts/lib/processes.sh
source scripts/lib/processes.sh
readonly suite_dir="$TOOLS/conformance/node_modules/@modelcontextprotocol/conformance"
readonly suite="$suite_dir/dist/index.js"
readonly suite2_dir="$TOOLS/conformance-$SUITE2_VERSION/node_modules/@modelcontextprotocol/conformance"
readonly suite2="$suite2_dir/dist/index.js"

ensure_node
ensure_package "$TOOLS/conformance" @modelcontextprotocol/conformance "$SUITE_VERSION"
ensure_package "$TOOLS/conformance-$SUITE2_VERSION" @modelcontextprotocol/conformance "$SUITE2_VERSION"
[[ ${1:-} == --install-only ]] && exit 0
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
log "building the rmcp_http example and the mcp-tool-errors command"
server_exe=$(cargo_executable rmcp_http --example rmcp_http --all-features)
proxy_exe=$(cargo_executable mcp-tool-errors -p mcp-tool-errors-cli --bin mcp-tool-errors)

# Port 0: the system picks a free loopback port, and each process logs which one.
readonly url_pattern='http://127\.0\.0\.1:[0-9]+/mcp'
start layer-server "$url_pattern" env PORT=0 "$server_exe"
layer_url=$found layer_pid=$pid
start bare-server "$url_pattern" env PORT=0 MCP_TOOL_ERRORS=off "$server_exe"
bare_url=$found bare_pid=$pid
start proxy 'listening on 127\.0\.0\.1:[0-9]+' \
  "$proxy_exe" --upstream "$bare_url" --listen 127.0.0.1:0
proxy_url="http://${found#listening on }/mcp"
proxy_pid=$pid
log "layer: the example at $layer_url; proxy: $proxy_url in front of the example without the layer at $bare_url"

failed=()
listed() { local wanted=$1; shift; [[ " $* " == *" $wanted "* ]]; }

# run_scenario TARGET URL SUITE_JS LABEL SCENARIO [ARGS...]: one scenario, with
# its verdict; a pass is recorded in $work/TARGET.passed.
passed_count=0 expected_count=0
run_scenario() {
  local target=$1 url=$2 suite_js=$3 label=$4 scenario=$5
  shift 5
  local output="$work/$target-$label-$scenario.out"
  local ok=true
  timeout "$SCENARIO_TIMEOUT_S" "$node" "$suite_js" server \
    --url "$url" --scenario "$scenario" "$@" >"$output" 2>&1 || ok=false
  if $ok && listed "$scenario" "${EXPECTED_FAILURES[@]}"; then
    echo "FAIL $target $label $scenario: passes, so take it off EXPECTED_FAILURES"
    failed+=("$target $label $scenario (list)")
  elif $ok; then
    echo "PASS $target $label $scenario"
    echo "$label $scenario" >>"$work/$target.passed"
    passed_count=$((passed_count + 1))
  elif listed "$scenario" "${EXPECTED_FAILURES[@]}"; then
    echo "EXPECTED FAIL $target $label $scenario (rmcp, see EXPECTED_FAILURES)"
    expected_count=$((expected_count + 1))
  else
    echo "FAIL $target $label $scenario"
    cat "$output"
    failed+=("$target $label $scenario")
  fi
  # The suite accepts any isError text; it must have come back as the element
  # (made by the layer in the example, or by the proxy: the example behind the
  # proxy has no layer).
  if [[ $scenario == tools-call-error ]] && $ok &&
    ! grep -qF '<error tool=\"test_error_handling\">' "$output"; then
    echo "FAIL $target $label tools-call-error: the error text was not rewrapped"
    cat "$output"
    failed+=("$target $label tools-call-error (not rewrapped)")
  fi
}

# figures LABEL TOTAL: adds one line of figures per target, suite and
# requirement set.
summary=()
figures() {
  summary+=("$1: $passed_count of $2 passed, $expected_count expected failures (rmcp)")
  passed_count=0 expected_count=0
}

# run_suites TARGET URL: every scenario of both suites against URL. Run in a
# subshell of its own, beside the other target's: its output goes to
# $work/TARGET.out, its figures to $work/TARGET.summary and what failed to
# $work/TARGET.failed, which the script reads once both are done.
run_suites() {
  local target=$1 url=$2 scenario
  : >"$work/$target.passed"
  exec >"$work/$target.out" 2>&1
  for scenario in "${scenarios[@]}"; do
    run_scenario "$target" "$url" "$suite" "$SUITE_VERSION" "$scenario" --verbose
  done
  figures "$target, suite $SUITE_VERSION (2025-11-25)" "${#scenarios[@]}"
  for scenario in "${scenarios2[@]}"; do
    run_scenario "$target" "$url" "$suite2" "$SUITE2_VERSION" "$scenario" --spec-version "$SPEC2" --verbose
  done
  figures "$target, suite $SUITE2_VERSION ($SPEC2)" "${#scenarios2[@]}"
  for scenario in "${tasks2[@]}"; do
    run_scenario "$target" "$url" "$suite2" "$SUITE2_VERSION" "$scenario" --verbose
  done
  figures "$target, suite $SUITE2_VERSION (tasks extension)" "${#tasks2[@]}"
  printf '%s\n' "${summary[@]}" >"$work/$target.summary"
  printf '%s\n' ${failed[@]+"${failed[@]}"} >"$work/$target.failed"
}

# The two targets at once: each scenario is a Node.js process that mostly
# waits on its target, so two streams of them take about half the time.
run_suites layer "$layer_url" &
layer_suites=$!
run_suites proxy "$proxy_url" &
proxy_suites=$!
wait "$layer_suites" "$proxy_suites"
for target in layer proxy; do
  cat "$work/$target.out"
  mapfile -t -O "${#summary[@]}" summary <"$work/$target.summary"
  while IFS= read -r name; do
    [[ -n $name ]] && failed+=("$name")
  done <"$work/$target.failed"
done

for name_and_pid in "the example with the layer:$layer_pid" "the example without the layer:$bare_pid" \
  "the proxy:$proxy_pid"; do
  if ! kill -0 "${name_and_pid##*:}" 2>/dev/null; then
    echo "FAIL ${name_and_pid%:*} died during the run"
    failed+=("${name_and_pid%:*}")
  fi
done
if ! diff -u "$work/layer.passed" "$work/proxy.passed" >"$work/passed.diff"; then
  echo "FAIL the two targets did not pass the same scenarios:"
  cat "$work/passed.diff"
  failed+=("same scenarios")
fi

printf '%s\n' "${summary[@]}"
echo "$((2 * (${#scenarios[@]} + ${#scenarios2[@]} + ${#tasks2[@]}))) scenario runs (2 targets), ${#failed[@]} failed"
if ((${#failed[@]} > 0)); then
  for name in layer-server bare-server proxy; do
    log "$name log:"
    tail -n 50 "$work/$name.log" >&2
  done
  exit 1
fi
