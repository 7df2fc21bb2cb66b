#!/usr/bin/env bash
# The operator under load on the test cluster: resident memory, and the time from a rung value
# being visible at a trial's metrics endpoint to the kill being issued.
#
#   bench/operator/run.sh                 10 sweeps x 1000 trials, at most 600 s
#   SWEEPS=2 TRIALS=50 DURATION=60 bench/operator/run.sh     a quick look
#
# Each sweep runs the curve-trainer fixture (one GPU a trial, 0.1 s an epoch, rungs 1/3/9,
# parallelism PARALLELISM) on nodes of a node agent; budgets are large so that maxTrials ends the
# sweeps. The run stops when every sweep has ended or after DURATION seconds, whichever is first;
# the results say which. Results: bench/results/operator.{md,json}.
#
# Reconcile latency: the operator's own budgetsweep_reconcile_duration_seconds histogram, read from
# its --metrics-addr at the end. Memory: VmRSS every 2 s against the trials created so far.
#
# Kill latency: the fixture prints `visible_at=<unix seconds>` for each epoch right after its
# values are exposed; the operator's JSON log line for each TrialStopped(RungCutoff) decision is
# written just before the pod's DELETE is sent. Latency = log time - visible_at of the trial's
# last reported epoch.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SWEEPS=${SWEEPS:-10}
TRIALS=${TRIALS:-1000}
PARALLELISM=${PARALLELISM:-3}
DURATION=${DURATION:-600}

make -C "$ROOT" build >/dev/null
BUILD=$ROOT/build
BSW=$BUILD/operator/cmd/budgetsweep
AGENT=$BUILD/tests/cluster/node-agent/bsw-node-agent
CURVE=$BUILD/tests/fixtures/curve-trainer/curve-trainer
export BSW_CLUSTER_DIR=$BUILD/test-cluster
eval "$("$ROOT/tests/cluster/up.sh" 2>/dev/null | tail -1)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsw-bench-operator.XXXXXX")
NS=bench-op-$(printf '%04x' $RANDOM)
k() { kubectl --cache-dir="$WORK/kube-cache" --request-timeout=30s "$@"; }
OP=""
AGENT_PID=""
cleanup() {
  set +e
  [ -n "$OP" ] && kill -TERM "$OP" 2>/dev/null && wait "$OP" 2>/dev/null
  k delete namespace "$NS" --wait=false >/dev/null 2>&1
  for pod in $(k -n "$NS" get pods -o name 2>/dev/null); do
    k -n "$NS" patch "$pod" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  done
  [ -n "$AGENT_PID" ] && kill -TERM "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
  "$ROOT/tests/cluster/down.sh" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

k apply -f "$ROOT/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s crd/budgetsweeps.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
"$AGENT" --nodes 4 --gpus-per-node 16 --node-prefix "bench-$NS" --node-label "bench=$NS" \
  --address-base 127.90.0.10 --work-dir "$WORK/agent" 2>"$WORK/agent.log" &
AGENT_PID=$!
METRICS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BSW" operator --namespace "$NS" --metrics-addr "127.0.0.1:$METRICS_PORT" --health-addr 127.0.0.1:0 \
  --checkpoint-dir "$WORK/checkpoints" 2>"$WORK/operator.log" &
OP=$!

for i in $(seq 1 "$SWEEPS"); do
  cat <<YAML
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata: {name: load-$i, namespace: $NS}
spec:
  budget: {gpuHours: 1000}
  objective: {metric: validation_accuracy, goal: maximize}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: $i}
  parallelism: $PARALLELISM
  maxTrials: $TRIALS
  searchSpace:
    lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
    weight-decay: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
  trial:
    gpus: 1
    template:
      spec:
        terminationGracePeriodSeconds: 2
        nodeSelector: {bench: "$NS"}
        containers:
          - name: trainer
            image: curve-trainer
            command: ["$CURVE"]
            args: ["--seconds-per-epoch=0.1"]
---
YAML
done | k apply -f - >/dev/null

start=$(date +%s)
: >"$WORK/rss.tsv"
while :; do
  now=$(date +%s)
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$OP/status" 2>/dev/null || echo 0)
  ended=$(k -n "$NS" get bsw -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' |
    grep -cE '^(Completed|BudgetExhausted|Failed)$' || true)
  created=$(k -n "$NS" get bsw -o jsonpath='{range .items[*]}{.status.trials.created}{"\n"}{end}' |
    awk '{s += $1} END {print s + 0}')
  printf '%s\t%s\t%s\t%s\n' "$((now - start))" "$rss" "$created" "$ended" >>"$WORK/rss.tsv"
  [ "$ended" -ge "$SWEEPS" ] && break
  [ $((now - start)) -ge "$DURATION" ] && break
  sleep 2
done
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$OP/status")
curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$WORK/metrics.txt" || : >"$WORK/metrics.txt"
elapsed=$(($(date +%s) - start))

python3 "$HERE/report.py" --operator-log "$WORK/operator.log" --pod-logs "$WORK/agent/logs" \
  --rss "$WORK/rss.tsv" --metrics "$WORK/metrics.txt" --hwm-kb "$hwm" --elapsed "$elapsed" --sweeps "$SWEEPS" \
  --trials "$TRIALS" --parallelism "$PARALLELISM" --duration "$DURATION" \
  --command "SWEEPS=$SWEEPS TRIALS=$TRIALS PARALLELISM=$PARALLELISM DURATION=$DURATION bench/operator/run.sh" \
  --out "$ROOT/bench/results/operator"
