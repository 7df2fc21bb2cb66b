# The test node (node_up.sh, node_down.sh; sourced after lib.sh): containerd, runc and CNI from a
# kubelet registered as Node $NODE_NAME. State: $STATE/node; sockets and the machine-wide owner
# file under $NODE_RUN (short paths: a unix socket path has at most 107 bytes).
#
# The node changes the host; node_down.sh undoes each change, and node_test.sh checks that
# nothing is left:
#   - sysctls the kubelet sets (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops) and the
#     CNI bridge plugin sets (IPv4 forwarding): saved before the first change, written back;
#   - iptables chains of the kubelet (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT) and
#     of kube-proxy (its Service rules, which `kube-proxy --cleanup` removes);
#   - nftables tables that did not exist before (iptables-nft creates ip/ip6 filter, nat and
#     mangle on a host that never had a rule): noted by node_up.sh, deleted;
#   - mounts: the kubelet's recursive-shared bind mount of its root directory, pod volumes,
#     overlay snapshots, network namespaces;
#   - links: the pod bridge ($POD_BRIDGE) with its veths;
#   - cgroups: kubepods under every cgroup v1 controller;
#   - fixed paths that containerd, runc and the kubelet use whatever they are told, removed when
#     they did not exist before the node started.
# One node per machine: port 10250 and those fixed paths are the machine's.

NODE_NAME=budgetsweep-node
NODE_DIR=$STATE/node
NODE_RUN=/run/budgetsweep-node
NODE_SOCK=$NODE_RUN/containerd.sock
NODE_OWNER=$NODE_RUN/owner                      # the state directory of the node that runs
NODE_COMPONENTS=(containerd kubelet kube-proxy) # start order; stop in reverse
# The node's InternalIP is the cluster's address (lib.sh; up.sh adds it); the pod network is a
# private /24 on a bridge that the CNI bridge plugin makes.
NODE_IP=$CLUSTER_IP
POD_BRIDGE=bsw-cni0
POD_SUBNET=10.213.1.0/24
NODE_GPUS=${BSW_NODE_GPUS:-4} # nvidia.com/gpu capacity (bench/operator asks for more)
HOST_SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward
  net.ipv4.conf.all.forwarding)
HOST_PATHS=(/run/containerd /run/nri /run/netns /var/lib/cni /var/lib/kubelet /var/log/containers
  /var/log/pods /etc/cni /opt/cni /opt/containerd)
KUBELET_CHAINS=(KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT)
# The tables the kubelet writes its chains into (iptables-nft on Debian; legacy is checked too).
IPTABLES_TABLES=(filter nat mangle)

# Mount points under the node's directories, deepest first.
node_mounts() {
  awk '{print $5}' /proc/self/mountinfo | grep -E "^($NODE_DIR|$NODE_RUN|/run/containerd|/run/netns|/var/lib/kubelet)(/|$)" |
    awk '{print length($0) " " $0}' | sort -rn | cut -d' ' -f2- || true
}

# Processes of the node: its daemons and the runc shims (with what they still run).
node_pids() {
  local pid exe
  for pid in $(pgrep -f -- "$NODE_RUN|$NODE_DIR" 2>/dev/null); do
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    case ${exe##*/} in containerd|kubelet|kube-proxy|containerd-shim-runc-v2|runc) echo "$pid" ;; esac
  done
}

iptables_chain_exists() {   # iptables|ip6tables table chain
  "$1" -w 5 -t "$2" -S "$3" >/dev/null 2>&1
}
