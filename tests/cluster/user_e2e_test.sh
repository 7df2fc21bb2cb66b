#!/usr/bin/env bash
# The whole user path on the test cluster (issue: cluster packaging and observability):
#   1. helm installs charts/budgetsweep into a namespace that enforces Pod Security "restricted";
#      its Deployment's pod (run by the node agent) is the operator;
#   2. `kubectl apply` the cluster example (examples/fashion-mnist-cluster.yaml, sized down for a
#      test: 2,000 images, 6 trials, and spec.metrics.prometheus.url set); its throughput probe
#      phase decides on the cluster, and its probe pods are released like the trials';
#   3. Debian's Prometheus discovers the trial pods from the test apiserver and scrapes them, and
#      the operator's pod. Debian builds Prometheus without kubernetes_sd_configs, so discovery
#      goes through http_sd_configs served by pod_sd.py, which lists the pods with kubectl and
#      gives them kubernetes_sd's __meta_kubernetes_pod_* labels; the relabeling is the same;
#   4. the operator decides from Prometheus and the sweep ends; budget used <= budget;
#   5. every dashboard panel query, run against that Prometheus while the example's trials run,
#      parses and returns series (DCGM's need a GPU, and the example has no probe phase: those
#      queries must parse; tests/e2e/dashboard_test.sh checks them against a DCGM stand-in and an
#      example sweep's status);
#   6. Prometheus stopped for 2 minutes mid-sweep (a curve-trainer sweep): no trial is stopped
#      for lack of data, values from after the outage are recorded, and the budget still holds;
#   7. `helm uninstall` leaves no operator object behind (the CRDs stay, as Helm does).
# The node agent mounts no service-account token, so the operator pod is given a kubeconfig with
# a token of its chart-bound ServiceAccount (extraArgs --kubeconfig): it acts with exactly the
# chart's RBAC. Without KUBECONFIG it skips (exit 77).
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BUDGETSWEEP:?path to budgetsweep}" "${NODE_AGENT:?path to bsw-node-agent}"
: "${CURVE:?path to the curve-trainer fixture}" "${TRAINER:?path to budgetsweep-trainer}"
: "${BSW_CLUSTER_DIR:?the test cluster state dir}"
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
# shellcheck source=/dev/null
. "$BSW_CLUSTER_DIR/cluster.env"
command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed (make deps)"; exit 1; }

ID=$(printf '%04x%04x' $RANDOM $RANDOM)
NS=bsw-user-$ID
REL=bsw
SA=budgetsweep-operator
AGENT_PID=""
PROM_PID=""
SD_PID=""
# shellcheck source=namespace_lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/namespace_lib.sh"
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }
cleanup() {
  set +e
  [ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null
  [ -n "$SD_PID" ] && kill "$SD_PID" 2>/dev/null
  "$HELM" uninstall "$REL" -n "$NS" >/dev/null 2>&1
  drop_namespace "$NS"
  [ -n "$AGENT_PID" ] && kill -TERM "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
  if [ "$failures" -gt 0 ]; then
    k -n "$NS" get pods -o wide
    k -n "$NS" get bsw -o yaml | grep -A40 '^  status:' | head -80
    for f in "$TMP"/agent/logs/*operator*.log "$TMP/prometheus.log" "$TMP/agent.log"; do
      [ -f "$f" ] && { echo "== $f"; tail -40 "$f"; }
    done
  fi
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

# ---- the namespace, a node agent, the ServiceAccount's kubeconfig ------------------------------
k apply -f "$ROOT/crds/" >/dev/null
k create namespace "$NS" >/dev/null
k label namespace "$NS" pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null
PATH="$(dirname "$BUDGETSWEEP"):$(dirname "$TRAINER"):$PATH" "$NODE_AGENT" --nodes 2 \
  --gpus-per-node 4 --node-prefix "user-$ID" --node-label "budgetsweep.dev/test=$ID" \
  --address-base "127.$((RANDOM % 200 + 20)).0.10" --work-dir "$TMP/agent" 2>"$TMP/agent.log" &
AGENT_PID=$!
k -n "$NS" create serviceaccount "$SA" >/dev/null
token=$(k -n "$NS" create token "$SA" --duration=2h)
cat >"$TMP/sa.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "$BSW_APISERVER_URL", certificate-authority: "$BSW_CA_CERT"}}]
users: [{name: $SA, user: {token: "$token"}}]
contexts: [{name: test, context: {cluster: test, user: $SA, namespace: $NS}}]
current-context: test
YAML

# ---- 1. helm install -----------------------------------------------------------------------------
if "$HELM" install "$REL" "$CHART" -n "$NS" --wait --timeout 180s \
  --set serviceAccount.create=false --set "serviceAccount.name=$SA" \
  --set-string "nodeSelector.budgetsweep\.dev/test=$ID" \
  --set 'metrics.bindAddress=$(POD_IP)' --set 'health.bindAddress=$(POD_IP)' \
  --set-json "extraArgs=[\"--kubeconfig=$TMP/sa.kubeconfig\", \"--checkpoint-dir=$TMP/checkpoints\"]" \
  >"$TMP/helm.log" 2>&1; then
  pass "helm install into a namespace enforcing restricted; the operator pod is Ready"
else
  fail "helm install: $(tail -5 "$TMP/helm.log")"
fi

# ---- Prometheus, discovering pods through the apiserver -----------------------------------------
python3 "$HERE/pod_sd.py" "$NS" "$TMP/sd.port" 2>"$TMP/pod_sd.log" &
SD_PID=$!
for _ in $(seq 1 50); do [ -s "$TMP/sd.port" ] && break; sleep 0.1; done
SD_URL="http://127.0.0.1:$(cat "$TMP/sd.port")/"
PROM_PORT=$(free_port)
cat >"$TMP/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: budgetsweep-trials
    http_sd_configs: [{url: "$SD_URL", refresh_interval: 1s}]
    relabel_configs:
      - {source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape], regex: "true", action: keep}
      - {source_labels: [__meta_kubernetes_pod_ip, __meta_kubernetes_pod_annotation_prometheus_io_port], regex: "(.+);(.+)", replacement: "\$1:\$2", target_label: __address__}
      - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}
      - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
      - {source_labels: [__meta_kubernetes_pod_container_name], target_label: container}
  - job_name: budgetsweep-operator
    honor_labels: true
    http_sd_configs: [{url: "$SD_URL", refresh_interval: 1s}]
    relabel_configs:
      - {source_labels: [__meta_kubernetes_pod_label_app_kubernetes_io_name], regex: budgetsweep, action: keep}
      - {source_labels: [__meta_kubernetes_pod_ip], replacement: "\$1:8080", target_label: __address__}
      - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
YAML
start_prometheus() {
  prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" >>"$TMP/prometheus.log" 2>&1 &
  PROM_PID=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && return 0
    sleep 0.2
  done
  return 1
}
start_prometheus || fail "Prometheus did not start"

# ---- 2-4. the cluster example, decided from Prometheus ------------------------------------------
python3 - "$ROOT/examples/fashion-mnist-cluster.yaml" "$NS" "$ID" "$PROM_PORT" >"$TMP/example.json" <<'PY'
import json, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
ns, test_id, port = sys.argv[2:5]
doc["metadata"]["namespace"] = ns
spec = doc["spec"]
spec["budget"]["gpuHours"] = 0.1
spec["maxTrials"], spec["parallelism"] = 6, 2
spec["metrics"] = {"prometheus": {"url": f"http://127.0.0.1:{port}"}}
spec["throughput"]["maxBudgetFraction"] = 0.3  # of the test's 0.1 GPU-h: room for three probes
tmpl = spec["trial"]["template"]["spec"]
tmpl["nodeSelector"] = {"budgetsweep.dev/test": test_id}
c = tmpl["containers"][0]
c["args"] = [a for a in c["args"] if not a.startswith(("--train-limit", "--threads"))]
c["args"] += ["--train-limit=2000", "--eval-limit=1000", "--threads=1", "--linger-seconds=3"]
c["resources"] = {"requests": {"cpu": "1", "memory": "512Mi"}}
print(json.dumps(doc))
PY
k apply -f "$TMP/example.json" >/dev/null
# 5. The dashboard's queries against this Prometheus, while the trials run (the checker retries
# until every query answers, up to 3 minutes).
GPU_ONLY_EXTRA=DCGM_FI_DEV_GPU_UTIL python3 "$ROOT/tests/e2e/dashboard_check.py" \
  "$CHART/dashboards/budgetsweep.json" "http://127.0.0.1:$PROM_PORT" \
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
cat <<YAML | k apply -f - >/dev/null
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata: {name: outage, namespace: $NS}
spec:
  budget: {gpuHours: 0.2}
  objective: {metric: validation_accuracy, goal: maximize}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 4}
  parallelism: 2
  maxTrials: 2
  searchSpace:
    lr: {type: logUniform, min: 1.0e-3, max: 1.0e-2}
  metrics: {prometheus: {url: "http://127.0.0.1:$PROM_PORT"}}
  trial:
    gpus: 1
    template:
      spec:
        terminationGracePeriodSeconds: 2
        nodeSelector: {budgetsweep.dev/test: "$ID"}
        containers:
          - name: trainer
            image: curve-trainer
            command: ["$CURVE"]
            args: ["--seconds-per-epoch=16"]
YAML
# Down once the first rung value is in, for 120 s: the trials keep training, unseen.
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

# ---- 7. helm uninstall --------------------------------------------------------------------------
"$HELM" uninstall "$REL" -n "$NS" --wait --timeout 120s >/dev/null
left=""
for _ in $(seq 1 60); do
  left=$(k -n "$NS" get deployment,replicaset,pod,role,rolebinding,service,configmap \
    -l "app.kubernetes.io/instance=$REL" -o name 2>/dev/null)
  [ -z "$left" ] && break
  sleep 1
done
[ -z "$left" ] && pass "helm uninstall left no operator object" || fail "left after uninstall: $left"
k get crd budgetsweeps.budgetsweep.dev >/dev/null && pass "the CRDs stay" || fail "the CRD was removed"
finish
