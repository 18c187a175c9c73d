#!/usr/bin/env bash
# Prints the feature sets that CI checks, one a line: a name, then the cargo
# flags that select it. Read from the [features] of the library's Cargo.toml
# (the package `mcp-tool-errors`, not the command's in cli/, which has none), so
# a new feature is checked without touching CI:
#
#   default                                    what most users compile
#   no-default-features --no-default-features  only when `default` is not empty
#   only-F --no-default-features --features F  each feature but `default` alone
#   all-features --all-features                what docs.rs builds
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
root = next(p for p in json.load(sys.stdin)["packages"] if p["name"] == "mcp-tool-errors")
features = root["features"]
print("default")
if features.get("default"):
    print("no-default-features --no-default-features")
for feature in sorted(features):
    if feature != "default":
        print(f"only-{feature} --no-default-features --features {feature}")
print("all-features --all-features")
'
