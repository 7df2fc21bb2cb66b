#!/usr/bin/env bash
# The whole user path on the test cluster's real node (the node fixture: kubelet, containerd,
# runc, the images of `make images` imported):
#   1. helm installs charts/budgetsweep, with its default image (budgetsweep/operator:<appVersion>),
#      into a namespace that enforces Pod Security "restricted": the operator runs as a container
#      of its own image with the in-cluster configuration (its ServiceAccount's token, the
#      cluster CA, the `kubernetes` Service), and `helm install --wait` returns once its /readyz
#      has made the Deployment available;
#   2. `kubectl apply` the cluster example (examples/fashion-mnist-cluster.yaml, sized down for a
#      test: 2,000 images, 6 trials, and spec.metrics.prometheus.url set); its throughput probe
#      phase decides on the cluster, and its probe and trial pods are containers of the
#      budgetsweep-trainer image, training on Fashion-MNIST;
#   3. upstream Prometheus (built by build.sh) discovers the trial pods and the operator's pod
#      with kubernetes_sd_configs (role pod) against the test apiserver, as its own
#      ServiceAccount, with the chart's scrape jobs (charts/budgetsweep/files/
#      prometheus-scrape-configs.yaml) unchanged, and scrapes them at their pod IPs; the
#      operator's /metrics over HTTPS with that ServiceAccount's token, which the chart's
#      metrics-reader ClusterRole (bound through metrics.readers) authorizes, while a caller
#      without a token gets 401 and one without the binding 403 (metrics.secure, the default);
#   4. the operator decides from Prometheus and the sweep ends; budget used <= budget;
#   5. every dashboard panel query, run against that Prometheus while the example's trials run,
#      parses and returns series (DCGM's need a GPU, and the example has no probe phase: those
#      queries must parse; tests/e2e/dashboard_test.sh checks them against a DCGM stand-in and an
#      example sweep's status);
#   6. Prometheus stopped for 2 minutes mid-sweep (a sweep of curve-trainer pods): no trial is
#      stopped for lack of data, values from after the outage are recorded, and the budget still
#      holds;
#   6b. a sweep whose curve-trainer pods only print their values (spec.metrics.collector StdOut):
#      budgetsweep-collect, copied from the operator's image by an init container, serves them;
#      the values are recorded from Prometheus, the budget holds and no pod is left;
#   7. `helm uninstall` leaves no operator object behind (the CRDs stay, as Helm does).
# Without KUBECONFIG it skips (exit 77).
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BSW_CLUSTER_DIR:?the test cluster state dir}"
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
# shellcheck source=/dev/null
. "$BSW_CLUSTER_DIR/cluster.env"
[ -s "$BSW_CLUSTER_DIR/node/node.env" ] || { echo "FAIL no test node (node_fixture.sh up)"; exit 1; }
# shellcheck source=/dev/null
. "$BSW_CLUSTER_DIR/node/node.env"
VERSION=$("$ROOT/scripts/project-version")
# shellcheck source=curve_sweep.sh
. "$HERE/curve_sweep.sh"

ID=$(printf '%04x%04x' $RANDOM $RANDOM)
NS=bsw-user-$ID
REL=bsw
PROM_PID=""
# shellcheck source=namespace_lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/namespace_lib.sh"
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }
cleanup() {
  set +e
  [ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null
  if [ "$failures" -gt 0 ]; then
    k -n "$NS" get pods -o wide
    k -n "$NS" get bsw -o yaml | grep -A40 '^  status:' | head -80
    k -n "$NS" logs -l app.kubernetes.io/name=budgetsweep --tail=40
    [ -f "$TMP/prometheus.log" ] && { echo "== prometheus"; tail -40 "$TMP/prometheus.log"; }
  fi
  "$HELM" uninstall "$REL" -n "$NS" >/dev/null 2>&1
  drop_namespace "$NS"
  rm -rf "$TMP"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
field() { k -n "$NS" get bsw "$1" -o "jsonpath={$2}" 2>/dev/null; }
wait_ended() {
  local phase=""
  for _ in $(seq 1 $(($2 * 2))); do
    phase=$(field "$1" .status.phase)
    case $phase in Completed | BudgetExhausted | Failed) break ;; esac
    sleep 0.5
  done
  echo "$phase"
}

# ---- the namespace ------------------------------------------------------------------------------
k apply -f "$ROOT/crds/" >/dev/null
k create namespace "$NS" >/dev/null
k label namespace "$NS" pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null

# ---- 1. helm install -----------------------------------------------------------------------------
# Prometheus's ServiceAccount first: the chart binds its metrics-reader ClusterRole to it.
k -n "$NS" create serviceaccount prometheus >/dev/null
if "$HELM" install "$REL" "$CHART" -n "$NS" --wait --timeout 180s \
  --set-string "nodeSelector.kubernetes\.io/hostname=$BSW_NODE_NAME" \
  --set "metrics.readers[0].kind=ServiceAccount" --set "metrics.readers[0].name=prometheus" \
  --set "metrics.readers[0].namespace=$NS" >"$TMP/helm.log" 2>&1; then
  pass "helm install into a namespace enforcing restricted; the operator pod is Ready"
else
  fail "helm install: $(tail -5 "$TMP/helm.log")"
fi
op=$(k -n "$NS" get pods -l app.kubernetes.io/name=budgetsweep -o json | python3 -c '
import json, sys
p = json.load(sys.stdin)["items"][0]
c = p["status"]["containerStatuses"][0]
mounts = {m["mountPath"]: m["name"] for m in p["spec"]["containers"][0].get("volumeMounts", [])}
vol = mounts.get("/var/run/secrets/kubernetes.io/serviceaccount")
sources = next((v["projected"]["sources"] for v in p["spec"]["volumes"] if v["name"] == vol), [])
exp = [s["serviceAccountToken"].get("expirationSeconds") for s in sources if "serviceAccountToken" in s]
print(p["spec"]["nodeName"], c["image"], str(c["ready"]).lower(), "state=" + ",".join(c["state"]),
      "token-expiration=%s" % (exp[0] if exp else "none"))')
[ "$op" = "$BSW_NODE_NAME docker.io/budgetsweep/operator:$VERSION true state=running token-expiration=600" ] &&
  pass "the operator runs on $BSW_NODE_NAME as a container of budgetsweep/operator:$VERSION, Ready, with a projected ServiceAccount token of 600 s" ||
  fail "the operator pod: $op"
k -n "$NS" logs -l app.kubernetes.io/name=budgetsweep --tail=-1 >"$TMP/operator.log" 2>&1
cfg=$(python3 - "$TMP/operator.log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "config_loaded":
        print(e.get("source"), e.get("server"))
        break
PY
)
[ "$cfg" = "in-cluster https://10.0.0.1:443" ] &&
  pass "the operator uses the in-cluster configuration: the kubernetes Service at https://10.0.0.1:443" ||
  fail "the operator's config_loaded event: '$cfg' (log: $(head -3 "$TMP/operator.log"))"

# ---- Prometheus, discovering pods through the apiserver -----------------------------------------
# Upstream Prometheus (build.sh) with the chart's scrape jobs unchanged, given only how to reach
# the test API server: as its own ServiceAccount, allowed to list and watch this namespace's pods.
PROMETHEUS=$("$HERE/build.sh" prometheus | sed -n 's/^prometheus=//p')
[ -x "$PROMETHEUS" ] || { fail "build.sh did not produce prometheus"; exit 1; }
k -n "$NS" create role pod-reader --verb=get,list,watch --resource=pods >/dev/null
k -n "$NS" create rolebinding prometheus-pod-reader --role=pod-reader \
  --serviceaccount="$NS:prometheus" >/dev/null
k -n "$NS" create token prometheus --duration=2h > "$TMP/prometheus.token"
PROM_PORT=$(free_port)
# On the cluster's address, where the operator's pod reaches it.
PROM_URL=http://$BSW_NODE_IP:$PROM_PORT
python3 - "$CHART/files/prometheus-scrape-configs.yaml" "$BSW_APISERVER_URL" "$BSW_CA_CERT" \
  "$TMP/prometheus.token" "$NS" >"$TMP/prometheus.yml" <<'PY'
import json, sys, yaml
jobs = yaml.safe_load(open(sys.argv[1]))
api, ca, token, ns = sys.argv[2:6]
for job in jobs:
    for sd in job["kubernetes_sd_configs"]:
        sd.update({"api_server": api, "tls_config": {"ca_file": ca},
                   "authorization": {"credentials_file": token}, "namespaces": {"names": [ns]}})
    # A job that scrapes with Prometheus's in-pod token (the operator's, over HTTPS) gets the
    # same ServiceAccount's token from its file here: this Prometheus runs outside a pod.
    if "authorization" in job:
        assert job["authorization"] == {
            "credentials_file": "/var/run/secrets/kubernetes.io/serviceaccount/token"}, job
        job["authorization"]["credentials_file"] = token
print(json.dumps({"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                  "scrape_configs": jobs}))
PY
"$(dirname "$PROMETHEUS")/promtool" check config "$TMP/prometheus.yml" >"$TMP/promtool.log" 2>&1 &&
  pass "promtool check config: the chart's scrape jobs with kubernetes_sd_configs" ||
  fail "promtool check config: $(tail -3 "$TMP/promtool.log")"
start_prometheus() {
  "$PROMETHEUS" --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address="$BSW_NODE_IP:$PROM_PORT" >>"$TMP/prometheus.log" 2>&1 &
  PROM_PID=$!
  for _ in $(seq 1 100); do
    curl -sf "$PROM_URL/-/ready" >/dev/null && return 0
    sleep 0.2
  done
  return 1
}
start_prometheus || fail "Prometheus did not start"

# ---- the operator's /metrics: HTTPS, authorized by the API server ---------------------------------
op_ip=$(k -n "$NS" get pods -l app.kubernetes.io/name=budgetsweep -o jsonpath='{.items[0].status.podIP}')
OP_METRICS=https://$op_ip:8080/metrics
k -n "$NS" create serviceaccount stranger >/dev/null
k -n "$NS" create token stranger --duration=1h >"$TMP/stranger.token"
code() { curl -sk -o "$TMP/body" -w '%{http_code}' --max-time 10 "$@" || true; }
got=$(code "$OP_METRICS")
[ "$got" = 401 ] && pass "the operator's /metrics without a token: 401 ($(head -c 80 "$TMP/body"))" ||
  fail "the operator's /metrics without a token: $got"
got=$(code -H "Authorization: Bearer not-a-token" "$OP_METRICS")
[ "$got" = 401 ] && pass "with a token the API server does not know: 401" || fail "with a made-up token: $got"
got=$(code -H "Authorization: Bearer $(cat "$TMP/stranger.token")" "$OP_METRICS")
[ "$got" = 403 ] && grep -q "system:serviceaccount:$NS:stranger\" may not get /metrics" "$TMP/body" &&
  pass "a ServiceAccount without get on /metrics: 403 ($(head -c 100 "$TMP/body"))" ||
  fail "a ServiceAccount without the binding: $got $(head -c 200 "$TMP/body")"
got=$(code -H "Authorization: Bearer $(cat "$TMP/prometheus.token")" "$OP_METRICS")
[ "$got" = 200 ] && grep -q '^budgetsweep_' "$TMP/body" &&
  pass "Prometheus's ServiceAccount, bound by the chart's metrics.readers: 200 with budgetsweep_* series" ||
  fail "Prometheus's token: $got $(head -c 200 "$TMP/body")"
got=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://$op_ip:8081/readyz" || true)
[ "$got" = 200 ] && pass "/readyz on the health port stays open, plain HTTP: 200" || fail "/readyz: $got"
got=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://$op_ip:8080/metrics" || true)
[ "$got" = 000 ] && pass "plain HTTP to the metrics port gets no answer" || fail "plain HTTP to the metrics port: $got"
# Prometheus's own scrape of the operator: HTTPS and up.
target=""
for _ in $(seq 1 60); do
  target=$(curl -s "$PROM_URL/api/v1/targets?scrapePool=budgetsweep-operator" | python3 -c '
import json, sys
ts = json.load(sys.stdin)["data"]["activeTargets"]
print(" ".join(t["scrapeUrl"] + "=" + t["health"] for t in ts))' 2>/dev/null)
  [[ $target == https://*=up ]] && break
  sleep 1
done
[[ $target == "https://$op_ip:8080/metrics=up" ]] &&
  pass "Prometheus scrapes the operator with its token: $target" ||
  fail "Prometheus's operator target: '$target'"

# ---- 2-4. the cluster example, decided from Prometheus ------------------------------------------
python3 - "$ROOT/examples/fashion-mnist-cluster.yaml" "$NS" "$BSW_NODE_NAME" "$PROM_URL" >"$TMP/example.json" <<'PY'
import json, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
ns, node, url = sys.argv[2:5]
doc["metadata"]["namespace"] = ns
spec = doc["spec"]
spec["budget"]["gpuHours"] = 0.1
spec["maxTrials"], spec["parallelism"] = 6, 2
spec["metrics"] = {"prometheus": {"url": url}}
spec["throughput"]["maxBudgetFraction"] = 0.3  # of the test's 0.1 GPU-h: room for three probes
tmpl = spec["trial"]["template"]["spec"]
tmpl["nodeSelector"] = {"kubernetes.io/hostname": node}
c = tmpl["containers"][0]
c["args"] = [a for a in c["args"] if not a.startswith(("--train-limit", "--threads"))]
c["args"] += ["--train-limit=2000", "--eval-limit=1000", "--threads=1", "--linger-seconds=3"]
# Two trials and the operator on the node's two cores.
c["resources"] = {"requests": {"cpu": "500m", "memory": "512Mi"}}
print(json.dumps(doc))
PY
k apply -f "$TMP/example.json" >/dev/null
# 5. The dashboard's queries against this Prometheus, while the trials run (the checker retries
# until every query answers, up to 3 minutes).
GPU_ONLY_EXTRA=DCGM_FI_DEV_GPU_UTIL python3 "$ROOT/tests/e2e/dashboard_check.py" \
  "$CHART/dashboards/budgetsweep.json" "$PROM_URL" \
  "{\"namespace\": \"$NS\", \"sweep\": \"fmnist-cluster\", \"trial\": \"fmnist-cluster-t.*\"}" \
  >"$TMP/dashboard.log" 2>&1 &
DASH_PID=$!
phase=$(wait_ended fmnist-cluster 600)
case $phase in
  Completed | BudgetExhausted) pass "the cluster example ended: $phase" ;;
  *) fail "the cluster example did not end within 10 minutes (phase '$phase')" ;;
esac
used=$(field fmnist-cluster .status.budget.used)
python3 -c "import sys; sys.exit(0 if float('${used:-nan}') <= 0.1 else 1)" &&
  pass "budget used $used <= 0.1 GPU-h" || fail "budget used '$used' > 0.1 GPU-h"
best=$(field fmnist-cluster .status.best.value)
[ -n "$best" ] && pass "best validation_accuracy $best, decided from Prometheus" || fail "no best value"
values=$(k -n "$NS" get bswt -l budgetsweep.dev/sweep=fmnist-cluster -o json | python3 -c '
import json, sys
print(sum(1 for i in json.load(sys.stdin)["items"] for e in i["status"]["events"] if e["event"] == "ValueRecorded"))')
[ "$values" -ge 6 ] && pass "$values rung values recorded from Prometheus" || fail "only $values rung values"
t=$(field fmnist-cluster .status.throughput)
if python3 - "$t" <<'PY'; then
import json, sys
t = json.loads(sys.argv[1] or "{}")
assert t.get("phase") == "Decided", t
assert t["baseline"]["samplesPerSecond"] > 0 and t["chosen"]["samplesPerSecond"] > 0, t
assert 0 < t["budgetUsed"] <= t["budgetLimit"], t
print(f'chose {t["chosen"]["settings"]}: {t["chosen"]["samplesPerSecond"]:.0f} samples/s vs '
      f'{t["baseline"]["samplesPerSecond"]:.0f} for the baseline, probes used {t["budgetUsed"]:.4f} GPU-h')
PY
  pass "the probe phase decided on the cluster (above)"
else
  fail "status.throughput: $t"
fi
left=""
for _ in $(seq 1 60); do
  left=$(k -n "$NS" get pods -l budgetsweep.dev/sweep=fmnist-cluster -o name 2>/dev/null)
  [ -z "$left" ] && break
  sleep 1
done
[ -z "$left" ] && pass "every trial and probe pod of the ended sweep was released" ||
  fail "pods left after the sweep ended: $left"
if wait "$DASH_PID"; then
  pass "every dashboard query parses and answers ($(tail -1 "$TMP/dashboard.log"))"
else
  fail "dashboard queries: $(grep FAIL "$TMP/dashboard.log" | head -5)"
fi

# ---- 6. Prometheus down for 2 minutes mid-sweep -------------------------------------------------
curve_sweep outage "  budget: {gpuHours: 0.2}
  scheduler: {algorithm: asha, mode: stop, seed: 4}
  parallelism: 2
  maxTrials: 2
  searchSpace:
    lr: {type: logUniform, min: 1.0e-3, max: 1.0e-2}
  metrics: {prometheus: {url: \"$PROM_URL\"}}" '"--seconds-per-epoch=20"' \
  "            resources: {requests: {cpu: 100m, memory: 64Mi}}" | k apply -f - >/dev/null
# Down once the first rung value is in, for 120 s: the trials keep training, unseen. A trial takes
# 9 x 20 s, so it runs on for about 40 s once Prometheus is back: time for Prometheus to find it
# again and scrape its values from after the outage. (With 16 s an epoch that margin was a few
# seconds; a trainer that ended before the first scrape after the restart left only its epoch-1
# value in Prometheus, and the check below failed.)
reached=""
for _ in $(seq 1 240); do
  reached=$(field outage '.status.rungs[0].reached')
  [ "$reached" = 2 ] && break
  sleep 1
done
[ "$reached" = 2 ] && pass "both trials reported epoch 1 through Prometheus before the outage" ||
  fail "the outage sweep's trials did not report epoch 1 (reached '$reached')"
kill "$PROM_PID" && wait "$PROM_PID" 2>/dev/null || true
PROM_PID=""
say_down=$(date +%s)
sleep 120
start_prometheus || fail "Prometheus did not restart"
phase=$(wait_ended outage 300)
[[ $phase == Completed || $phase == BudgetExhausted ]] &&
  pass "sweep outage ended after Prometheus was down $(($(date +%s) - say_down)) s: $phase" ||
  fail "sweep outage did not end (phase '$phase')"
missing=$(k -n "$NS" get bswt -l budgetsweep.dev/sweep=outage -o json | python3 -c '
import json, sys
print(sum(1 for i in json.load(sys.stdin)["items"] for e in i["status"]["events"]
          if e.get("reason") == "MetricsMissing"))')
[ "$missing" -eq 0 ] && pass "no trial stopped for lack of data during the outage" ||
  fail "$missing MetricsMissing stop(s)"
reached=$(field outage '.status.rungs[1].reached')
[ "${reached:-0}" -ge 1 ] && pass "epoch-3 values, from after the outage, were recorded ($reached)" ||
  fail "no rung value was recorded after the outage"
used=$(field outage .status.budget.used)
python3 -c "import sys; u = float('${used:-nan}'); sys.exit(0 if 0 < u <= 0.2 else 1)" &&
  pass "budget held through the outage: used $used <= 0.2 GPU-h" || fail "budget used '$used' (want 0 < used <= 0.2)"

# ---- 6b. a trainer that only prints its values (spec.metrics.collector StdOut) -------------------
# The curve-trainer's own lines ("epoch 3/9 validation_accuracy=0.71 ...") read by
# budgetsweep-collect, which an init container copies into the pod from the operator's image; the
# operator decides from Prometheus, which scrapes the wrapper as it would any trainer. The learning
# rate is placed by a Katib placeholder, not appended.
curve_sweep printed "  budget: {gpuHours: 0.05}
  scheduler: {algorithm: asha, mode: stop, seed: 7}
  parallelism: 2
  maxTrials: 4
  searchSpace:
    lr: {type: logUniform, min: 1.0e-3, max: 1.0e-2}
  metrics:
    prometheus: {url: \"$PROM_URL\"}
    collector: {kind: StdOut}" '"--seconds-per-epoch=3", "--lr=${trialParameters.lr}"' \
  "            command: [/usr/local/bin/curve-trainer]
            resources: {requests: {cpu: 100m, memory: 64Mi}}" | k apply -f - >/dev/null
phase=$(wait_ended printed 300)
[[ $phase == Completed || $phase == BudgetExhausted ]] &&
  pass "the printing trainer's sweep ended: $phase" || fail "sweep printed did not end (phase '$phase')"
if k -n "$NS" get bswt -l budgetsweep.dev/sweep=printed -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
values = [e for i in items for e in i["status"]["events"] if e["event"] == "ValueRecorded"]
charged = sum((e["finished"] - e["started"]) * e["devices"] for i in items
              for e in i["status"]["events"] if e["event"] == "SegmentEnded")
assert len(values) >= 4, values
assert all(0 < e["value"] < 1 for e in values), values
print("%d values recorded from printed lines, %.0f device-seconds charged" % (len(values), charged))
'; then pass "values printed by the trainer were recorded (above)"; else fail "printed values"; fi
used=$(field printed .status.budget.used)
python3 -c "import sys; u = float('${used:-nan}'); sys.exit(0 if 0 < u <= 0.05 else 1)" &&
  pass "budget held: used $used <= 0.05 GPU-h" || fail "budget used '$used' (want 0 < used <= 0.05)"
left=""
for _ in $(seq 1 60); do
  left=$(k -n "$NS" get pods -l budgetsweep.dev/sweep=printed -o name 2>/dev/null)
  [ -z "$left" ] && break
  sleep 1
done
[ -z "$left" ] && pass "every pod of the printing trainer's sweep was released" ||
  fail "pods left: $left"

# ---- 7. helm uninstall --------------------------------------------------------------------------
"$HELM" uninstall "$REL" -n "$NS" --wait --timeout 120s >/dev/null
left=""
for _ in $(seq 1 60); do
  left=$(k -n "$NS" get deployment,replicaset,pod,role,rolebinding,service,configmap \
    -l "app.kubernetes.io/instance=$REL" -o name 2>/dev/null)
  left+=$(k get clusterrole,clusterrolebinding,mutatingadmissionpolicy,mutatingadmissionpolicybinding \
    -l "app.kubernetes.io/instance=$REL" -o name 2>/dev/null)
  [ -z "$left" ] && break
  sleep 1
done
[ -z "$left" ] && pass "helm uninstall left no operator object" || fail "left after uninstall: $left"
k get crd budgetsweeps.budgetsweep.dev >/dev/null && pass "the CRDs stay" || fail "the CRD was removed"
finish
