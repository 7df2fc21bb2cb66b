#!/usr/bin/env bash
# The real test node of the node fixture (node_fixture.sh; node_up.sh) in the test cluster:
#   - Ready, kubelet v1.37.2 on containerd 2.2, nvidia.com/gpu capacity, the images imported;
#   - the kubelet API: anonymous 401, a certificate without rights 403, `kubectl logs` through the
#     API server;
#   - a trainer pod that fails on a bad flag has its reason as the termination message;
#   - a trial-like pod of the budgetsweep-trainer image trains on Fashion-MNIST on the pod
#     network, and the host scrapes its metrics at the pod IP;
#   - the kubelet ends a pod at its activeDeadlineSeconds (Failed, DeadlineExceeded);
#   - a 5-GPU pod on the 4-GPU node stays Pending (Insufficient nvidia.com/gpu);
#   - pods reach the API server through the `kubernetes` Service (kube-proxy).
# That node_down.sh leaves the host as it was is the fixture's cleanup (node_fixture.sh down).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
# shellcheck source=node_lib.sh
. "$HERE/node_lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: the test node needs root"; exit 77; }
# shellcheck disable=SC1091
. "$STATE/cluster.env"
export KUBECONFIG

ok() { printf 'ok   %s\n' "$*"; }
bad() { printf 'FAIL %s\n' "$*"; exit 1; }
NS=bsw-node-test-$$

cleanup() {
  local rc=$?
  kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  if [ "$rc" != 0 ]; then
    tail -n 40 "$LOGS/kubelet.log" "$LOGS/containerd.log" 2>/dev/null || true
  fi
  exit "$rc"
}
trap cleanup EXIT
[ -s "$NODE_DIR/node.env" ] || bad "no test node in $STATE (the node fixture, node_fixture.sh up)"

jp() { kubectl get node "$NODE_NAME" -o jsonpath="$1"; }
[ "$(jp '{.status.conditions[?(@.type=="Ready")].status}')" = True ] && ok "node $NODE_NAME Ready" ||
  bad "node $NODE_NAME not Ready"
v=$(jp '{.status.nodeInfo.kubeletVersion}')
[ "$v" = v1.37.2 ] && ok "kubeletVersion $v" || bad "kubeletVersion $v, want v1.37.2"
rt=$(jp '{.status.nodeInfo.containerRuntimeVersion}')
[[ $rt == containerd://2.2.* ]] && ok "containerRuntimeVersion $rt" || bad "containerRuntimeVersion $rt"
ip=$(jp '{.status.addresses[?(@.type=="InternalIP")].address}')
[ "$ip" = "$NODE_IP" ] && ok "InternalIP $ip" || bad "InternalIP $ip, want $NODE_IP"
g=$(jp '{.status.allocatable.nvidia\.com/gpu}')
[ "$g" = "$NODE_GPUS" ] && ok "allocatable nvidia.com/gpu=$g" || bad "allocatable nvidia.com/gpu=$g"

# ---- the kubelet API: TLS with the cluster CA, webhook authentication and authorization --------
kcurl() { curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$PKI/ca.crt" "$@" "https://$NODE_IP:10250/pods"; }
c=$(kcurl); [ "$c" = 401 ] && ok "kubelet /pods anonymous: 401" || bad "kubelet /pods anonymous: $c, want 401"
c=$(kcurl --cert "$PKI/scheduler.crt" --key "$PKI/scheduler.key")
[ "$c" = 403 ] && ok "kubelet /pods as system:kube-scheduler: 403" || bad "as the scheduler: $c, want 403"
c=$(kcurl --cert "$PKI/admin.crt" --key "$PKI/admin.key")
[ "$c" = 200 ] && ok "kubelet /pods as admin (system:masters): 200" || bad "as admin: $c, want 200"

kubectl create namespace "$NS" >/dev/null
version=$("$HERE/../../scripts/project-version")
TRAINER=budgetsweep/trainer:$version
pod() {   # name deadline gpus args...: a pod of the trainer image on the test node
  local name=$1 deadline=$2 gpus=$3; shift 3
  local args
  args=$(printf '"%s",' "$@"); args="[${args%,}]"
  kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: $NODE_NAME}
  $( [ "$deadline" = 0 ] || echo "activeDeadlineSeconds: $deadline" )
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: trainer
    image: $TRAINER
    imagePullPolicy: Never
    args: $args
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    resources: {limits: {nvidia.com/gpu: $gpus, cpu: "1", memory: 1Gi}}
EOF
}
phase() { kubectl -n "$NS" get pod "$1" -o jsonpath='{.status.phase}'; }
wait_phase() {   # pod seconds phase...
  local p=$1 secs=$2 ph; shift 2
  for _ in $(seq 1 "$((secs * 2))"); do
    ph=$(phase "$p" 2>/dev/null || true)
    for want in "$@"; do [ "$ph" = "$want" ] && return 0; done
    sleep 0.5
  done
  kubectl -n "$NS" describe pod "$p" | tail -n 20
  bad "pod $p is ${ph:-missing} after ${secs}s, want $*"
}

pod version 0 0 --version
wait_phase version 90 Succeeded
out=$(kubectl -n "$NS" logs version)
[[ $out == "budgetsweep-trainer $version "* ]] && ok "kubectl logs (through the kubelet): $out" ||
  bad "kubectl logs version: '$out'"

# A trainer that fails says why in its termination message (/dev/termination-log), which the
# operator reads (trial records, status.recentFailures).
pod badflag 0 0 --model=cnn3
wait_phase badflag 90 Failed
msg=$(kubectl -n "$NS" get pod badflag -o jsonpath='{.status.containerStatuses[0].state.terminated.message}')
[ "$msg" = "budgetsweep-trainer: --model: expected mlp, cnn2 or resnet, got 'cnn3'" ] &&
  ok "a failed trainer's termination message: $msg" || bad "termination message: '$msg'"

# A trial on the pod network: real training on Fashion-MNIST, metrics scraped at the pod IP.
pod trial 0 1 --train-limit 2048 --eval-limit 512 --epochs 3 --threads 1 --metrics-port 9400 \
  --linger-seconds 30
wait_phase trial 90 Running
pip=$(kubectl -n "$NS" get pod trial -o jsonpath='{.status.podIP}')
[[ $pip == 10.213.1.* ]] && ok "trial pod IP $pip in $POD_SUBNET" || bad "trial pod IP '$pip'"
got=""
for _ in $(seq 1 120); do
  got=$(curl -fsS --max-time 2 "http://$pip:9400/metrics" 2>/dev/null | grep -m1 "^budgetsweep_trainer_resource_completed" || true)
  [ -n "$got" ] && break
  sleep 0.5
done
[ -n "$got" ] && ok "scraped http://$pip:9400/metrics: $got" || bad "no budgetsweep_trainer_resource_completed at $pip:9400"
wait_phase trial 240 Succeeded
log=$(kubectl -n "$NS" logs trial)
grep -q '^epoch 3/3: .*validation_accuracy' <<<"$log" && ok "the trial pod trained 3 epochs on Fashion-MNIST" ||
  bad "trial pod log: $(tail -3 <<<"$log")"

# The kubelet ends a pod at its deadline, whoever else is up.
pod deadline 3 1 --epochs 1000 --threads 1
wait_phase deadline 90 Failed
reason=$(kubectl -n "$NS" get pod deadline -o jsonpath='{.status.reason}')
[ "$reason" = DeadlineExceeded ] && ok "activeDeadlineSeconds 3: Failed, DeadlineExceeded" ||
  bad "deadline pod reason '$reason', want DeadlineExceeded"

pod toomany 0 5 --version
sleep 3
[ "$(phase toomany)" = Pending ] || bad "the 5-GPU pod is $(phase toomany), want Pending"
msg=$(kubectl -n "$NS" get pod toomany -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
[[ $msg == *"Insufficient nvidia.com/gpu"* ]] && ok "5 GPUs on a 4-GPU node: Pending ($msg)" ||
  bad "5-GPU pod: '$msg'"


# In-cluster access as the operator's pod has it: the `kubernetes` Service's virtual IP (kube-proxy)
# reaches the API server, and the ServiceAccount admission gave the pod its token.
kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: incluster}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: $NODE_NAME}
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: probe
    image: $TRAINER
    imagePullPolicy: Never
    command: [bash, -c]
    args:
    - exec 3<>/dev/tcp/\$KUBERNETES_SERVICE_HOST/\$KUBERNETES_SERVICE_PORT &&
      echo "reached \$KUBERNETES_SERVICE_HOST:\$KUBERNETES_SERVICE_PORT as
      \$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace)/default"
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
EOF
wait_phase incluster 90 Succeeded
out=$(kubectl -n "$NS" logs incluster)
[ "$out" = "reached 10.0.0.1:443 as $NS/default" ] && ok "a pod reaches the API server at the kubernetes Service: $out" ||
  bad "in-cluster access: '$out'"
