# Programs that the scripts build with cargo and run in the background (the
# servers, the proxies), each until the script exits. Sourced, not run.
#
# The caller sets LISTEN_TIMEOUT_S and defines `log` and `die`. Sourcing makes
# a temporary folder, `$work`, which holds each program's output and is
# removed on exit, with every program started still running stopped first.

# cargo_executable NAME ARGS...: builds with `cargo build ARGS...` and prints
# the path of the executable NAME that cargo reports.
cargo_executable() {
  local name=$1 executable
  shift
  executable=$(cargo build --quiet "$@" --message-format=json-render-diagnostics |
    sed -n "s/.*\"executable\":\"\\([^\"]*\\/$name\\)\".*/\\1/p" | tail -n 1)
  [[ -x $executable ]] || die "cargo did not report the $name executable"
  echo "$executable"
}

work=$(mktemp -d)
pids=()
stop_processes() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap stop_processes EXIT

# start NAME PATTERN COMMAND...: runs COMMAND in the background, its stdout in
# $work/NAME.out and its stderr in $work/NAME.log, and waits for the log to show
# PATTERN (an extended regular expression); sets `found` to the first match,
# and `pid` to the process.
start() {
  local name=$1 pattern=$2
  shift 2
  "$@" >"$work/$name.out" 2>"$work/$name.log" &
  pid=$!
  pids+=("$pid")
  found=
  for ((tenth = 0; tenth < LISTEN_TIMEOUT_S * 10; tenth++)); do
    found=$(grep -oE "$pattern" "$work/$name.log" | head -n 1 || true)
    [[ -n $found ]] && return
    kill -0 "$pid" 2>/dev/null || { cat "$work/$name.log" >&2; die "$name exited"; }
    sleep 0.1
  done
  cat "$work/$name.log" >&2
  die "$name did not listen within $LISTEN_TIMEOUT_S s"
}
