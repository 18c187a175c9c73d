#!/usr/bin/env bash
# The lint that keeps LayeredHandler forwarding every method of rmcp's
# ServerHandler (clippy's missing_trait_methods, on the impl in
# src/rmcp/layered.rs) must be able to fail: with one forwarded method taken
# out, clippy of the library with rmcp must fail and name that method.
#
# The flags are those of .ci/run's "clippy, library only (only-rmcp)" step, so
# only the library is checked again. The file is put back on exit, whatever
# happens (with a new modification time, so the next build checks it again).
set -euo pipefail
cd "$(dirname "$0")/../.."

file=src/rmcp/layered.rs
method=discover

saved=$(mktemp)
output=$(mktemp)
cp "$file" "$saved"
trap 'cp "$saved" "$file"; rm -f "$saved" "$output"' EXIT

sed -i "/^ *async $method(/d" "$file"
if cmp -s "$saved" "$file"; then
  echo "forwarding_lint: no line forwards \`$method\` in $file" >&2
  exit 1
fi

if cargo clippy --lib --no-default-features --features rmcp -- -D warnings >"$output" 2>&1; then
  echo "forwarding_lint: clippy passed with \`$method\` not forwarded" >&2
  exit 1
fi
expected="missing trait method provided by default: \`$method\`"
if ! grep -qF "$expected" "$output"; then
  echo "forwarding_lint: clippy failed, but not with \"$expected\":" >&2
  cat "$output" >&2
  exit 1
fi
echo "forwarding_lint: without \`$method\`, clippy fails with \"$expected\""
