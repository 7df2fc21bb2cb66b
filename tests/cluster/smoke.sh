#!/usr/bin/env bash
# Check the test cluster by hand: starts it (up.sh), then asserts what a test relies on:
#   the pinned version, cluster-admin rights, namespace creation, a pod staying Pending without
#   nodes, the scheduler binding a pod requesting nvidia.com/gpu to a Node created through the API,
#   and helm from the cache. Cleans up its objects and its namespace (kube-controller-manager
#   finishes the deletion). Leaves the cluster running.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
eval "$("$HERE/up.sh" | tail -1)"
# shellcheck disable=SC1091
. "${BSW_CLUSTER_DIR:-$HOME/.cache/budgetsweep/cluster}/cluster.env"
want=$(sed -n 's/^K8S_VERSION=//p' "$HERE/build.sh")
ok() { printf 'ok   %s\n' "$*"; }
bad() { printf 'FAIL %s\n' "$*"; exit 1; }

v=$(kubectl get --raw /version | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')
[ "$v" = "$want" ] && ok "/version gitVersion=$v" || bad "/version gitVersion=$v, want $want"

[ "$(kubectl auth can-i '*' '*')" = yes ] && ok "auth can-i '*' '*' = yes" || bad "not cluster-admin"

id=$$
ns=bsw-smoke-$id node=bsw-smoke-node-$id
kubectl create namespace "$ns" >/dev/null && ok "create namespace $ns"
cleanup() {
  kubectl -n "$ns" delete pod --all --grace-period=0 --force >/dev/null 2>&1 || true
  kubectl delete node "$node" >/dev/null 2>&1 || true
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Nodes left by others would let the pending pod schedule; pin it to a node that never exists.
kubectl -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: pending}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: $node}
  containers: [{name: c, image: none, command: ["true"]}]
EOF
sleep 2
p=$(kubectl -n "$ns" get pod pending -o jsonpath='{.status.phase}/{.spec.nodeName}')
[ "$p" = "Pending/" ] && ok "pod without a node stays Pending" || bad "pod without node: $p"

kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $node
  labels: {kubernetes.io/hostname: $node}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "2"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "2"}
EOF
[ "$(kubectl get node "$node" -o jsonpath='{.status.capacity.nvidia\.com/gpu}')" = 2 ] &&
  ok "node $node with nvidia.com/gpu: 2" || bad "node capacity missing"

kubectl -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: gpu}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: none
    command: ["true"]
    resources: {limits: {nvidia.com/gpu: 1}}
EOF
n=""
for _ in $(seq 1 100); do
  n=$(kubectl -n "$ns" get pod gpu -o jsonpath='{.spec.nodeName}')
  [ -n "$n" ] && break; sleep 0.1
done
[ "$n" = "$node" ] && ok "pod requesting nvidia.com/gpu: 1 bound to $n" || bad "gpu pod nodeName='$n'"

BSW_HELM=$("$HERE/build.sh" helm | sed -n 's/^helm=//p')
hv=$("$BSW_HELM" version --template '{{.Version}}')
hwant=$(sed -n 's/^HELM_VERSION=//p' "$HERE/build.sh")
[ "$hv" = "$hwant" ] && ok "helm version $hv" || bad "helm version $hv, want $hwant"
"$BSW_HELM" list -A >/dev/null && ok "helm list -A against the cluster"
echo "smoke: all ok"
