# The Python binding (bindings/python, the `mcp_tool_errors` package) as a
# wheel, and the environments of the hosts it is tested in. Sourced, not run,
# after scripts/lib/python.sh and scripts/lib/maturin.sh; the caller sets
# `target` and defines `log` and `die`.
#
# The hosts go into .tools/python-hosts (ignored by git), one environment
# each, since their dependencies differ: `sdk` holds FastMCP (pinned) and the
# official SDK it depends on (pinned, the version the adapters are written
# against); `litellm` the newest `litellm[proxy]` the registry serves.

readonly FASTMCP_VERSION=4.2.3
readonly MCP_VERSION=2.3.0
readonly HOSTS_DIR=.tools/python-hosts
readonly SDK_VENV=$HOSTS_DIR/sdk
readonly LITELLM_VENV=$HOSTS_DIR/litellm

installed_version() { "$1/bin/python" -c "import importlib.metadata as m; print(m.version('$2'))" 2>/dev/null; }

# ensure_hosts [--upgrade]: installs the hosts unless they are there; with
# --upgrade, LiteLLM is upgraded to the newest release the registry serves.
ensure_hosts() {
  local python
  python=$(modern_python)
  if [[ $(installed_version "$SDK_VENV" fastmcp || true) != "$FASTMCP_VERSION" ||
    $(installed_version "$SDK_VENV" mcp || true) != "$MCP_VERSION" ]]; then
    log "installing fastmcp==$FASTMCP_VERSION and mcp==$MCP_VERSION into $SDK_VENV"
    rm -rf "$SDK_VENV"
    "$python" -m venv "$SDK_VENV"
    "$SDK_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
      "fastmcp==$FASTMCP_VERSION" "mcp==$MCP_VERSION" >&2
  fi
  if [[ ${1:-} == --upgrade || -z $(installed_version "$LITELLM_VENV" litellm || true) ]]; then
    [[ -x $LITELLM_VENV/bin/python ]] || "$python" -m venv "$LITELLM_VENV"
    log "installing the newest litellm[proxy] into $LITELLM_VENV"
    "$LITELLM_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade 'litellm[proxy]' >&2
  fi
  [[ $(installed_version "$SDK_VENV" fastmcp || true) == "$FASTMCP_VERSION" ]] || die "fastmcp $FASTMCP_VERSION did not install"
  [[ -n $(installed_version "$LITELLM_VENV" litellm || true) ]] || die "litellm did not install"
}

# build_binding_wheel MATURIN_FLAGS...: the binding's abi3 wheel, built with
# maturin in the shared target folder; sets `binding_wheel`. Always for the
# same interpreter (a wheel for 3.10 and later whatever it is), so that a
# second build, for another environment, finds everything compiled.
build_binding_wheel() {
  ensure_maturin
  local wheels=$target/python-binding-wheels
  rm -rf "$wheels"
  CARGO_TARGET_DIR=$target "$maturin" build --quiet --manifest-path bindings/python/Cargo.toml \
    "$@" --interpreter "$(modern_python)" --out "$wheels" >&2
  binding_wheel=$(echo "$wheels"/mcp_tool_errors_middleware-*-abi3-*.whl)
  [[ -f $binding_wheel ]] || die "expected one abi3 wheel in $wheels"
}

# lint_binding: the binding crate's fmt and clippy (a workspace of its own,
# which the root's steps do not see), with the interpreter settings maturin
# gives pyo3's build script (PYO3_ENVIRONMENT_SIGNATURE is maturin's
# `IMPLEMENTATION-MAJOR.MINOR-BITSbit`): under other settings, each of clippy
# and the wheel's build makes the other recompile pyo3 and its build script.
lint_binding() {
  local python signature
  python=$(modern_python)
  signature=$("$python" -c 'import platform, struct, sys; print("%s-%d.%d-%dbit" % (platform.python_implementation().lower(), *sys.version_info[:2], struct.calcsize("P") * 8))')
  cargo fmt --manifest-path bindings/python/Cargo.toml --check
  CARGO_TARGET_DIR=$target PYO3_ENVIRONMENT_SIGNATURE=$signature PYO3_PYTHON=$python PYTHON_SYS_EXECUTABLE=$python \
    cargo clippy --quiet --manifest-path bindings/python/Cargo.toml -- -D warnings
}

# install_binding PYTHON: the wheel built above into PYTHON's environment,
# offline (the binding has no dependencies).
install_binding() {
  "$1" -m pip install --quiet --disable-pip-version-check --no-index --no-deps --force-reinstall "$binding_wheel" >&2
}

# litellm_config DIR UPSTREAM_URL KEY GUARDRAIL: DIR/config.yaml, LiteLLM's
# proxy with master key KEY in front of the MCP server at UPSTREAM_URL
# (Streamable HTTP), as `hosts`; with the guardrail (GUARDRAIL true) or
# without. The guardrail's entry is the one its documentation shows (the
# module docs of bindings/python/python/mcp_tool_errors/litellm.py), so that
# what the docs say to write is what runs.
litellm_config() {
  mkdir -p "$1"
  cat >"$1/config.yaml" <<EOF_CONFIG
model_list: []
general_settings:
  master_key: $3
mcp_servers:
  hosts:
    transport: http
    url: $2
EOF_CONFIG
  if [[ $4 == true ]]; then
    sed -n '/^    guardrails:$/,/^$/s/^    //p' "$repo/bindings/python/python/mcp_tool_errors/litellm.py" >>"$1/config.yaml"
    grep -q 'guardrail: mcp_tool_errors.litellm.ToolErrorsGuardrail' "$1/config.yaml" ||
      die "no guardrails entry in the documentation of mcp_tool_errors.litellm"
  fi
}
