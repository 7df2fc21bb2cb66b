#!/usr/bin/env bash
# kube-controller-manager in the test cluster (up.sh) does what tests rely on:
#   - a Deployment's ReplicaSet creates its pods (they need not run here: they are pinned to a
#     node that never exists);
#   - the garbage collector deletes a dependent whose owner is deleted (ownerReferences), and
#     orphans it on request;
#   - a new namespace gets its default ServiceAccount and kube-root-ca.crt ConfigMap, and a
#     deleted namespace goes away with its contents;
#   - ServiceAccount tokens: a token Secret is filled in by the token controller, and a token from
#     the TokenRequest API authenticates as the ServiceAccount.
# Without KUBECONFIG it skips (exit 77).
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set (eval \"\$(tests/cluster/up.sh | tail -1)\")"
  exit 77
fi
TMP=$(mktemp -d)
NS=kcm-$(date +%s)-$$
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }
trap 'k delete namespace "$NS" --wait=false >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
failures=0
pass() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
# until SECONDS COMMAND...: retries every 0.25 s until the command succeeds.
until_ok() {
  local end=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.25; done
}

k create namespace "$NS" >/dev/null
until_ok 30 k get serviceaccount default -n "$NS" && pass "namespace $NS got ServiceAccount default" ||
  fail "no default ServiceAccount in $NS"
until_ok 30 k get configmap kube-root-ca.crt -n "$NS" && pass "namespace $NS got ConfigMap kube-root-ca.crt" ||
  fail "no kube-root-ca.crt in $NS"

# ---- Deployment -> ReplicaSet -> pods -----------------------------------------------------------
k apply -n "$NS" -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {budgetsweep.dev/test: none}
      containers: [{name: c, image: none, command: ["sleep", "60"]}]
YAML
pods() { [ "$(k get pods -n "$NS" -l app=web -o name | wc -l)" = "$1" ]; }
until_ok 60 pods 2 && pass "Deployment web: its ReplicaSet created 2 pods" || fail "Deployment pods missing"
k scale deployment web -n "$NS" --replicas=1 >/dev/null
until_ok 60 pods 1 && pass "scaled to 1: one pod deleted" || fail "scale down did not delete a pod"
k delete deployment web -n "$NS" >/dev/null
rs_gone() { [ -z "$(k get replicasets,pods -n "$NS" -l app=web -o name)" ]; }
until_ok 60 rs_gone && pass "Deployment deleted: GC removed its ReplicaSet and pod" ||
  fail "ReplicaSet or pod left after the Deployment was deleted"

# ---- garbage collection on ownerReferences ------------------------------------------------------
k create configmap owner -n "$NS" >/dev/null
uid=$(k get configmap owner -n "$NS" -o jsonpath='{.metadata.uid}')
for name in dependent orphan; do
  k apply -n "$NS" -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: $name
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "$uid"}]
YAML
done
k delete configmap owner -n "$NS" --cascade=background >/dev/null
until_ok 60 bash -c "! kubectl --cache-dir='$TMP/kube-cache' get configmap dependent -n '$NS'" &&
  pass "owner deleted: GC deleted its dependents" || fail "dependent survived its owner"

k create configmap owner2 -n "$NS" >/dev/null
uid=$(k get configmap owner2 -n "$NS" -o jsonpath='{.metadata.uid}')
k apply -n "$NS" -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: kept
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner2, uid: "$uid"}]
YAML
k delete configmap owner2 -n "$NS" --cascade=orphan >/dev/null
orphaned() { [ -z "$(k get configmap kept -n "$NS" -o jsonpath='{.metadata.ownerReferences}')" ]; }
until_ok 60 orphaned && pass "--cascade=orphan: the dependent stays, its ownerReference removed" ||
  fail "orphaning did not remove the ownerReference"

# ---- ServiceAccount tokens ----------------------------------------------------------------------
k create serviceaccount robot -n "$NS" >/dev/null
k apply -n "$NS" -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Secret
metadata:
  name: robot-token
  annotations: {kubernetes.io/service-account.name: robot}
type: kubernetes.io/service-account-token
YAML
filled() { [ -n "$(k get secret robot-token -n "$NS" -o jsonpath='{.data.token}')" ]; }
until_ok 30 filled && pass "token Secret filled in by the token controller" || fail "token Secret stays empty"
# Neither client certificate nor the admin kubeconfig: only the token, against the same server.
server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
k config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
  base64 -d >"$TMP/ca.crt"
whoami() {   # token -> the user name the API server authenticated
  curl -fsS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
    -X POST "$server/apis/authentication.k8s.io/v1/selfsubjectreviews" \
    -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["userInfo"]["username"])'
}
want=system:serviceaccount:$NS:robot
got=$(whoami "$(k create token robot -n "$NS" --duration=10m)" 2>&1) || true
[ "$got" = "$want" ] && pass "TokenRequest token authenticates as $got" || fail "TokenRequest token: $got"
got=$(whoami "$(k get secret robot-token -n "$NS" -o jsonpath='{.data.token}' | base64 -d)" 2>&1) || true
[ "$got" = "$want" ] && pass "Secret token authenticates as $got" || fail "Secret token: $got"

# ---- namespace deletion -------------------------------------------------------------------------
k delete namespace "$NS" --wait=false >/dev/null
until_ok 120 bash -c "! kubectl --cache-dir='$TMP/kube-cache' get namespace '$NS'" &&
  pass "namespace $NS deleted with its contents" || fail "namespace $NS still there after 120 s"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
