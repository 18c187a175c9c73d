# shellcheck shell=bash
# ensure_apt_package PACKAGE COMMAND: installs Debian's PACKAGE with apt when
# COMMAND is found neither on PATH nor in /usr/sbin (with sudo unless root;
# `apt-get update` first only when the install fails without it), then prints
# COMMAND's path. The caller defines `log`.
ensure_apt_package() {
  local package=$1 command=$2
  if ! command -v "$command" >/dev/null && [[ ! -x /usr/sbin/$command ]]; then
    log "installing $package with apt"
    local sudo=()
    ((EUID == 0)) || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$package" >&2 ||
      { "${sudo[@]}" apt-get update >&2 && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "$package" >&2; }
  fi
  command -v "$command" || echo "/usr/sbin/$command"
}
