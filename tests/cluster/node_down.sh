#!/usr/bin/env bash
# Stop the test node of node_up.sh and undo every change it made to the host (node_lib.sh lists
# them): its pods, the kubelet, containerd and the shims; mounts, links, cgroups, iptables
# chains, sysctls and the fixed paths; the Node object when the cluster still answers.
# Images and the containerd store stay in $STATE/node for the next start (--purge deletes them).
# Exits non-zero if a change could not be undone.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
# shellcheck source=node_lib.sh
. "$HERE/node_lib.sh"

purge=0
case ${1:-} in
  --purge) purge=1 ;;
  "") ;;
  *) fail "usage: $0 [--purge]" ;;
esac
[ -d "$NODE_DIR" ] || { say "no test node in $STATE"; exit 0; }
mkdir -p "$NODE_RUN"
exec 8>"$NODE_RUN/.lock"
flock -w 60 8 || say "$NODE_RUN/.lock is busy; stopping anyway"

api() { [ -s "$STATE/admin.kubeconfig" ] && kubectl --kubeconfig "$STATE/admin.kubeconfig" --request-timeout=10s "$@"; }

# Pods first, through the kubelet while it runs: it stops their containers and tears down their
# networks (CNI DEL) the way it does on a real node.
if [ -n "$(comp_pid kubelet)" ] && api get --raw /readyz >/dev/null 2>&1; then
  pods=$(api get pods -A --field-selector "spec.nodeName=$NODE_NAME" \
    -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}' 2>/dev/null || true)
  if [ -n "$pods" ]; then
    say "deleting the node's pods: $(echo $pods)"
    while read -r p; do
      api -n "${p%%/*}" delete pod "${p#*/}" --grace-period=1 --wait=false >/dev/null 2>&1 || true
    done <<< "$pods"
    for _ in $(seq 1 60); do
      [ -z "$(api get pods -A --field-selector "spec.nodeName=$NODE_NAME" -o name 2>/dev/null)" ] && break
      sleep 1
    done
  fi
fi
for (( i=${#NODE_COMPONENTS[@]}-1; i>=0; i-- )); do stop_comp "${NODE_COMPONENTS[i]}"; done

# What is left runs under the shims: kill it, then the shims, then anything else of the node.
left=$(node_pids)
if [ -n "$left" ]; then
  for pid in $left; do pkill -KILL -P "$pid" 2>/dev/null || true; done
  kill -KILL $left 2>/dev/null || true
  for _ in $(seq 1 50); do [ -z "$(node_pids)" ] && break; sleep 0.1; done
fi
left=$(node_pids)
[ -z "$left" ] || fail "node processes still running: $(echo $left)"

# Mounts, deepest first (lazily: a mount of a mount may only go after its parent's turn).
for m in $(node_mounts); do umount -l "$m" 2>/dev/null || umount -f "$m" 2>/dev/null || true; done
rm -rf /run/netns/cni-* 2>/dev/null || true

# Veths whose pod namespace is gone are gone with it; any left on the bridge go before it.
for link in $(ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//'); do
  [ "$(basename "$(readlink "/sys/class/net/$link/master" 2>/dev/null)")" = "$POD_BRIDGE" ] &&
    ip link delete "$link"
done
if ip link show "$POD_BRIDGE" >/dev/null 2>&1; then ip link delete "$POD_BRIDGE"; fi

for ctl in /sys/fs/cgroup/*/; do
  [ -d "$ctl/kubepods" ] || continue
  find "$ctl/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null || true
done

# kube-proxy's Service rules (every mode's), then the kubelet's chains.
proxy=$("$HERE/build.sh" kube-proxy | sed -n 's/^kube-proxy=//p')
"$proxy" --cleanup >>"$LOGS/kube-proxy.log" 2>&1 || say "kube-proxy --cleanup failed (log: $LOGS/kube-proxy.log)"
for ipt in iptables ip6tables; do
  for table in "${IPTABLES_TABLES[@]}"; do
    for chain in "${KUBELET_CHAINS[@]}"; do
      iptables_chain_exists "$ipt" "$table" "$chain" || continue
      for hook in INPUT OUTPUT FORWARD PREROUTING POSTROUTING; do
        while "$ipt" -w 5 -t "$table" -D "$hook" -j "$chain" 2>/dev/null; do :; done
      done
      "$ipt" -w 5 -t "$table" -F "$chain" && "$ipt" -w 5 -t "$table" -X "$chain"
    done
  done
done

if [ -f "$NODE_DIR/host-before/.complete" ]; then
  while IFS='=' read -r k v; do
    [ "$(sysctl -n "$k")" = "$v" ] || sysctl -qw "$k=$v"
  done < "$NODE_DIR/host-before/sysctls"
  for p in "${HOST_PATHS[@]}"; do
    [ -e "$p" ] && ! grep -qxF "$p" "$NODE_DIR/host-before/paths" && rm -rf "$p"
  done
  # On a host that never used iptables, the kubelet's first rule creates the tables themselves
  # (iptables-nft: nftables tables ip filter, ip6 nat, ...); their own chains are gone by now.
  if [ -f "$NODE_DIR/host-before/nft-tables" ]; then
    nft list tables | while read -r _ family name; do
      grep -qxF "table $family $name" "$NODE_DIR/host-before/nft-tables" ||
        nft delete table "$family" "$name"
    done
  fi
  rm -rf "$NODE_DIR/host-before"
fi

if api get node "$NODE_NAME" >/dev/null 2>&1; then api delete node "$NODE_NAME" >/dev/null; fi
# Sockets, containerd's state and the owner file: nothing of the node runs any more.
[ "$(cat "$NODE_OWNER" 2>/dev/null || echo "$STATE")" = "$STATE" ] && rm -rf "$NODE_RUN"

problems=()
[ -z "$(node_mounts)" ] || problems+=("mounts: $(node_mounts | tr '\n' ' ')")
ip link show "$POD_BRIDGE" >/dev/null 2>&1 && problems+=("link $POD_BRIDGE")
for ipt in iptables ip6tables; do
  for table in "${IPTABLES_TABLES[@]}"; do
    for chain in "${KUBELET_CHAINS[@]}"; do
      iptables_chain_exists "$ipt" "$table" "$chain" && problems+=("$ipt $table/$chain")
    done
  done
  left=$("$ipt"-save 2>/dev/null | grep -c '^:KUBE-' || true)
  [ "$left" = 0 ] || problems+=("$left KUBE-* chains in $ipt")
done
[ ${#problems[@]} -eq 0 ] || fail "left on the host: ${problems[*]}"

if [ "$purge" = 1 ]; then
  rm -rf "$NODE_DIR"
  say "node stopped, host restored; deleted $NODE_DIR"
else
  say "node stopped, host restored; images and logs kept in $NODE_DIR"
fi
