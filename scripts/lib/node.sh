# Node.js and npm packages under .tools/, for the scripts that run Node programs
# (the conformance suite, the TypeScript reference server). Sourced, not run.
#
# The caller sets TOOLS (the folder) and NODE_MAJOR, and defines `log` and `die`.
# Node.js itself comes from the npm registry (package node-linux-<arch>), so the
# machine's own npm, of any recent version, is all that is needed; scripts of
# the packages are not run, so nothing is fetched from anywhere but the registry.

command -v npm >/dev/null || die "npm is needed to install Node.js $NODE_MAJOR"
case "$(uname -m)" in
  x86_64 | amd64) node_arch=x64 ;;
  aarch64 | arm64) node_arch=arm64 ;;
  *) die "no node-linux package for $(uname -m)" ;;
esac
readonly node_package="node-linux-$node_arch"
readonly node="$TOOLS/node/node_modules/$node_package/bin/node"

# `npm install` of one package into a folder of its own.
npm_install() {
  local prefix=$1 package=$2
  log "installing $package into $prefix"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts --loglevel=error "$package" >&2
}

installed_node_major() {
  [[ -x $node ]] && "$node" --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\..*/\1/p'
}

# The version of the npm package installed in folder $1 (its package.json).
installed_package_version() {
  local dir=$1
  [[ -f $dir/package.json && -x $node ]] &&
    "$node" -p "require('./$dir/package.json').version" 2>/dev/null
}

# Node.js $NODE_MAJOR in $TOOLS/node, installed unless it is there already.
ensure_node() {
  if [[ $(installed_node_major || true) != "$NODE_MAJOR" ]]; then
    npm_install "$TOOLS/node" "$node_package@$NODE_MAJOR"
  fi
  [[ $(installed_node_major || true) == "$NODE_MAJOR" ]] || die "Node.js $NODE_MAJOR did not install"
}

# npm package $2 at version $3 in folder $1 (its node_modules/$2), installed
# unless that version is there already.
ensure_package() {
  local prefix=$1 package=$2 version=$3
  local dir=$prefix/node_modules/$package
  if [[ $(installed_package_version "$dir" || true) != "$version" ]]; then
    npm_install "$prefix" "$package@$version"
  fi
  [[ $(installed_package_version "$dir" || true) == "$version" ]] || die "$package $version did not install"
}
