#!/usr/bin/env bash
# Runs the rmcp tests against the newest rmcp 3.x the registry serves, not the
# locked one: the crate asks for `rmcp = "3.11"` (caret), so a user's server
# may build it with any later 3.x. The library with rmcp is linted first:
# clippy's missing_trait_methods, on the layered handler's impl of
# `ServerHandler`, fails on a method of the newer trait that it does not
# forward. The library's unit tests run too.
#
# Cargo.lock is put back on exit, whatever happens; the script fails if the
# update, the lint or the tests fail.
set -euo pipefail
cd "$(dirname "$0")/../.."

saved=$(mktemp)
cp Cargo.lock "$saved"
trap 'cp "$saved" Cargo.lock; rm -f "$saved"' EXIT

# The newest release, whatever Rust it declares: these tests run on the
# toolchain at hand, and `rust-version` is checked against the locked graph
# elsewhere (scripts/ci/rust_version.sh).
export CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=allow

resolved() { cargo pkgid rmcp | sed 's/.*[#@]//'; }

before=$(resolved)
# rmcp and its macros alone first, so that a failure points at rmcp (cargo
# prints each package it moves).
packages=(-p rmcp)
if cargo pkgid rmcp-macros >/dev/null 2>&1; then
  packages+=(-p rmcp-macros)
fi
cargo update "${packages[@]}"
# A dependency kept at its locked version can hold rmcp back (a newer rmcp
# that needs a newer tokio, say); if updating rmcp's own dependencies too
# would give a newer rmcp, take that.
if cargo update --dry-run --recursive -p rmcp 2>&1 | grep -qE '^ *Updating rmcp v'; then
  echo "rmcp-newest: rmcp held back by its locked dependencies; updating them too"
  cargo update --recursive -p rmcp
fi
after=$(resolved)
echo "rmcp-newest: rmcp $before (locked) -> $after (newest 3.x)"

# The flags of .ci/run's "clippy, library only (only-rmcp)" step, so that only
# what the update changed, and the library, are checked again.
cargo clippy --lib --no-default-features --features rmcp -- -D warnings
cargo test --all-features --test rmcp --lib
