#!/usr/bin/env bash
# The test node as a ctest fixture (label cluster):
#   node_fixture.sh up     notes the host's state, builds the test images (the pod sandbox, the
#                          curve-trainer fixture), then node_up.sh
#   node_fixture.sh down   node_down.sh, then fails unless the host is as it was noted: sysctls,
#                          iptables and ip6tables chains, nftables tables, mounts, links,
#                          cgroups, the fixed paths and the node's processes
# The state is read here with plain commands, not with node_lib.sh's helpers that node_down.sh
# restores it with. BSW_CLUSTER_DIR and BSW_IMAGES_DIR come from ctest.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: the test node needs root"; exit 77; }
BEFORE=$STATE/host-before-node.txt

host_state() {
  local k p ctl
  for k in vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward \
    net.ipv4.conf.all.forwarding; do
    echo "sysctl $k=$(sysctl -n "$k")"
  done
  iptables-save 2>/dev/null | sed -n 's/^:\([^ ]*\) .*/chain \1/p' | sort
  ip6tables-save 2>/dev/null | sed -n 's/^:\([^ ]*\) .*/chain6 \1/p' | sort
  if command -v nft >/dev/null; then nft list tables 2>/dev/null | sed 's/^/nft /'; fi
  awk '{print "mount " $5}' /proc/self/mountinfo | grep -E 'kubelet|containerd|/netns|/node/' | sort || true
  ip -o link show | awk -F': ' '{print "link " $2}' | sed 's/@.*//' | sort
  for ctl in /sys/fs/cgroup/*/; do [ -d "$ctl/kubepods" ] && echo "cgroup $ctl/kubepods"; done
  for p in /run/containerd /run/nri /run/netns /var/lib/cni /var/lib/kubelet /var/log/containers \
    /var/log/pods /opt/containerd /run/budgetsweep-node/owner; do
    [ -e "$p" ] && echo "path $p"
  done
  for p in /proc/[0-9]*; do
    case $(basename "$(readlink "$p/exe" 2>/dev/null)") in
      kubelet | kube-proxy | containerd | containerd-shim-runc-v2 | runc) echo "process ${p#/proc/}" ;;
    esac
  done
  return 0
}

case ${1:-} in
  up)
    # A node left running by an interrupted run keeps the state noted before it.
    [ -s "$BEFORE" ] && [ -d "$STATE/node" ] || host_state > "$BEFORE"
    # The test images, rebuilt from their sources each time (buildah's layer cache makes an
    # unchanged one a few seconds).
    "$HERE/../../scripts/images.sh" sandbox curve-trainer
    "$HERE/node_up.sh" >/dev/null
    ;;
  down)
    "$HERE/node_down.sh"
    [ -s "$BEFORE" ] || { echo "FAIL no host state noted before the node started ($BEFORE)"; exit 1; }
    if diff "$BEFORE" <(host_state); then
      echo "ok   the host is as before the node: $(grep -c . "$BEFORE") items (sysctls, iptables" \
        "chains, nftables, mounts, links, cgroups, paths, processes)"
      rm -f "$BEFORE"
    else
      echo "FAIL the host differs from before the node (diff above: < before, > now)"
      exit 1
    fi
    ;;
  *) fail "usage: $0 up|down" ;;
esac
