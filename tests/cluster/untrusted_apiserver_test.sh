#!/usr/bin/env bash
# Issue #23, point 5: `budgetsweep operator` refuses an API server whose certificate does not
# match the CA it was given. A kubeconfig for the real test API server with the admin's
# credentials but another CA (the cluster's client CA, which signs no server certificate): the
# operator exits 1 within seconds, before serving anything, with event api_server_untrusted
# naming the server and OpenSSL's reason. With the right CA, the same operator logs the server's
# version and runs.
# Without KUBECONFIG it skips (exit 77).
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BUDGETSWEEP:?path to budgetsweep}"
TMP=$(mktemp -d)
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT
failures=0
pass() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }

other_ca=$(dirname "$KUBECONFIG")/pki/client-ca.crt
[ -s "$other_ca" ] || { fail "no $other_ca"; exit 1; }
python3 - "$KUBECONFIG" "$other_ca" >"$TMP/wrong-ca.kubeconfig" <<'PY'
import base64, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
cluster = doc["clusters"][0]["cluster"]
cluster.pop("certificate-authority", None)
cluster["certificate-authority-data"] = base64.b64encode(open(sys.argv[2], "rb").read()).decode()
# Paths in the original stay valid from here.
base = sys.argv[1].rsplit("/", 1)[0]
for user in doc["users"]:
    for key in ("client-certificate", "client-key"):
        if key in user["user"] and not user["user"][key].startswith("/"):
            user["user"][key] = base + "/" + user["user"][key]
print(yaml.safe_dump(doc))
PY
server=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["clusters"][0]["cluster"]["server"])' "$KUBECONFIG")

start=$(date +%s)
rc=0
timeout 30 "$BUDGETSWEEP" operator --kubeconfig "$TMP/wrong-ca.kubeconfig" \
  --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 2>"$TMP/wrong.log" || rc=$?
took=$(($(date +%s) - start))
line=$(grep '"event":"api_server_untrusted"' "$TMP/wrong.log" || true)
if [ "$rc" = 1 ] && [ "$took" -le 10 ] && [ -n "$line" ] &&
  grep -qF "refusing the API server at $server: " <<<"$line" &&
  grep -qF "(checked against the configured certificate-authority); TLS verification is never skipped" <<<"$line"; then
  pass "another CA: exit 1 after ${took}s: $(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["error"])' "$line")"
else
  fail "another CA: exit $rc after ${took}s; log: $(tail -3 "$TMP/wrong.log")"
fi
grep -q '"event":"serving"' "$TMP/wrong.log" && fail "it served before refusing" ||
  pass "it refused before serving metrics or probes"

"$BUDGETSWEEP" operator --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 \
  --namespace kube-system 2>"$TMP/right.log" &
PID=$!
for _ in $(seq 1 50); do
  grep -q '"event":"operator_started"' "$TMP/right.log" && break
  sleep 0.2
done
grep -q '"event":"api_server","version":"v1\.' "$TMP/right.log" &&
  grep -q '"event":"operator_started"' "$TMP/right.log" &&
  pass "the right CA: $(grep -o '"version":"[^"]*"' "$TMP/right.log"), operator started" ||
  fail "the right CA: $(tail -3 "$TMP/right.log")"
kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
