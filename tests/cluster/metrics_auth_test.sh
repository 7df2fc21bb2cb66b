#!/usr/bin/env bash
# Issue #23, point 4: `budgetsweep operator --metrics-secure` against the real test API server (no
# node needed), as the chart's ServiceAccount with the chart's RBAC (serviceaccount.yaml,
# rbac.yaml, metrics-rbac.yaml rendered by helm and applied), its token in a kubeconfig:
#   - /metrics over HTTPS: no token 401 (WWW-Authenticate: Bearer), a token the API server does
#     not know 401, a ServiceAccount without get on /metrics 403 naming it, the ServiceAccount
#     that the chart's metrics.readers binds to <fullname>-metrics-reader 200 with the series;
#   - /healthz and /readyz stay open: plain HTTP on the health port, and on the secure port too;
#   - the outcome is cached briefly: once the reader's binding is deleted, its token is refused
#     within the cache's 10 s (and not at once);
#   - without the chart's <fullname>-auth ClusterRole (create tokenreviews), a new token gets 503
#     and the operator logs the API server's refusal;
#   - with --metrics-cert-file/--metrics-key-file, a client that trusts the issuing CA verifies the
#     server (curl --cacert, no -k), and one that trusts another CA refuses it.
# Without KUBECONFIG it skips (exit 77). Builds helm on first use.
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BUDGETSWEEP:?path to budgetsweep}"
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
# shellcheck source=namespace_lib.sh
. "$HERE/namespace_lib.sh"
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }

NS=bsw-metrics-$(printf '%04x%04x' $RANDOM $RANDOM)
REL=m$(printf '%04x' $RANDOM)
SA=$REL-budgetsweep
OPERATOR_PID=""
cleanup() {
  set +e
  stop_operator
  k delete clusterrole,clusterrolebinding -l "app.kubernetes.io/instance=$REL" \
    --ignore-not-found --wait=false >/dev/null 2>&1
  drop_namespace "$NS"
  if [ "$failures" -gt 0 ]; then
    echo "---- operator log (last 30 lines) ----"
    tail -30 "$TMP/operator.log"
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

k apply -f "$ROOT/crds/" >/dev/null
k create namespace "$NS" >/dev/null

# ---- the chart's ServiceAccount and RBAC ----------------------------------------------------------
render "$REL" "$NS" --set "metrics.readers[0].kind=ServiceAccount" \
  --set "metrics.readers[0].name=reader" --set "metrics.readers[0].namespace=$NS" \
  --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml \
  --show-only templates/metrics-rbac.yaml >"$TMP/rbac.yaml"
k apply -f "$TMP/rbac.yaml" >/dev/null
for sa in reader stranger late; do k -n "$NS" create serviceaccount "$sa" >/dev/null; done
k create clusterrolebinding "$REL-late" --clusterrole="$REL-budgetsweep-metrics-reader" \
  --serviceaccount="$NS:late" >/dev/null
k label clusterrolebinding "$REL-late" "app.kubernetes.io/instance=$REL" >/dev/null
token() { k -n "$NS" create token "$1" --duration=1h; }

sa_kubeconfig "$NS" "$SA" "$TMP"   # the operator's: the chart ServiceAccount's token

# start_operator [flags...]: runs it in the background; sets METRICS and HEALTH (the ports).
start_operator() {
  : >"$TMP/operator.log"
  KUBECONFIG= "$BUDGETSWEEP" operator --kubeconfig "$TMP/$SA.kubeconfig" --namespace "$NS" \
    --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 --metrics-secure "$@" \
    2>>"$TMP/operator.log" &
  OPERATOR_PID=$!
  local line=""
  for _ in $(seq 1 100); do
    line=$(grep '"event":"serving"' "$TMP/operator.log" || true)
    [ -n "$line" ] && break
    kill -0 "$OPERATOR_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$line" ] || { fail "the operator did not start serving"; tail -5 "$TMP/operator.log"; exit 1; }
  METRICS=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["metrics_port"])' "$line")
  HEALTH=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["health_port"])' "$line")
}
stop_operator() {
  [ -n "$OPERATOR_PID" ] || return 0
  kill "$OPERATOR_PID" 2>/dev/null
  wait "$OPERATOR_PID" 2>/dev/null || true
  OPERATOR_PID=""
}
# get URL [curl flags...]: the HTTP code (000: no answer); the body in $TMP/body.
get() {
  local url=$1; shift
  curl -s -o "$TMP/body" -w '%{http_code}' --max-time 10 "$@" "$url" || true
}
bearer() { echo "Authorization: Bearer $1"; }

start_operator
URL=https://127.0.0.1:$METRICS/metrics
grep -q '"event":"metrics_secure","certificate":"self-signed"' "$TMP/operator.log" &&
  pass "--metrics-secure without certificate files: a self-signed certificate" ||
  fail "no metrics_secure self-signed log line"

# ---- authentication and authorization -----------------------------------------------------------
got=$(get "$URL" -k -D "$TMP/headers")
if [ "$got" = 401 ] && grep -qi '^WWW-Authenticate: Bearer' "$TMP/headers"; then
  pass "no token: 401 with WWW-Authenticate: Bearer ($(head -c 60 "$TMP/body"))"
else
  fail "no token: $got"
fi
got=$(get "$URL" -k -H "$(bearer not-a-token)")
[ "$got" = 401 ] && pass "a token the API server does not know: 401 ($(head -c 80 "$TMP/body"))" ||
  fail "made-up token: $got $(cat "$TMP/body")"
got=$(get "$URL" -k -H "$(bearer "$(token stranger)")")
want="user \"system:serviceaccount:$NS:stranger\" may not get /metrics"
[ "$got" = 403 ] && grep -qF "$want" "$TMP/body" &&
  pass "a ServiceAccount without get on /metrics: 403 ($(head -c 100 "$TMP/body"))" ||
  fail "unbound ServiceAccount: $got $(cat "$TMP/body")"
READER=$(token reader)
got=$(get "$URL" -k -H "$(bearer "$READER")")
[ "$got" = 200 ] && grep -q '^budgetsweep_reconcile_duration_seconds' "$TMP/body" &&
  pass "the ServiceAccount bound by metrics.readers to $REL-budgetsweep-metrics-reader: 200 with the series" ||
  fail "reader: $got $(head -c 200 "$TMP/body")"
got=$(get "http://127.0.0.1:$METRICS/metrics")
[ "$got" = 000 ] && pass "plain HTTP on the metrics port: no answer" || fail "plain HTTP on the metrics port: $got"

# ---- probes stay open ------------------------------------------------------------------------------
probes="$(get "http://127.0.0.1:$HEALTH/healthz") $(get "http://127.0.0.1:$HEALTH/readyz")"
probes+=" $(get "https://127.0.0.1:$METRICS/healthz" -k) $(get "https://127.0.0.1:$METRICS/readyz" -k)"
[ "$probes" = "200 200 200 200" ] &&
  pass "/healthz and /readyz without a token: plain HTTP on the health port, HTTPS on the metrics port" ||
  fail "probes: $probes"

# ---- the cache: a revoked binding holds for at most the TTL -----------------------------------------
k delete clusterrolebinding "$REL-budgetsweep-metrics-reader" >/dev/null
t0=$(date +%s.%N)
first=$(get "$URL" -k -H "$(bearer "$READER")")
got=$first
for _ in $(seq 1 150); do
  got=$(get "$URL" -k -H "$(bearer "$READER")")
  [ "$got" = 403 ] && break
  sleep 0.1
done
held=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if [ "$first" = 200 ] && [ "$got" = 403 ] &&
  python3 -c "import sys; sys.exit(0 if float('$held') <= 12 else 1)"; then
  pass "the binding deleted: the cached 200 held, then 403 after ${held}s (cache TTL 10 s)"
else
  fail "after the binding was deleted: first $first, then $got after ${held}s"
fi

# ---- the operator's own right to review ----------------------------------------------------------------
k delete clusterrolebinding "$REL-budgetsweep-auth" >/dev/null
got=""
for _ in $(seq 1 50); do   # RBAC changes reach the authorizer within a moment
  got=$(get "$URL" -k -H "$(bearer "$(token late)")")
  [ "$got" = 503 ] && break
  sleep 0.2
done
[ "$got" = 503 ] && grep -q 'TokenReview failed' "$TMP/body" &&
  grep -q '"event":"metrics_refused".*"status":503' "$TMP/operator.log" &&
  pass "without the chart's $REL-budgetsweep-auth binding the operator cannot review: 503, logged" ||
  fail "without the auth binding: $got $(cat "$TMP/body")"
k apply -f "$TMP/rbac.yaml" >/dev/null   # the bindings back
stop_operator

# ---- a certificate from files: verified against its CA ------------------------------------------
(
  cd "$TMP"
  ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout ca.key -out metrics-ca.crt -subj /CN=metrics-ca -days 1
  openssl req -x509 "${ec[@]}" -keyout other.key -out other-ca.crt -subj /CN=other-ca -days 1
  openssl req "${ec[@]}" -keyout tls.key -out tls.csr -subj /CN=budgetsweep-operator
  printf 'subjectAltName=IP:127.0.0.1\n' >tls.ext
  openssl x509 -req -in tls.csr -CA metrics-ca.crt -CAkey ca.key -CAcreateserial -days 1 \
    -extfile tls.ext -out tls.crt
) >"$TMP/openssl.log" 2>&1 || { fail "openssl"; cat "$TMP/openssl.log"; exit 1; }
start_operator --metrics-cert-file "$TMP/tls.crt" --metrics-key-file "$TMP/tls.key"
URL=https://127.0.0.1:$METRICS/metrics
got=""
for _ in $(seq 1 50); do
  got=$(get "$URL" --cacert "$TMP/metrics-ca.crt" -H "$(bearer "$(token late)")")
  [ "$got" = 200 ] && break
  sleep 0.2
done
[ "$got" = 200 ] && pass "--metrics-cert-file: curl --cacert <its CA> verifies the server; 200" ||
  fail "certificate from files: $got $(head -c 200 "$TMP/body")"
got=$(get "$URL" --cacert "$TMP/other-ca.crt" -H "$(bearer "$READER")")
[ "$got" = 000 ] && pass "a client that trusts another CA refuses the server" ||
  fail "a client trusting another CA got $got"
stop_operator

finish
