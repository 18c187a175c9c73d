#!/usr/bin/env bash
# Fuzzes the layer's JSON path (fuzz/fuzz_targets/json_path.rs) with cargo fuzz
# and libFuzzer for a bounded time, then prints how many inputs it ran.
#
#   scripts/fuzz.sh [seconds]      default 60
#
# A crash makes the script fail; libFuzzer leaves the input that caused it
# under fuzz/artifacts/json_path/, and `cargo fuzz run json_path <file>`
# replays it. The corpus grows under fuzz/corpus/json_path/ (ignored by git) and
# starts from the requests and answers of golden/; a second run goes on from it.
#
# cargo-fuzz comes from crates.io, installed under .tools/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."

readonly CARGO_FUZZ_VERSION=0.13.2
readonly TOOLS=.tools
readonly TARGET=json_path
readonly seconds=${1:-60}

log() { echo "fuzz: $*" >&2; }
die() { log "$*"; exit 1; }

[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "the time is a whole number of seconds, not '$seconds'"

if ! "$TOOLS/bin/cargo-fuzz" --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
  log "installing cargo-fuzz $CARGO_FUZZ_VERSION into $TOOLS"
  cargo install --quiet --locked --root "$TOOLS" --version "$CARGO_FUZZ_VERSION" cargo-fuzz
fi
export PATH="$PWD/$TOOLS/bin:$PATH"

# cargo fuzz builds with flags that only a nightly rustc accepts (-Zsanitizer,
# -Zbuild-std and the like), and the toolchain here is stable. RUSTC_BOOTSTRAP=1
# lets a stable rustc accept them. It is set for this script's own builds
# only, into fuzz/target; the library's normal builds never see it.
export RUSTC_BOOTSTRAP=1

# Seeds: every golden exchange (each of a sequence's on its own) as the target
# reads it: a mode byte (0: the inner service answers; 4 or 5: it panics in
# `call` or in its future; +8: panic messages exposed), the request, 0xff, the
# answer.
corpus=fuzz/corpus/$TARGET
mkdir -p "$corpus"
for case in golden/*.in.json; do
  python3 - "$case" "$corpus/golden-$(basename "$case" .in.json)" <<'PY'
import json, sys
case = json.load(open(sys.argv[1]))
exchanges = case.get("exchanges", [case])
for n, exchange in enumerate(exchanges):
    inner = exchange["inner"]
    mode = {None: 0, "call": 4, "poll": 5}[inner.get("panic_in")]
    if case.get("layer", {}).get("expose_panic_messages"):
        mode |= 8
    answer = json.dumps(inner.get("respond")).encode()
    seed = sys.argv[2] + (f"-{n}" if len(exchanges) > 1 else "")
    open(seed, "wb").write(bytes([mode]) + json.dumps(exchange["request"]).encode() + b"\xff" + answer)
PY
done

log "running $TARGET for $seconds s (the first run builds it, which takes minutes)"
mkdir -p fuzz/target
output=fuzz/target/$TARGET.log
status=0
cargo fuzz run "$TARGET" "$corpus" -- \
  -dict="fuzz/$TARGET.dict" \
  -max_total_time="$seconds" \
  -max_len=8192 \
  -timeout=10 \
  -print_final_stats=1 >"$output" 2>&1 || status=$?
grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|==[0-9]+==|SUMMARY|thread |Done |stat::(number_of_executed_units|peak_rss_mb|new_units_added))' "$output" >&2 || true

executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$output" | tail -1)
echo "executions: ${executions:-none} in $seconds s"
if ((status != 0)); then
  tail -n 40 "$output" >&2
  die "cargo fuzz failed ($status); inputs that crashed: $(ls fuzz/artifacts/"$TARGET" 2>/dev/null | tr '\n' ' ')"
fi
