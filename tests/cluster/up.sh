#!/usr/bin/env bash
# Start (or reuse) a local test cluster: etcd, kube-apiserver (RBAC, client certificates),
# kube-scheduler and kube-controller-manager, all on free loopback ports, built from Go modules by
# build.sh.
#
#   eval "$(tests/cluster/up.sh | tail -1)"     # sets KUBECONFIG (cluster-admin)
#   tests/cluster/down.sh                       # stops it (--purge also deletes its state)
#
# Idempotent: what already runs with the same configuration and is healthy is reused.
# Progress goes to stderr; the last line on stdout is `export KUBECONFIG=<path>`.
# State (certificates, etcd data, logs, pid files): ${BSW_CLUSTER_DIR:-~/.cache/budgetsweep/cluster}
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

T0=$(date +%s.%N)

# ---- binaries -----------------------------------------------------------------------------------
declare -A BIN
# helm is built by `build.sh helm` for the tests that install the chart, not for every cluster.
while IFS='=' read -r k v; do BIN[$k]=$v; done < <("$HERE/build.sh" "${COMPONENTS[@]}")
for c in "${COMPONENTS[@]}"; do
  [ -x "${BIN[$c]:-}" ] || fail "build.sh did not produce $c"
done

mkdir -p "$STATE" "$RUN" "$LOGS"
exec 8>"$STATE/.up.lock"
# Concurrent up.sh calls on one state dir run one after the other.
flock -w 600 8 || fail "$STATE/.up.lock is held by another process for 10 min"

# ---- certificates (openssl; helpers in lib.sh) -----------------------------------------------
# Pairs that came after the rest: a state directory made before them gets them added, signed by
# its existing CAs. The API server's client certificate for the kubelet API (logs, exec) is bound
# to system:kubelet-api-admin by node_up.sh.
later_certs() {
  [ -s "$1/controller-manager.crt" ] ||
    mkcert "$1" controller-manager "/CN=system:kube-controller-manager" client-ca client
  [ -s "$1/controller-manager-serving.crt" ] ||
    mkcert "$1" controller-manager-serving "/CN=kube-controller-manager" ca server
  [ -s "$1/apiserver-kubelet-client.crt" ] ||
    mkcert "$1" apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client" client-ca client
  chmod 600 "$1"/*.key
}
gen_pki() {
  local d=$1
  write_openssl_cnf "$d"
  mkca "$d" ca "/CN=budgetsweep-test-ca"                        # signs serving certificates
  mkca "$d" client-ca "/CN=budgetsweep-test-client-ca"          # signs client certificates
  mkcert "$d" apiserver "/CN=kube-apiserver" ca server
  mkcert "$d" scheduler-serving "/CN=kube-scheduler" ca server
  mkcert "$d" admin "/O=system:masters/CN=admin" client-ca client
  mkcert "$d" scheduler "/CN=system:kube-scheduler" client-ca client
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/sa.key" 2>/dev/null
  openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub"
  later_certs "$d"
}
if [ ! -f "$PKI/.complete" ]; then
  say "generating certificates in $PKI"
  rm -rf "$PKI.tmp" "$PKI"; mkdir -p "$PKI.tmp"; chmod 700 "$PKI.tmp"
  gen_pki "$PKI.tmp" || fail "openssl failed"
  touch "$PKI.tmp/.complete"
  mv "$PKI.tmp" "$PKI"
else
  later_certs "$PKI" || fail "openssl failed"
fi
# A state directory made before the cluster had its own address gets a serving certificate that
# names it.
if [[ $(openssl x509 -in "$PKI/apiserver.crt" -noout -ext subjectAltName 2>/dev/null) != *"IP Address:$CLUSTER_IP"* ]]; then
  say "renewing the API server's certificate for $CLUSTER_IP"
  write_openssl_cnf "$PKI"
  mkcert "$PKI" apiserver "/CN=kube-apiserver" ca server || fail "openssl failed"
  chmod 600 "$PKI"/*.key
fi
PKI_ID=$(cat "$PKI/ca.crt" "$PKI/client-ca.crt" "$PKI/sa.pub" "$PKI/apiserver.crt" | sha256sum | cut -c1-16)

# ---- the cluster's address ------------------------------------------------------------------------
if [ "$(id -u)" = 0 ]; then
  ip link show "$CLUSTER_LINK" >/dev/null 2>&1 || ip link add "$CLUSTER_LINK" type bridge
  ip addr replace "$CLUSTER_IP/32" dev "$CLUSTER_LINK"
  ip link set "$CLUSTER_LINK" up
  API_IP=$CLUSTER_IP
  # Published as the `kubernetes` Service's endpoint, which the node's pods reach it through.
  RECONCILER=lease
else
  say "not root: the API server listens on loopback, and no node can join (node_up.sh)"
  API_IP=127.0.0.1
  RECONCILER=none   # the API server refuses to publish a loopback endpoint, and exits
fi

# ---- ports --------------------------------------------------------------------------------------
declare -A PORT OWNER=([ETCD_PORT]=etcd [ETCD_PEER_PORT]=etcd [APISERVER_PORT]=kube-apiserver
  [SCHEDULER_PORT]=kube-scheduler [CONTROLLER_MANAGER_PORT]=kube-controller-manager)
if [ -f "$STATE/ports.env" ]; then
  while IFS='=' read -r k v; do [ -n "${OWNER[$k]:-}" ] && [[ $v =~ ^[0-9]+$ ]] && PORT[$k]=$v; done < "$STATE/ports.env"
fi
port_free() { [ -z "$(ss -Htln "sport = :$1" 2>/dev/null)" ]; }
port_taken_here() { local k; for k in "${!PORT[@]}"; do [ "${PORT[$k]}" = "$1" ] && return 0; done; return 1; }
for k in "${!OWNER[@]}"; do
  p=${PORT[$k]:-}
  if [ -n "$p" ] && [ -n "$(comp_pid "${OWNER[$k]}")" ]; then continue; fi   # its owner runs
  if [ -n "$p" ] && port_free "$p"; then continue; fi
  unset "PORT[$k]"
  for _ in $(seq 1 500); do
    p=$(( 20000 + RANDOM % 30000 ))
    port_free "$p" && ! port_taken_here "$p" && { PORT[$k]=$p; break; }
  done
  [ -n "${PORT[$k]:-}" ] || fail "no free port for $k"
done
{ for k in "${!OWNER[@]}"; do echo "$k=${PORT[$k]}"; done; } | sort > "$STATE/ports.env"
API_URL=https://$API_IP:${PORT[APISERVER_PORT]}
ETCD_URL=http://127.0.0.1:${PORT[ETCD_PORT]}
PEER_URL=http://127.0.0.1:${PORT[ETCD_PEER_PORT]}

# ---- kubeconfigs --------------------------------------------------------------------------------
write_kubeconfig() {   # file user cert-name
  local tmp=$1.tmp
  cat > "$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: budgetsweep-test
  cluster:
    server: $API_URL
    certificate-authority-data: $(base64 -w0 < "$PKI/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(base64 -w0 < "$PKI/$3.crt")
    client-key-data: $(base64 -w0 < "$PKI/$3.key")
contexts:
- name: budgetsweep-test
  context:
    cluster: budgetsweep-test
    user: $2
current-context: budgetsweep-test
EOF
  chmod 600 "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}
write_kubeconfig "$STATE/admin.kubeconfig" admin admin
write_kubeconfig "$STATE/scheduler.kubeconfig" system:kube-scheduler scheduler
write_kubeconfig "$STATE/controller-manager.kubeconfig" system:kube-controller-manager controller-manager

# ---- start or reuse -----------------------------------------------------------------------------
# ensure_comp and wait_healthy: lib.sh
admin_curl() {
  curl -fsS --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$@"
}
etcd_ok() { [[ $(curl -fsS --max-time 5 "$ETCD_URL/health") == *'"health":"true"'* ]]; }
apiserver_ok() {
  [ "$(admin_curl "$API_URL/readyz")" = ok ] &&
    admin_curl -o /dev/null "$API_URL/api/v1/namespaces/default"   # created shortly after start
}
serving_ok() {   # port path: our own serving certificate answers "ok"
  [ "$(curl -fsS --max-time 5 --cacert "$PKI/ca.crt" "https://127.0.0.1:$1$2")" = ok ]
}
scheduler_ok() { serving_ok "${PORT[SCHEDULER_PORT]}" /readyz; }
controller_manager_ok() { serving_ok "${PORT[CONTROLLER_MANAGER_PORT]}" /healthz; }

ensure_comp etcd "pki=$PKI_ID" \
  "${BIN[etcd]}" --name=bsw --data-dir="$STATE/etcd-data" \
  --listen-client-urls="$ETCD_URL" --advertise-client-urls="$ETCD_URL" \
  --listen-peer-urls="$PEER_URL" --initial-advertise-peer-urls="$PEER_URL" \
  --initial-cluster="bsw=$PEER_URL" --unsafe-no-fsync=true --log-level=warn
wait_healthy etcd etcd_ok

# Admission: ServiceAccount on (pods get their token volume; the kubelet mounts it, and a pod
# created right after its namespace waits for the controller-manager's `default`
# ServiceAccount), TaintNodesByCondition off: without the node lifecycle controller nothing would
# lift the not-ready taint from new Nodes.
# The kubelet of node_up.sh: the Node authorizer and NodeRestriction keep it to its own Node and
# pods; for logs and exec the API server dials the node's InternalIP (its name does not resolve)
# with its own client certificate and checks the kubelet's against the cluster CA.
ensure_comp kube-apiserver "pki=$PKI_ID" \
  "${BIN[kube-apiserver]}" \
  --etcd-servers="$ETCD_URL" \
  --bind-address="$API_IP" --advertise-address="$API_IP" --secure-port="${PORT[APISERVER_PORT]}" \
  --endpoint-reconciler-type="$RECONCILER" \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --client-ca-file="$PKI/client-ca.crt" \
  --authorization-mode=Node,RBAC \
  --enable-admission-plugins=NodeRestriction \
  --disable-admission-plugins=TaintNodesByCondition \
  --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
  --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$PKI/ca.crt" \
  --kubelet-preferred-address-types=InternalIP \
  --service-cluster-ip-range=10.0.0.0/24 \
  --allow-privileged=true \
  --service-account-issuer="$API_URL/" \
  --service-account-key-file="$PKI/sa.pub" \
  --service-account-signing-key-file="$PKI/sa.key"
wait_healthy kube-apiserver apiserver_ok

# The scheduler's kubeconfig names the API server's port: a new port means a new scheduler.
# No delegated authn/authz kubeconfigs: /healthz and /readyz are always allowed, and the API
# server has no request-header CA for the scheduler to look up (it would log errors forever).
ensure_comp kube-scheduler "pki=$PKI_ID api=$API_URL" \
  "${BIN[kube-scheduler]}" \
  --kubeconfig="$STATE/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="${PORT[SCHEDULER_PORT]}" \
  --tls-cert-file="$PKI/scheduler-serving.crt" --tls-private-key-file="$PKI/scheduler-serving.key" \
  --leader-elect=false
wait_healthy kube-scheduler scheduler_ok

# kube-controller-manager: Deployments and ReplicaSets, the garbage collector, namespace deletion,
# default ServiceAccounts and their token Secrets. Each controller acts as its own ServiceAccount
# in kube-system (as kubeadm runs it), so RBAC's bootstrap roles apply unchanged.
# Its flex-volume directory is in the state directory: the default is under /usr/libexec, which it
# would create. Left out: the node lifecycle controller. Besides the test node, the cluster's
# Nodes are API objects that tests register (smoke.sh; they never post a Ready condition);
# tainting them not-ready or unreachable, and evicting their pods, would be the controller
# reacting to the harness, not to a failure.
ensure_comp kube-controller-manager "pki=$PKI_ID api=$API_URL" \
  "${BIN[kube-controller-manager]}" \
  --kubeconfig="$STATE/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="${PORT[CONTROLLER_MANAGER_PORT]}" \
  --tls-cert-file="$PKI/controller-manager-serving.crt" \
  --tls-private-key-file="$PKI/controller-manager-serving.key" \
  --use-service-account-credentials=true \
  --service-account-private-key-file="$PKI/sa.key" \
  --root-ca-file="$PKI/ca.crt" \
  --service-cluster-ip-range=10.0.0.0/24 \
  --controllers='*,-node-lifecycle-controller' \
  --flex-volume-plugin-dir="$STATE/flexvolume" \
  --leader-elect=false
wait_healthy kube-controller-manager controller_manager_ok

# ---- report -------------------------------------------------------------------------------------
KUBECONFIG_PATH=$STATE/admin.kubeconfig
write_env "$STATE/cluster.env" "KUBECONFIG=$KUBECONFIG_PATH" "BSW_APISERVER_URL=$API_URL" \
  "BSW_ETCD_URL=$ETCD_URL" "BSW_CA_CERT=$PKI/ca.crt"
say_ready ready
echo "# API server $API_URL; logs in $LOGS; source $STATE/cluster.env for more"
printf 'export KUBECONFIG=%q\n' "$KUBECONFIG_PATH"
