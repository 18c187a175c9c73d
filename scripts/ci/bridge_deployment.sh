#!/usr/bin/env bash
# The bridge deployed on real parts: Debian's haproxy balancing three bridge
# replicas (`--listen ADDR -- COMMAND`) of a stdio server in the standard
# library alone (bridge_deployment_server.py), everything on 127.0.0.1.
# haproxy keeps each session on the replica that opened it with a stick
# table learned from the `Mcp-Session-Id` response header, takes a replica
# out when its `/readyz` (--admin-listen) answers 503, and tries another
# replica when one refuses a connection. The configuration is the one
# docs/bridge.md ("Deploying") gives.
#
# The client (bridge_deployment_client.py) opens sessions and makes calls in
# them, and sends one replica SIGTERM once a third of the calls are answered.
# It passes when every call is answered with its own result (a session whose
# replica is gone gets 404, and the client opens a new one, as the transport
# says), the stopped replica exits 0 after draining and had served calls, and
# the others live.
#
# haproxy is installed with apt when missing (with sudo unless root).
# DEPLOYMENT_COMMAND=PATH runs that build of the command instead of building
# one. Every wait is bounded; every process started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly SESSIONS=${BRIDGE_DEPLOYMENT_SESSIONS:-40}
readonly CALLS=${BRIDGE_DEPLOYMENT_CALLS:-15}
readonly WORKERS=8
readonly REPLICAS=3
readonly LISTEN_TIMEOUT_S=30
readonly RUN_TIMEOUT_S=120

log() { echo "bridge deployment: $*" >&2; }
die() { log "$*"; exit 1; }

# shellcheck source=scripts/lib/apt.sh
source scripts/lib/apt.sh
haproxy=$(ensure_apt_package haproxy haproxy)
[[ ${1:-} == --install-only ]] && exit 0

# shellcheck source=scripts/lib/processes.sh
source scripts/lib/processes.sh
if [[ -n ${DEPLOYMENT_COMMAND:-} ]]; then
  bridge_exe=$DEPLOYMENT_COMMAND
else
  log "building the mcp-tool-errors command"
  bridge_exe=$(cargo_executable mcp-tool-errors -p mcp-tool-errors-cli --bin mcp-tool-errors)
fi

readonly address_pattern='127\.0\.0\.1:[0-9]+'
replica_addresses=() replica_admins=() replica_pids=()
for ((replica = 1; replica <= REPLICAS; replica++)); do
  start "replica-$replica" "listening on $address_pattern" \
    "$bridge_exe" --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --drain-timeout 5s \
    -- python3 scripts/ci/bridge_deployment_server.py
  replica_addresses+=("${found#listening on }")
  replica_admins+=("$(grep -oE "health endpoints on $address_pattern" "$work/replica-$replica.log" |
    sed 's/.* on //')")
  replica_pids+=("$pid")
done

# haproxy takes no port 0: a port the system gave and took back.
haproxy_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
{
  echo "global"
  echo "  log stdout format raw local0"
  echo "defaults"
  echo "  mode http"
  echo "  log global"
  # Not the connections that send nothing (this script's wait for the port).
  echo "  option dontlognull"
  # Which replica answered each request, and how.
  echo "  log-format \"%ST %s %HM\""
  echo "  timeout connect 2s"
  echo "  timeout client 60s"
  echo "  timeout server 60s"
  echo "  timeout check 1s"
  # A replica that refuses the connection (drained, or gone): another one.
  echo "  retries 3"
  echo "  option redispatch 1"
  echo "frontend mcp"
  echo "  bind 127.0.0.1:$haproxy_port"
  echo "  default_backend bridges"
  echo "backend bridges"
  echo "  balance roundrobin"
  # A session stays on the replica that answered its initialize with its id.
  echo "  stick-table type string len 64 size 100k expire 30m"
  echo "  stick store-response res.hdr(mcp-session-id)"
  echo "  stick match req.hdr(mcp-session-id)"
  # A draining replica answers /readyz 503: no new session goes there.
  echo "  option httpchk GET /readyz"
  for ((replica = 0; replica < REPLICAS; replica++)); do
    echo "  server bridge-$((replica + 1)) ${replica_addresses[$replica]} check port ${replica_admins[$replica]##*:} inter 200ms fall 1 rise 2"
  done
} >"$work/haproxy.cfg"
"$haproxy" -db -f "$work/haproxy.cfg" >"$work/haproxy.out" 2>"$work/haproxy.log" &
pids+=("$!")
for ((tenth = 0; tenth < LISTEN_TIMEOUT_S * 10; tenth++)); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $haproxy_port), 1)" 2>/dev/null && break
  kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/haproxy.log" >&2; die "haproxy exited"; }
  sleep 0.1
done
log "haproxy $("$haproxy" -v | sed -n 's/^HAProxy version \([^ ]*\).*/\1/p') on 127.0.0.1:$haproxy_port, replicas ${replica_addresses[*]}"

stopped_pid=${replica_pids[0]}
failed=()
figures=$(timeout "$RUN_TIMEOUT_S" python3 scripts/ci/bridge_deployment_client.py \
  "http://127.0.0.1:$haproxy_port/mcp" "$stopped_pid" "$SESSIONS" "$CALLS" "$WORKERS" \
  2>"$work/client.log") || failed+=("the calls (client log below)")

# The stopped replica drained and exited 0, within its drain timeout and grace.
status=
for ((tenth = 0; tenth < 200; tenth++)); do
  if ! kill -0 "$stopped_pid" 2>/dev/null; then
    wait "$stopped_pid" && status=0 || status=$?
    break
  fi
  sleep 0.1
done
[[ $status == 0 ]] || failed+=("the stopped replica's exit status: ${status:-still running}")
grep -q 'drained' "$work/replica-1.log" || failed+=("the stopped replica did not say it drained")

# What haproxy saw: calls per replica, and answers that were not 200/202/404.
calls_by_stopped=$(grep -c '^200 bridge-1 POST' "$work/haproxy.out" || true)
requests=$(grep -cE '^[0-9]{3} ' "$work/haproxy.out" || true)
not_found=$(grep -c '^404 ' "$work/haproxy.out" || true)
others=$(grep -E '^[0-9]{3} ' "$work/haproxy.out" | grep -vcE '^(200|202|404) ' || true)
((calls_by_stopped > 0)) || failed+=("the stopped replica answered no call")
((others == 0)) || failed+=("$others answers of haproxy other than 200/202/404")
for ((replica = 1; replica < REPLICAS; replica++)); do
  kill -0 "${replica_pids[$replica]}" 2>/dev/null || failed+=("replica $((replica + 1)) died")
done

echo "client: $figures"
echo "haproxy: $requests requests, $calls_by_stopped POSTs answered 200 by the stopped replica," \
  "$not_found answered 404, $others other than 200/202/404"
if ((${#failed[@]} > 0)); then
  printf 'FAIL %s\n' "${failed[@]}"
  for name in client replica-1 haproxy; do
    log "$name log:"
    tail -n 30 "$work/$name.log" >&2
  done
  grep -E '^[0-9]{3} ' "$work/haproxy.out" | grep -vE '^(200|202|404) ' | tail -n 30 >&2 || true
  exit 1
fi
echo "PASS every call answered through haproxy while a bridge replica drained"
