#!/usr/bin/env bash
# A newcomer's first build: a new project made of the README's Quick start
# (its Cargo.toml block and its src/main.rs block, pasted as they are), with the
# one change that `mcp-tool-errors` comes from this checkout, wherever the
# README's dependency line points (a clone next to the project, or crates.io).
# It must build and run (its asserts pass) on the first try, print what the
# Quick start's text block shows, and must not turn on serde_json's
# preserve_order in the user's build.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
project=${CARGO_TARGET_DIR:-$repo/target}/readme-quickstart
rm -rf "$project"
mkdir -p "$project/src"

# The n-th fenced block of a language in the Quick start section.
block() {
  local lang=$1 n=$2
  awk -v lang="$lang" -v n="$n" '
    /^## Quick start/ { in_section = 1; next }
    /^## / && in_section { exit }
    in_section && $0 == "```" lang { count++; if (count == n) { copying = 1; next } }
    copying && /^```/ { exit }
    copying { print }
  ' README.md
}

{
  printf '[package]\nname = "readme-quickstart"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[workspace]\n\n'
  block toml 1 | sed "s|^mcp-tool-errors = .*|mcp-tool-errors = { path = \"$repo\" }|"
} >"$project/Cargo.toml"
block rust 1 >"$project/src/main.rs"

grep -q "path = \"$repo\"" "$project/Cargo.toml" || { echo "readme_quickstart: no mcp-tool-errors line in the README's Cargo.toml block" >&2; exit 1; }
[[ -s $project/src/main.rs ]] || { echo "readme_quickstart: no rust block in the Quick start" >&2; exit 1; }

# The same target folder as the repository's, so that dependencies are shared.
printed=$(CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target} cargo run --quiet --manifest-path "$project/Cargo.toml")
echo "readme_quickstart: the Quick start builds and runs"

shown=$(block text 1)
[[ -n $shown ]] || { echo "readme_quickstart: no text block of what the Quick start prints" >&2; exit 1; }
if [[ $printed != "$shown" ]]; then
  echo "readme_quickstart: the Quick start printed" >&2
  printf '%s\n' "$printed" >&2
  echo "where the README shows" >&2
  printf '%s\n' "$shown" >&2
  exit 1
fi
echo "readme_quickstart: it prints what the README shows"

# Adding the crate must not change how the user's program serializes JSON.
if cargo tree --quiet --manifest-path "$project/Cargo.toml" -e features -i serde_json | grep -q preserve_order; then
  echo "readme_quickstart: depending on mcp-tool-errors turns on serde_json's preserve_order:" >&2
  cargo tree --manifest-path "$project/Cargo.toml" -e features -i serde_json >&2
  exit 1
fi
echo "readme_quickstart: serde_json's features are the user's own"
