#!/usr/bin/env bash
# The HTTP mode deployed on real parts: nginx (the Debian package) balancing
# three replicas of the command in front of one upstream, the official Python
# SDK server (stateless, JSON answers: cli/tests/http/servers/
# python_http_server.py), everything on 127.0.0.1. nginx keeps its
# connections to the replicas alive, as operators configure it for speed, with
# its default retry rules (a POST sent to a replica is sent nowhere else): a
# replica that closed a kept-alive connection as nginx sent a request on it
# would lose that call.
#
# The official Python client (deployment_client.py) makes the same mixed calls
# (successes, the SDK's two kinds of tool error, a slow call) directly to the
# upstream and then through nginx, and sends one replica SIGTERM once a third
# of the balanced calls are answered. It passes when every balanced call is
# answered, each success identical to its direct answer and each error wrapped
# once; and the stopped replica exits 0 after draining, while nginx's log shows
# it served calls.
#
# nginx runs unprivileged (as `nobody` when the script runs as root), with its
# configuration, pid file, logs and temporary folders in a temporary folder;
# it is installed with apt when missing (with sudo unless root). Needs the
# Python SDK: scripts/install-test-servers.sh. DEPLOYMENT_COMMAND=PATH runs
# that build of the command instead of building one. Every wait is bounded;
# every process started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly CALLS=${DEPLOYMENT_CALLS:-1000}
readonly IN_FLIGHT=16
readonly KEEPALIVE=16
readonly REPLICAS=3
readonly LISTEN_TIMEOUT_S=30
readonly RUN_TIMEOUT_S=300
readonly python=.tools/python/bin/python

log() { echo "deployment: $*" >&2; }
die() { log "$*"; exit 1; }

[[ -x $python ]] || die "the Python SDK is missing: run scripts/install-test-servers.sh"

# shellcheck source=scripts/lib/apt.sh
source scripts/lib/apt.sh
nginx=$(ensure_apt_package nginx-light nginx)
[[ ${1:-} == --install-only ]] && exit 0

# shellcheck source=scripts/lib/processes.sh
source scripts/lib/processes.sh
if [[ -n ${DEPLOYMENT_COMMAND:-} ]]; then
  proxy_exe=$DEPLOYMENT_COMMAND
else
  log "building the mcp-tool-errors command"
  proxy_exe=$(cargo_executable mcp-tool-errors -p mcp-tool-errors-cli --bin mcp-tool-errors)
fi

readonly address_pattern='127\.0\.0\.1:[0-9]+'
start upstream "listening on $address_pattern" "$python" cli/tests/http/servers/python_http_server.py
upstream=${found#listening on }
replica_addresses=() replica_pids=()
for ((replica = 1; replica <= REPLICAS; replica++)); do
  start "replica-$replica" "listening on $address_pattern" \
    "$proxy_exe" --upstream "http://$upstream/mcp" --listen 127.0.0.1:0
  replica_addresses+=("${found#listening on }")
  replica_pids+=("$pid")
done

# nginx takes no port 0: a port the system gave and took back.
nginx_port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$work/nginx"
{
  echo "worker_processes 1;"
  echo "pid $work/nginx/nginx.pid;"
  echo "error_log $work/nginx/error.log warn;"
  echo "events { worker_connections 1024; }"
  echo "http {"
  # Which replica (or replicas, when one refused) answered each request.
  echo "  log_format deployment '\$status \$upstream_addr';"
  echo "  access_log $work/nginx/access.log deployment;"
  for temp in client_body proxy fastcgi uwsgi scgi; do
    echo "  ${temp}_temp_path $work/nginx/$temp;"
  done
  echo "  upstream replicas {"
  for address in "${replica_addresses[@]}"; do
    echo "    server $address;"
  done
  # Connections to the replicas kept alive, as operators configure nginx for
  # speed: a draining replica must not close one as a request is sent on it.
  echo "    keepalive $KEEPALIVE;"
  echo "  }"
  echo "  server {"
  echo "    listen 127.0.0.1:$nginx_port;"
  echo "    location / {"
  echo "      proxy_pass http://replicas;"
  # nginx's default retry rules: a replica that refuses connections
  # (draining, or gone) is skipped; a POST sent to a replica is answered by
  # it or fails (no non_idempotent), so none is sent twice.
  echo "      proxy_next_upstream error timeout;"
  echo "      proxy_connect_timeout 2s;"
  echo "      proxy_read_timeout 60s;"
  # Event streams go to the client as they come.
  echo "      proxy_buffering off;"
  echo "      proxy_http_version 1.1;"
  echo "      proxy_set_header Connection \"\";"
  echo "    }"
  echo "  }"
  echo "}"
} >"$work/nginx/nginx.conf"
unprivileged=()
if ((EUID == 0)); then
  chown -R nobody "$work/nginx"
  chmod 755 "$work"
  unprivileged=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
"${unprivileged[@]}" "$nginx" -p "$work/nginx" -e error.log -c nginx.conf -g 'daemon off;' 2>"$work/nginx.log" &
pids+=("$!")
for ((tenth = 0; tenth < LISTEN_TIMEOUT_S * 10; tenth++)); do
  "$python" -c "import socket; socket.create_connection(('127.0.0.1', $nginx_port), 1)" 2>/dev/null && break
  kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/nginx.log" "$work/nginx/error.log" >&2; die "nginx exited"; }
  sleep 0.1
done
log "nginx $("$nginx" -v 2>&1 | sed 's/.*nginx\///') on 127.0.0.1:$nginx_port, replicas ${replica_addresses[*]}, upstream $upstream"

stopped_address=${replica_addresses[0]} stopped_pid=${replica_pids[0]}
failed=()
figures=$(timeout "$RUN_TIMEOUT_S" "$python" scripts/ci/deployment_client.py \
  "http://$upstream/mcp" "http://127.0.0.1:$nginx_port/mcp" "$stopped_pid" "$CALLS" "$IN_FLIGHT" \
  2>"$work/client.log") || failed+=("the calls (client log below)")

# The stopped replica drained and exited 0, within its drain timeout and grace.
status=
for ((tenth = 0; tenth < 150; tenth++)); do
  if ! kill -0 "$stopped_pid" 2>/dev/null; then
    wait "$stopped_pid" && status=0 || status=$?
    break
  fi
  sleep 0.1
done
exit_wait="$((tenth / 10)).$((tenth % 10))"
[[ $status == 0 ]] || failed+=("the stopped replica's exit status: ${status:-still running}")
grep -q 'drained' "$work/replica-1.log" || failed+=("the stopped replica did not say it drained")

# What nginx saw: requests per replica, and those sent on after a refusal.
served_by_stopped=$(grep -c " $stopped_address\$" "$work/nginx/access.log" || true)
sent_on=$(grep -c ', ' "$work/nginx/access.log" || true)
not_ok=$(grep -vc '^20[02] ' "$work/nginx/access.log" || true)
((served_by_stopped > 0)) || failed+=("the stopped replica served no call")
((not_ok == 0)) || failed+=("$not_ok responses of nginx other than 200/202")
for ((replica = 1; replica < REPLICAS; replica++)); do
  kill -0 "${replica_pids[$replica]}" 2>/dev/null || failed+=("replica $((replica + 1)) died")
done

echo "client: $figures"
echo "nginx: $(wc -l <"$work/nginx/access.log") requests, $served_by_stopped answered by the stopped replica," \
  "$sent_on sent on to another replica after a refusal, $not_ok not 200/202;" \
  "the stopped replica exited ${exit_wait} s after the calls"
if ((${#failed[@]} > 0)); then
  printf 'FAIL %s\n' "${failed[@]}"
  for name in client replica-1 nginx; do
    log "$name log:"
    tail -n 30 "$work/$name.log" >&2
  done
  tail -n 30 "$work/nginx/error.log" >&2
  exit 1
fi
echo "PASS every call answered through nginx while a replica drained"
