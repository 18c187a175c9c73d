# The Python that runs the hosts the Python packages are tested in (the
# ContextForge gateway, FastMCP, LiteLLM's proxy): 3.12 or 3.13, found on PATH
# or under pyenv. Sourced, not run; the caller defines `die`.

# modern_python: prints the path of a Python 3.12 or 3.13; found by running
# it, since a pyenv shim is on PATH whether or not it can run its version.
modern_python() {
  local candidate
  for candidate in python3.12 python3.13 "$HOME"/.pyenv/versions/3.12*/bin/python3 "$HOME"/.pyenv/versions/3.13*/bin/python3; do
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] not in ((3, 12), (3, 13)))' 2>/dev/null; then
      "$candidate" -c 'import sys; print(sys.executable)'
      return
    fi
  done
  die "Python 3.12 or 3.13 is needed"
}
