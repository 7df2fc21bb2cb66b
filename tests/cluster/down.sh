#!/usr/bin/env bash
# Stop the local test cluster started by up.sh: kube-controller-manager, kube-scheduler,
# kube-apiserver, etcd (a test node first: node_down.sh).
#   tests/cluster/down.sh            stop; keep certificates and etcd data (the next up.sh reuses them)
#   tests/cluster/down.sh --purge    stop and delete the whole state directory
# Exits non-zero if a process of this cluster is still alive afterwards.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

purge=0
case ${1:-} in
  --purge) purge=1 ;;
  "") ;;
  *) fail "usage: $0 [--purge]" ;;
esac

[ -d "$STATE" ] || { say "nothing to stop ($STATE does not exist)"; exit 0; }
# A test node of this cluster goes first, while the API server can still delete its pods.
if [ -d "$STATE/node" ]; then
  if [ "$purge" = 1 ]; then "$HERE/node_down.sh" --purge; else "$HERE/node_down.sh"; fi
fi
exec 8>"$STATE/.up.lock"
flock -w 60 8 || say "$STATE/.up.lock is busy; stopping anyway"   # wait for a running up.sh

for (( i=${#COMPONENTS[@]}-1; i>=0; i-- )); do stop_comp "${COMPONENTS[i]}"; done

# Anything of this cluster without a pid file (e.g. the pid file was deleted): same treatment.
left=$(cluster_pids)
if [ -n "$left" ]; then
  say "stopping leftover processes of this cluster: $(echo $left)"
  kill -TERM $left 2>/dev/null || true
  for _ in $(seq 1 100); do [ -z "$(cluster_pids)" ] && break; sleep 0.1; done
  left=$(cluster_pids); [ -z "$left" ] || kill -KILL $left 2>/dev/null || true
  sleep 0.2
fi
left=$(cluster_pids)
[ -z "$left" ] || fail "still running: $(echo $left)"

# The cluster's address goes with the last cluster listening on it (up.sh adds it as root).
if [ "$(id -u)" = 0 ] && ip link show "$CLUSTER_LINK" >/dev/null 2>&1 &&
  [ -z "$(ss -Htln "src $CLUSTER_IP" 2>/dev/null)" ]; then
  ip link delete "$CLUSTER_LINK"
fi

if [ "$purge" = 1 ]; then
  rm -rf "$STATE"
  say "stopped; deleted $STATE"
else
  say "stopped; state kept in $STATE"
fi
