#!/usr/bin/env bash
# Checks what `cargo publish` would upload: the manifest, the README, the two
# licences and src/, and nothing else (no tests, examples, benches, golden
# files, fuzzing or CI scripts). Cargo adds Cargo.lock, Cargo.toml.orig and
# .cargo_vcs_info.json itself; those are allowed too.
#
# Fails if a listed path is outside that list, or if one of the files a user
# needs is missing. The list comes from the `include` of Cargo.toml.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly REQUIRED=(Cargo.toml README.md LICENSE-MIT LICENSE-APACHE src/lib.rs)

log() { echo "package contents: $*" >&2; }

listing=$(cargo package --list --allow-dirty --quiet)

outside=()
while IFS= read -r path; do
  case "$path" in
    Cargo.toml | Cargo.toml.orig | Cargo.lock | .cargo_vcs_info.json) ;;
    README.md | LICENSE-MIT | LICENSE-APACHE) ;;
    src/*) ;;
    *) outside+=("$path") ;;
  esac
done <<<"$listing"

missing=()
for path in "${REQUIRED[@]}"; do
  grep -qxF "$path" <<<"$listing" || missing+=("$path")
done

status=0
if ((${#outside[@]})); then
  log "files that should not be published (fix \`include\` in Cargo.toml):"
  printf '  %s\n' "${outside[@]}" >&2
  status=1
fi
if ((${#missing[@]})); then
  log "files missing from the package:"
  printf '  %s\n' "${missing[@]}" >&2
  status=1
fi
((status == 0)) && echo "package contents: $(wc -l <<<"$listing") files, all expected"
exit "$status"
