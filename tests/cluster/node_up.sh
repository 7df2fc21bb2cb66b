#!/usr/bin/env bash
# Start (or reuse) a real node in the running test cluster (up.sh first): containerd with runc and
# the CNI bridge, and a kubelet registered as Node budgetsweep-node with real TLS (a client
# certificate from the cluster's client CA, a serving certificate from its CA, webhook
# authentication and authorization), nvidia.com/gpu capacity, and the images of `make images`
# imported into containerd.
#
#   eval "$(tests/cluster/up.sh | tail -1)"; tests/cluster/node_up.sh
#   tests/cluster/node_down.sh         # stops the node and restores every host change
#
# Needs root (it adds links, mounts, cgroups, iptables chains and sysctls; node_lib.sh lists them).
# Images: ${BSW_IMAGES_DIR:-build/images}/budgetsweep-{operator,trainer,sandbox}.tar, and
# budgetsweep-curve-trainer.tar when there is one; the sandbox image (tests/cluster/node) is built
# here when missing. Progress goes to stderr; the last line on
# stdout is `export BSW_NODE_ENV=<path>` (NODE_NAME, NODE_IP, POD_SUBNET).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
# shellcheck source=node_lib.sh
. "$HERE/node_lib.sh"
ORDER=("${NODE_COMPONENTS[@]}")
T0=$(date +%s.%N)
IMAGES_DIR=${BSW_IMAGES_DIR:-$ROOT/build/images}
version=$("$ROOT/scripts/project-version")

[ "$(id -u)" = 0 ] || fail "the test node needs root (links, mounts, cgroups, iptables)"
for tool in runc iptables nft ip mount; do
  command -v "$tool" >/dev/null || fail "$tool not found (make deps installs it)"
done
CNI_BIN=/usr/lib/cni
for plugin in bridge host-local loopback; do
  [ -x "$CNI_BIN/$plugin" ] || fail "$CNI_BIN/$plugin not found (containernetworking-plugins)"
done
[ -s "$STATE/cluster.env" ] || fail "no test cluster in $STATE: run tests/cluster/up.sh first"
# shellcheck disable=SC1091
. "$STATE/cluster.env"
export KUBECONFIG
kubectl get --raw /readyz >/dev/null 2>&1 || fail "the test cluster in $STATE does not answer"
[[ $BSW_APISERVER_URL == "https://$NODE_IP:"* ]] ||
  fail "the API server listens on $BSW_APISERVER_URL, not on the cluster's address $NODE_IP" \
    "(up.sh run without root?): the node's pods could not reach it"

declare -A BIN
while IFS='=' read -r k v; do BIN[$k]=$v; done < <("$HERE/build.sh" kubelet kube-proxy containerd)
CTRD_DIR=$(dirname "${BIN[containerd]}")
for b in "${BIN[kubelet]}" "${BIN[kube-proxy]}" "$CTRD_DIR/containerd" "$CTRD_DIR/ctr" "$CTRD_DIR/containerd-shim-runc-v2"; do
  [ -x "$b" ] || fail "build.sh did not produce $b"
done
# ctr's own warnings (cgroup v1 is deprecated) go to containerd's log.
ctr_() { "$CTRD_DIR/ctr" --address "$NODE_SOCK" --namespace k8s.io "$@" 2>>"$LOGS/containerd.log"; }

mkdir -p "$RUN" "$LOGS" "$NODE_DIR" "$NODE_RUN"
exec 8>"$NODE_RUN/.lock"
flock -w 600 8 || fail "$NODE_RUN/.lock is held by another process for 10 min"
owner=$(cat "$NODE_OWNER" 2>/dev/null || true)
if [ -n "$owner" ] && [ "$owner" != "$STATE" ] && [ -d "$owner/node" ]; then
  fail "a test node of $owner runs on this machine (one per machine); stop it first:" \
    "BSW_CLUSTER_DIR=$owner tests/cluster/node_down.sh"
fi

# ---- the host as it was, before the first change ------------------------------------------------
if [ ! -f "$NODE_DIR/host-before/.complete" ]; then
  rm -rf "$NODE_DIR/host-before"; mkdir -p "$NODE_DIR/host-before"
  for k in "${HOST_SYSCTLS[@]}"; do echo "$k=$(sysctl -n "$k")"; done > "$NODE_DIR/host-before/sysctls"
  for p in "${HOST_PATHS[@]}"; do [ -e "$p" ] && echo "$p"; done > "$NODE_DIR/host-before/paths" || true
  nft list tables > "$NODE_DIR/host-before/nft-tables"
  touch "$NODE_DIR/host-before/.complete"
fi
echo "$STATE" > "$NODE_OWNER"

# ---- network: the pod bridge comes from the CNI bridge plugin ------------------------------------
mkdir -p "$NODE_DIR/cni/net.d" "$NODE_DIR/cni/ipam"
cat > "$NODE_DIR/cni/net.d/10-budgetsweep.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "budgetsweep-pods",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$POD_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_SUBNET"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$NODE_DIR/cni/ipam"
      }
    }
  ]
}
EOF

# ---- certificates -------------------------------------------------------------------------------
if [ ! -s "$PKI/kubelet.crt" ] || [ ! -s "$PKI/kubelet-client.crt" ]; then
  say "generating the kubelet's certificates in $PKI"
  cat > "$PKI/kubelet-openssl.cnf" <<EOF
[kubelet]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:$NODE_NAME,IP:$NODE_IP
EOF
  mkcert "$PKI" kubelet "/CN=$NODE_NAME" ca kubelet "$PKI/kubelet-openssl.cnf"
  mkcert "$PKI" kubelet-client "/O=system:nodes/CN=system:node:$NODE_NAME" client-ca client
  chmod 600 "$PKI"/*.key
fi
# kube-proxy acts as system:kube-proxy, which RBAC's bootstrap binding system:node-proxier names.
if [ ! -s "$PKI/kube-proxy.crt" ]; then
  mkcert "$PKI" kube-proxy "/CN=system:kube-proxy" client-ca client
  chmod 600 "$PKI"/*.key
fi
node_kubeconfig() {   # file user cert-name
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: budgetsweep-test
  cluster: {server: "$BSW_APISERVER_URL", certificate-authority: "$PKI/ca.crt"}
users:
- name: "$2"
  user: {client-certificate: "$PKI/$3.crt", client-key: "$PKI/$3.key"}
contexts:
- name: budgetsweep-test
  context: {cluster: budgetsweep-test, user: "$2"}
current-context: budgetsweep-test
EOF
  chmod 600 "$1"
}
node_kubeconfig "$NODE_DIR/kubelet.kubeconfig" "system:node:$NODE_NAME" kubelet-client
node_kubeconfig "$NODE_DIR/kube-proxy.kubeconfig" system:kube-proxy kube-proxy

# The API server's own client certificate may use the kubelet API (logs, exec, port-forward).
kubectl apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: budgetsweep-test:kube-apiserver-kubelet-client}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:kubelet-api-admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: kube-apiserver-kubelet-client}]
EOF

# ---- containerd ---------------------------------------------------------------------------------
# The sandbox image is pinned (never pulled, never garbage-collected); runc with cgroupfs;
# restrict_oom_score_adj because this machine's bounding set lacks CAP_SYS_RESOURCE (runc fails
# every sandbox with "failed to update /proc/self/oom_score_adj" otherwise).
SANDBOX_IMAGE=docker.io/budgetsweep/sandbox:$version
cat > "$NODE_DIR/containerd.toml" <<EOF
version = 3
root = "$NODE_DIR/containerd/root"
state = "$NODE_RUN/state"
[grpc]
  address = "$NODE_SOCK"
[ttrpc]
  address = "$NODE_RUN/containerd.sock.ttrpc"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$SANDBOX_IMAGE"
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  enable_unprivileged_ports = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_BIN"]
    conf_dir = "$NODE_DIR/cni/net.d"
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE_DIR/containerd/opt"
EOF
ctrd_ok() { ctr_ version; }
PATH="$CTRD_DIR:$PATH" ensure_comp containerd "ctrd=$(sha256sum < "$NODE_DIR/containerd.toml" | cut -c1-16)" \
  "$CTRD_DIR/containerd" --config "$NODE_DIR/containerd.toml" --log-level warn
wait_healthy containerd ctrd_ok

# ---- images -------------------------------------------------------------------------------------
[ -s "$IMAGES_DIR/budgetsweep-sandbox.tar" ] || BSW_IMAGES_DIR=$IMAGES_DIR "$ROOT/scripts/images.sh" sandbox
mkdir -p "$NODE_DIR/imported"
import_image() {   # archive reference: import again only when the archive changed
  local archive=$1 ref=$2 sum mark name
  [ -s "$archive" ] || fail "$archive not found (make images)"
  sum=$(sha256sum < "$archive" | cut -c1-64)
  mark=$NODE_DIR/imported/$(basename "$archive").sha256
  if [ "$(cat "$mark" 2>/dev/null)" = "$sum" ] && ctr_ images inspect "$ref" >/dev/null 2>&1; then
    return 0
  fi
  say "importing $archive as $ref"
  # The archive names the image as built (budgetsweep/trainer:0.1.0); the kubelet asks for the
  # normalized reference (docker.io/...).
  name=$(tar -xOf "$archive" index.json | python3 -c '
import json, sys
print(json.load(sys.stdin)["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"])') ||
    fail "$archive has no image name in index.json"
  ctr_ images import "$archive" >/dev/null || fail "ctr could not import $archive"
  ctr_ images tag --force "$name" "$ref" >/dev/null
  [ "$name" = "$ref" ] || ctr_ images rm "$name" >/dev/null
  echo "$sum" > "$mark"
}
import_image "$IMAGES_DIR/budgetsweep-sandbox.tar" "$SANDBOX_IMAGE"
for image in operator trainer; do
  import_image "$IMAGES_DIR/budgetsweep-$image.tar" "docker.io/budgetsweep/$image:$version"
done
# The curve-trainer fixture's image, where the tests built it (node_fixture.sh).
if [ -s "$IMAGES_DIR/budgetsweep-curve-trainer.tar" ]; then
  import_image "$IMAGES_DIR/budgetsweep-curve-trainer.tar" "docker.io/budgetsweep/curve-trainer:$version"
fi

# ---- kubelet ------------------------------------------------------------------------------------
# No static pods, no read-only port, eviction only when the machine is nearly full (the test
# machine's disk is shared with builds), pod logs in the state directory.
cat > "$NODE_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/client-ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$NODE_SOCK
imageServiceEndpoint: unix://$NODE_SOCK
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
podLogsDir: $NODE_DIR/pod-logs
registerNode: true
serializeImagePulls: false
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
nodeStatusReportFrequency: 10s
syncFrequency: 10s
EOF
kubelet_ok() { [ "$(curl -fsS --max-time 5 http://127.0.0.1:10248/healthz)" = ok ]; }
ensure_comp kubelet "pki=$(cat "$PKI/kubelet.crt" "$PKI/client-ca.crt" | sha256sum | cut -c1-16) cfg=$(sha256sum < "$NODE_DIR/kubelet.yaml" | cut -c1-16)" \
  "${BIN[kubelet]}" --config="$NODE_DIR/kubelet.yaml" --kubeconfig="$NODE_DIR/kubelet.kubeconfig" \
  --root-dir="$NODE_DIR/kubelet" --cert-dir="$NODE_DIR/kubelet-pki" \
  --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=1
wait_healthy kubelet kubelet_ok
node_ready() {
  [ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
wait_healthy kubelet node_ready

# Extended resources are advertised by patching the Node's status (the documented way without a
# device plugin); the kubelet keeps what it does not manage itself.
kubectl patch node "$NODE_NAME" --subresource=status --type=json -p \
  "[{\"op\":\"add\",\"path\":\"/status/capacity/nvidia.com~1gpu\",\"value\":\"$NODE_GPUS\"}]" >/dev/null
gpus() { [ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" = "$NODE_GPUS" ]; }
wait_healthy kubelet gpus

# ---- kube-proxy: Service virtual IPs (the pods' in-cluster `kubernetes` Service) -----------------
# iptables mode; no node ports on loopback (they would need route_localnet), conntrack sysctls
# left as they are.
cat > "$NODE_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $NODE_DIR/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_SUBNET
nodePortAddresses: [$NODE_IP/32]
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
proxy_ok() { curl -fsS --max-time 5 -o /dev/null http://127.0.0.1:10256/healthz; }
ensure_comp kube-proxy "pki=$(sha256sum < "$PKI/kube-proxy.crt" | cut -c1-16) cfg=$(sha256sum < "$NODE_DIR/kube-proxy.yaml" | cut -c1-16)" \
  "${BIN[kube-proxy]}" --config="$NODE_DIR/kube-proxy.yaml" --v=1
wait_healthy kube-proxy proxy_ok

write_env "$NODE_DIR/node.env" "BSW_NODE_NAME=$NODE_NAME" "BSW_NODE_IP=$NODE_IP" \
  "BSW_POD_SUBNET=$POD_SUBNET" "BSW_NODE_GPUS=$NODE_GPUS"
say_ready "node $NODE_NAME ready"
printf 'export BSW_NODE_ENV=%q\n' "$NODE_DIR/node.env"
