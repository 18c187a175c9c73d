#!/usr/bin/env bash
# Checks that the `rust-version` of Cargo.toml is true: that no package in the
# locked dependency graph asks for a newer Rust, for every feature set of
# scripts/ci/feature_sets.sh (the default, each feature alone, all of them), and
# for the command's package, cli/ (reported as the set `cli`).
#
# Two verdicts, both fatal:
#   - a dependency of the library (normal or build, at any depth): every user
#     who turns that feature on needs that Rust;
#   - a package that only the tests, examples or benches pull in (through a
#     dev-dependency): the test command would not build on the declared Rust.
#
# Dependencies for every platform count, not only this machine's. The crate's
# own code is checked against `rust-version` by clippy's `incompatible_msrv`.
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { echo "rust-version: $*" >&2; }

metadata() { cargo metadata --format-version 1 "$@"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

while read -r name flags; do
  # shellcheck disable=SC2086 # the flags are separate words
  metadata $flags >"$tmp/$name.json"
done < <(scripts/ci/feature_sets.sh)
metadata --manifest-path cli/Cargo.toml >"$tmp/cli.json"

python3 - "$tmp"/*.json <<'PY'
import json
import os
import sys
from collections import deque


def version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def reachable(nodes, start, first_kinds):
    """Packages reached from `start`, whose first edge is one of `first_kinds`
    and every later edge a normal or build dependency; each with the direct
    dependency of the crate it comes through."""
    via = {}
    queue = deque()
    for dep in nodes[start]["deps"]:
        if {k["kind"] for k in dep["dep_kinds"]} & first_kinds and dep["pkg"] not in via:
            via[dep["pkg"]] = dep["pkg"]
            queue.append(dep["pkg"])
    while queue:
        pkg = queue.popleft()
        for dep in nodes[pkg]["deps"]:
            if {k["kind"] for k in dep["dep_kinds"]} & {None, "build"} and dep["pkg"] not in via:
                via[dep["pkg"]] = via[pkg]
                queue.append(dep["pkg"])
    return via


# (kind, package id) -> {"via": direct dependency, "sets": feature sets}
too_new = {}
declared = None
packages = {}  # every package of every feature set, by id
for path in sys.argv[1:]:
    feature_set = os.path.basename(path)[: -len(".json")]
    meta = json.load(open(path))
    packages.update({p["id"]: p for p in meta["packages"]})
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    root = meta["resolve"]["root"]
    declared = packages[root]["rust_version"]
    if declared is None:
        sys.exit("rust-version: Cargo.toml declares no rust-version")
    library = reachable(nodes, root, {None, "build"})
    dev_only = {p: v for p, v in reachable(nodes, root, {"dev"}).items() if p not in library}
    for kind, graph in (("library", library), ("dev", dev_only)):
        for pkg, via in graph.items():
            wanted = packages[pkg].get("rust_version")
            if wanted and version(wanted) > version(declared):
                entry = too_new.setdefault((kind, pkg), {"via": via, "sets": []})
                entry["sets"].append(feature_set)


def name(pkg_id):
    p = packages[pkg_id]
    return f"{p['name']} {p['version']}"


if not too_new:
    print(f"rust-version: {declared} holds for every dependency and dev-dependency")
    sys.exit(0)

newest = max((packages[pkg]["rust_version"] for _, pkg in too_new), key=version)
headings = {
    "library": f"dependencies that need a newer Rust than rust-version = {declared} (users who turn the feature on need it):",
    "dev": f"dev-dependencies that need a newer Rust than rust-version = {declared} (the tests would not build on it):",
}
for kind in ("library", "dev"):
    rows = sorted((pkg, e) for (k, pkg), e in too_new.items() if k == kind)
    if not rows:
        continue
    print(f"rust-version: {headings[kind]}", file=sys.stderr)
    for pkg, entry in rows:
        via = "" if entry["via"] == pkg else f", through {name(entry['via'])}"
        print(
            f"  {name(pkg)} needs {packages[pkg]['rust_version']}{via}; features: {', '.join(entry['sets'])}",
            file=sys.stderr,
        )
print(
    f"rust-version: raise rust-version to {newest}, or keep those packages out",
    file=sys.stderr,
)
sys.exit(1)
PY
