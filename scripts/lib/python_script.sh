# shellcheck shell=bash
# The start that the scripts running the Python packages in their hosts share
# (scripts/ci/python_bindings.sh, scripts/ci/contextforge.sh and their
# benchmarks): `log` and `die` under the script's NAME, the command that
# failed reported, and the libraries they all use. Sourced, not run, as
# `source scripts/lib/python_script.sh NAME`; the caller sets `repo`, `target`
# and LISTEN_TIMEOUT_S first.

readonly script_name=$1
log() { echo "$script_name: $*" >&2; }
die() { log "$*"; exit 1; }
set -E
trap 'log "failed: $BASH_COMMAND (line $LINENO)"' ERR

# shellcheck source=scripts/lib/processes.sh
source scripts/lib/processes.sh
# shellcheck source=scripts/lib/maturin.sh
source scripts/lib/maturin.sh
# shellcheck source=scripts/lib/python.sh
source scripts/lib/python.sh
# shellcheck source=scripts/lib/python_binding.sh
source scripts/lib/python_binding.sh
