# maturin, pinned, from PyPI into .tools/maturin (ignored by git): the builder
# of the Python wheels (the command's, cli/; the ContextForge plugin's,
# contextforge/). Sourced, not run; the caller defines `log` and `die`.

readonly MATURIN_VERSION=1.16.0
readonly MATURIN_VENV=.tools/maturin
readonly maturin=$MATURIN_VENV/bin/maturin

installed_maturin() { [[ -x $maturin ]] && "$maturin" --version 2>/dev/null; }

# ensure_maturin: installs maturin unless the pinned version is there.
ensure_maturin() {
  command -v python3 >/dev/null || die "python3 is needed to build and install the wheel"
  if [[ $(installed_maturin || true) != "maturin $MATURIN_VERSION" ]]; then
    log "installing maturin $MATURIN_VERSION into $MATURIN_VENV"
    python3 -m venv "$MATURIN_VENV"
    "$MATURIN_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION" >&2
  fi
  [[ $(installed_maturin || true) == "maturin $MATURIN_VERSION" ]] || die "maturin $MATURIN_VERSION did not install"
}
