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
READY_TIMEOUT=${BSW_CLUSTER_TIMEOUT:-120}

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

# ---- certificates (openssl) ---------------------------------------------------------------------
write_openssl_cnf() {
  cat > "$1/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
}
EC_KEY=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
mkca() {   # dir name subject
  openssl req -config "$1/openssl.cnf" -x509 "${EC_KEY[@]}" -keyout "$1/$2.key" -out "$1/$2.crt" \
    -days 3650 -subj "$3" -extensions ca 2>/dev/null
}
mkcert() { # dir name subject ca-name profile
  local d=$1
  openssl req -config "$d/openssl.cnf" -new "${EC_KEY[@]}" -keyout "$d/$2.key" -out "$d/$2.csr" \
    -subj "$3" 2>/dev/null
  openssl x509 -req -in "$d/$2.csr" -CA "$d/$4.crt" -CAkey "$d/$4.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 3650 \
    -extfile "$d/openssl.cnf" -extensions "$5" -out "$d/$2.crt" 2>/dev/null
  rm -f "$d/$2.csr"
}
# The controller-manager's pair came after the rest: a state directory made before it gets them
# added, signed by its existing CAs.
controller_manager_certs() {
  mkcert "$1" controller-manager-serving "/CN=kube-controller-manager" ca server
  mkcert "$1" controller-manager "/CN=system:kube-controller-manager" client-ca client
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
  controller_manager_certs "$d"
}
if [ ! -f "$PKI/.complete" ]; then
  say "generating certificates in $PKI"
  rm -rf "$PKI.tmp" "$PKI"; mkdir -p "$PKI.tmp"; chmod 700 "$PKI.tmp"
  gen_pki "$PKI.tmp" || fail "openssl failed"
  touch "$PKI.tmp/.complete"
  mv "$PKI.tmp" "$PKI"
elif [ ! -s "$PKI/controller-manager.crt" ] || [ ! -s "$PKI/controller-manager-serving.crt" ]; then
  say "adding the controller-manager's certificates to $PKI"
  controller_manager_certs "$PKI" || fail "openssl failed"
fi
PKI_ID=$(cat "$PKI/ca.crt" "$PKI/client-ca.crt" "$PKI/sa.pub" | sha256sum | cut -c1-16)

# ---- ports --------------------------------------------------------------------------------------
declare -A PORT OWNER=([ETCD_PORT]=etcd [ETCD_PEER_PORT]=etcd [APISERVER_PORT]=kube-apiserver
  [SCHEDULER_PORT]=kube-scheduler [CONTROLLER_MANAGER_PORT]=kube-controller-manager)
if [ -f "$STATE/ports.env" ]; then
  while IFS='=' read -r k v; do [ -n "${OWNER[$k]:-}" ] && [[ $v =~ ^[0-9]+$ ]] && PORT[$k]=$v; done < "$STATE/ports.env"
fi
port_free() { ! ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }
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
API_URL=https://127.0.0.1:${PORT[APISERVER_PORT]}
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
# ensure_comp <component> <fingerprint-extra> <argv...>: reuse the running process when its
# recorded command line and fingerprint match; otherwise (re)start it.
STARTED=() REUSED=()
ensure_comp() {
  local c=$1 extra=$2; shift 2
  local want pid
  want=$(printf '%s\n' "$@"; printf '#%s\n' "$extra")
  pid=$(comp_pid "$c")
  if [ -n "$pid" ] && [ "$want" = "$(cat "$RUN/$c.cmd" 2>/dev/null)" ]; then
    REUSED+=("$c"); return 0
  fi
  if [ -n "$pid" ]; then
    say "$c runs with another configuration; restarting it and what depends on it"
    local i j
    for i in "${!COMPONENTS[@]}"; do [ "${COMPONENTS[i]}" = "$c" ] && break; done
    for (( j=${#COMPONENTS[@]}-1; j>=i; j-- )); do stop_comp "${COMPONENTS[j]}"; done
  fi
  printf '%s\n' "$want" > "$RUN/$c.cmd"
  rm -f "$RUN/$c.pid"
  printf '=== %s starting %s\n' "$(date -u +%FT%TZ)" "$c" >> "$LOGS/$c.log"
  # Own session, no terminal, output to the log: survives the caller and never holds its pipe.
  # fd 8 (our lock) is closed so that the component never holds the lock.
  setsid bash -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$RUN/$c.pid" "$@" \
    >> "$LOGS/$c.log" 2>&1 < /dev/null 8>&- &
  # The pid file is written before the exec: until the exec, /proc/PID/cmdline is bash's and
  # comp_pid does not know the process, so wait for the exec (or the process's death) too.
  local i pid
  for i in $(seq 1 200); do
    if [ -s "$RUN/$c.pid" ]; then
      [ -n "$(comp_pid "$c")" ] && break
      pid=$(cat "$RUN/$c.pid")
      kill -0 "$pid" 2>/dev/null || break   # died: wait_healthy reports it with its log
    fi
    sleep 0.05
  done
  STARTED+=("$c")
}

# wait_healthy <component> <command...>: until the command succeeds; fail if the process dies.
wait_healthy() {
  local c=$1; shift
  local deadline=$(( $(date +%s) + READY_TIMEOUT ))
  while :; do
    "$@" >/dev/null 2>&1 && return 0
    if [ -z "$(comp_pid "$c")" ]; then
      tail -n 30 "$LOGS/$c.log" >&2 || true
      fail "$c exited; log: $LOGS/$c.log"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 30 "$LOGS/$c.log" >&2 || true
      fail "$c not healthy after ${READY_TIMEOUT}s; log: $LOGS/$c.log"
    fi
    sleep 0.2
  done
}
admin_curl() {
  curl -fsS --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$@"
}
etcd_ok() { curl -fsS --max-time 5 "$ETCD_URL/health" | grep -q '"health":"true"'; }
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

# Loopback may not be an endpoint of the `kubernetes` Service, so its reconciler is off.
# Admission: no controller-manager, so no default ServiceAccount (ServiceAccount plugin off) and
# nothing that would lift the not-ready taint from new nodes (TaintNodesByCondition off).
ensure_comp kube-apiserver "pki=$PKI_ID" \
  "${BIN[kube-apiserver]}" \
  --etcd-servers="$ETCD_URL" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="${PORT[APISERVER_PORT]}" \
  --endpoint-reconciler-type=none \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --client-ca-file="$PKI/client-ca.crt" \
  --authorization-mode=RBAC \
  --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
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
# would create. Left out: the node lifecycle controller. The cluster's Nodes are API objects kept by tests (some
# never post a Ready condition) or by the node agent; tainting them not-ready or unreachable, and
# evicting their pods, would be the controller reacting to the harness, not to a failure.
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
{
  printf 'export KUBECONFIG=%q\n' "$KUBECONFIG_PATH"
  printf 'export BSW_APISERVER_URL=%q\n' "$API_URL"
  printf 'export BSW_ETCD_URL=%q\n' "$ETCD_URL"
  printf 'export BSW_CA_CERT=%q\n' "$PKI/ca.crt"
} > "$STATE/cluster.env"
T1=$(date +%s.%N)
say "ready in $(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.1f", b - a }')s;" \
  "started: ${STARTED[*]:-none}; reused: ${REUSED[*]:-none}"
echo "# API server $API_URL; logs in $LOGS; source $STATE/cluster.env for more"
printf 'export KUBECONFIG=%q\n' "$KUBECONFIG_PATH"
