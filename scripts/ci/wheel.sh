#!/usr/bin/env bash
# The command as a Python user gets it: builds the wheel of cli/pyproject.toml
# with maturin, installs it into a fresh virtual environment, and checks the
# installed `mcp-tool-errors` with a PATH that has no Rust toolchain:
#
#   1. as a shell finds it: `mcp-tool-errors --version`, then one tool error
#      through it from a child written in Python, rewrapped;
#   2. the command's tests (cli/tests, the server tests included) with
#      MCP_TOOL_ERRORS_BIN naming the installed executable; each wrapper they
#      start runs with the directories holding cargo or rustc taken out of PATH.
#
# maturin is pinned and installed from PyPI into .tools/maturin (ignored by git).
# The wheel is built in the dev profile, in the shared target folder: the
# dependencies the tests already compiled are reused, where a release build
# compiles every one of them again with optimisation (on 2 cores about three
# times the CPU time for the same check); packaging, the executable's place on
# PATH and its behaviour do not depend on the profile. A wheel to publish is
# built with `maturin build --release`.
#
# Run scripts/install-test-servers.sh first for the server tests (CI does).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

target=${CARGO_TARGET_DIR:-$repo/target}
readonly wheels=$target/wheels
readonly venv=$target/wheel-venv

log() { echo "wheel: $*" >&2; }
die() { log "$*"; exit 1; }

# --- maturin -----------------------------------------------------------------
# shellcheck source=scripts/lib/maturin.sh
source scripts/lib/maturin.sh
ensure_maturin

# --- the wheel -----------------------------------------------------------------
rm -rf "$wheels"
CARGO_TARGET_DIR=$target "$maturin" build --quiet --manifest-path cli/Cargo.toml \
  --profile dev --out "$wheels" >&2
shopt -s nullglob
built=("$wheels"/mcp_tool_errors-*.whl)
shopt -u nullglob
((${#built[@]} == 1)) || die "expected one wheel in $wheels, found ${#built[@]}"
wheel=${built[0]}
log "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

# --- a fresh virtual environment -----------------------------------------------
rm -rf "$venv"
python3 -m venv "$venv"
# The wheel has no dependencies: nothing is fetched.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "$wheel" >&2
exe=$venv/bin/mcp-tool-errors
[[ -x $exe ]] || die "the wheel put no mcp-tool-errors in $venv/bin"

# --- 1. as a user without Rust runs it -----------------------------------------
# PATH as the environment's activation makes it, less every directory that
# holds cargo or rustc.
no_rust_path=$venv/bin
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [[ -n $dir && ! -e $dir/cargo && ! -e $dir/rustc ]] && no_rust_path+=:$dir
done
without_rust() { env -i HOME="$HOME" PATH="$no_rust_path" "$@"; }

if without_rust sh -c 'command -v cargo || command -v rustc' >/dev/null; then
  die "PATH still finds a Rust toolchain: $no_rust_path"
fi
found=$(without_rust sh -c 'command -v mcp-tool-errors') || die "mcp-tool-errors is not on the environment's PATH"
[[ $found == "$exe" ]] || die "PATH finds $found, not the wheel's $exe"
version=$(without_rust mcp-tool-errors --version)
[[ $version == "mcp-tool-errors $(sed -n 's/^version = "\(.*\)"/\1/p' cli/Cargo.toml | head -1)" ]] ||
  die "unexpected version: $version"

# One call through it, to a child written in Python that fails every tool call.
child='
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    result = {"content": [{"type": "text", "text": "disk full"}], "isError": True}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
'
call='{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"save","arguments":{}}}'
answer=$(without_rust mcp-tool-errors -- python3 -c "$child" <<<"$call")
text=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["result"]["content"][0]["text"])' "$answer")
expected=$'<error tool="save">\ndisk full\n</error>'
[[ $text == "$expected" ]] || die "the installed command answered $answer"
log "the installed $version runs without a Rust toolchain on PATH and rewraps a tool error"

# --- 2. the command's tests against it -----------------------------------------
# Built (and run) by cargo, as always; only the executable under test is the
# wheel's. --ignored: the tests that need the servers of
# scripts/install-test-servers.sh (and the long memory tests), which the test
# command skips; the others ran against the same sources in that step, whose
# build (`--workspace --all-features`) this one reuses.
MCP_TOOL_ERRORS_BIN=$exe cargo test --workspace --all-features --test cli -- --ignored
