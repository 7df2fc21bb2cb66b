#!/usr/bin/env bash
# Every query of the Grafana dashboard (charts/budgetsweep/dashboards/budgetsweep.json), with its
# variables substituted, parses and returns at least one series from a real Prometheus (Debian's
# package) that scrapes:
#   - a real budgetsweep-trainer process training on Fashion-MNIST (as the trial pod
#     dash-t0000-s1 of sweep dash in namespace bsw-dash: the labels a PodMonitor gives it);
#   - a real OperatorMetrics registry behind a real HealthServer, fed by
#     tests/fixtures/operator-metrics with the status of an example sweep that ran its probe phase
#     (the operator feeds it from its reconcile loop, operator/cmd/operator_command.cc; the
#     stand-in gives every panel, the throughput probe's and the BudgetPool row's too, a status
#     without a cluster: the sweep draws on pool team-a);
#   - a STAND-IN for dcgm-exporter: this machine has no GPU, so a static text file
#     (dcgm_stand_in.prom) served by Python's http.server provides DCGM_FI_DEV_GPU_UTIL.
# The template variables' label_values() queries are checked through /api/v1/series.
# Then upstream promtool (built from its Go module, tests/cluster/build.sh) lints the metric names
# of both budgetsweep endpoints: `promtool check metrics` must report nothing.
# The trainer's NVML series (budgetsweep_trainer_accelerator_utilization_ratio) exists only on a
# GPU: its panel must parse here, and may be empty (the only exception, named in the output).
set -euo pipefail
: "${TRAINER:?path to budgetsweep-trainer}" "${FEEDER:?path to operator-metrics-feeder}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DASHBOARD=$ROOT/charts/budgetsweep/dashboards/budgetsweep.json
PROMTOOL=$(dirname "$("$ROOT/tests/cluster/build.sh" prometheus | sed -n 's/^prometheus=//p')")/promtool
[ -x "$PROMTOOL" ] || { echo "FAIL: tests/cluster/build.sh did not produce promtool"; exit 1; }
command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed (make deps)"; exit 1; }
[ -d /usr/share/datasets/fashion-mnist ] || { echo "FAIL: dataset-fashion-mnist is not installed"; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsw-dashboard.XXXXXX")
PIDS=()
TRAINER_PID=""
cleanup() {
  local p
  # The trainer sleeps out its --linger-seconds before it looks at SIGTERM again.
  [ -z "$TRAINER_PID" ] || kill -KILL "$TRAINER_PID" 2>/dev/null || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {   # what url
  local i
  for i in $(seq 1 150); do curl -sf "$2" >/dev/null && return 0; sleep 0.2; done
  echo "FAIL: $1 did not come up at $2"; tail -20 "$WORK"/*.log; exit 1
}

# The trainer: one trial of sweep dash, serving until the test ends (long linger).
trainer_port=$(free_port)
BUDGETSWEEP_SWEEP=dash BUDGETSWEEP_TRIAL=dash-t0000 "$TRAINER" --model=mlp --train-limit=3000 \
  --validation-size=1000 --eval-limit=1000 --epochs=3 --threads=1 --workers=1 \
  --metrics-host=127.0.0.1 --metrics-port="$trainer_port" --linger-seconds=600 \
  --checkpoint-dir="$WORK/checkpoints" >"$WORK/trainer.log" 2>&1 &
TRAINER_PID=$!
PIDS+=($!)
# The operator's metrics.
"$FEEDER" --addr=127.0.0.1:0 --namespace=bsw-dash --sweep=dash --pool=team-a >"$WORK/feeder.log" 2>&1 &
PIDS+=($!)
# The DCGM stand-in.
mkdir -p "$WORK/dcgm"
cp "$HERE/dcgm_stand_in.prom" "$WORK/dcgm/metrics"
dcgm_port=$(free_port)
python3 -m http.server "$dcgm_port" --bind 127.0.0.1 --directory "$WORK/dcgm" >"$WORK/dcgm.log" 2>&1 &
PIDS+=($!)

wait_for trainer "http://127.0.0.1:$trainer_port/metrics"
wait_for dcgm-stand-in "http://127.0.0.1:$dcgm_port/metrics"
for _ in $(seq 1 100); do grep -q '^serving on' "$WORK/feeder.log" && break; sleep 0.1; done
feeder_addr=$(sed -n 's/^serving on //p' "$WORK/feeder.log")
[ -n "$feeder_addr" ] || { echo "FAIL: the feeder did not start"; cat "$WORK/feeder.log"; exit 1; }

# Prometheus: the three jobs with the labels their Kubernetes scrape configs would give them.
prom_port=$(free_port)
cat >"$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: budgetsweep-operator
    honor_labels: true
    static_configs: [{targets: ["$feeder_addr"], labels: {pod: budgetsweep-operator-0}}]
  - job_name: budgetsweep-trials
    static_configs:
      - targets: ["127.0.0.1:$trainer_port"]
        labels: {namespace: bsw-dash, pod: dash-t0000-s1, container: trainer}
  - job_name: dcgm-exporter-stand-in
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$dcgm_port"]}]
YAML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_for prometheus "http://127.0.0.1:$prom_port/-/ready"

# Until every query answers (the trainer's first evaluation takes a while; rate() and deriv()
# need a few samples), at most 3 minutes; then report each query.
python3 "$HERE/dashboard_check.py" "$DASHBOARD" "http://127.0.0.1:$prom_port" \
  '{"namespace": "bsw-dash", "sweep": "dash", "trial": "dash-t0000", "pool": "team-a"}'

# Linted once every series exists (dashboard_check.py waited for them).
for endpoint in "trainer http://127.0.0.1:$trainer_port/metrics" "operator http://$feeder_addr/metrics"; do
  read -r name url <<<"$endpoint"
  curl -sf "$url" >"$WORK/$name.prom"
  if ! "$PROMTOOL" check metrics <"$WORK/$name.prom" >"$WORK/$name.lint" 2>&1; then
    echo "FAIL: promtool check metrics on the $name's $url:"; cat "$WORK/$name.lint"; exit 1
  fi
  echo "ok: promtool check metrics: the $name's $(grep -c '^# TYPE' "$WORK/$name.prom") families, no problem"
done
