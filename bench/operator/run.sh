#!/usr/bin/env bash
# The operator under load on the test cluster and its real node: resident memory, and the time
# from a rung value being visible at a trial's metrics endpoint to the kill being issued.
#
#   bench/operator/run.sh                 10 sweeps x 1000 trials, at most 3600 s (root: the node)
#   SWEEPS=2 TRIALS=50 DURATION=60 bench/operator/run.sh     a quick look
#   HOSTILE_SWEEPS=1 OUT=/tmp/x bench/operator/run.sh    and beside them hostile trials (issue 40,
#                                 run_hostile_node.sh): results to /tmp/x.{md,json}
#
# Each sweep runs the curve-trainer image (one GPU a trial, 0.1 s an epoch, rungs 1/3/9,
# parallelism PARALLELISM) as containers on the test node (tests/cluster/node_up.sh, with
# SWEEPS x PARALLELISM nvidia.com/gpu so that every sweep can run at once); budgets are large so
# that maxTrials ends the sweeps. The operator runs on the host and scrapes the pods at their pod
# IPs. The run stops when every sweep has ended or after DURATION seconds, whichever is first; the
# results say which. The node and the control plane are stopped at the end (the node restoring
# the host). Results: bench/results/operator.{md,json}, or OUT.{md,json}.
#
# HOSTILE_SWEEPS=N adds N sweeps (parallelism 1, random search to max, every failure allowed)
# whose trials' metrics endpoints are hostile (curve-trainer --hostile, one of gzip-bomb, big-body
# or label-flood per trial): they run beside the healthy sweeps until those end, and each of their
# trials fails ExitedShort. The healthy sweeps' kill latency and the operator's RSS are measured
# as without them.
#
# Reconcile latency: the operator's own budgetsweep_reconcile_duration_seconds histogram, read from
# its --metrics-addr at the end. Memory: VmRSS every 2 s against the trials created so far.
#
# Kill latency: the fixture prints `visible_at=<unix seconds>` for each epoch right after its
# values are exposed, and appends the same lines (--epoch-log) to a file per trial in a directory
# of this machine that outlives the pod (a hostPath PersistentVolume the script provides); the
# operator's JSON log line for each TrialStopped(RungCutoff) decision is written just before the
# pod's DELETE is sent. Latency = log time - visible_at of the trial's last reported epoch.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SWEEPS=${SWEEPS:-10}
TRIALS=${TRIALS:-1000}
PARALLELISM=${PARALLELISM:-3}
DURATION=${DURATION:-3600}
HOSTILE_SWEEPS=${HOSTILE_SWEEPS:-0}
OUT=${OUT:-$ROOT/bench/results/operator}
[ "$(id -u)" = 0 ] || { echo "bench/operator: the test node needs root" >&2; exit 1; }

make -C "$ROOT" build images >/dev/null
BUILD=$ROOT/build
BSW=$BUILD/operator/cmd/budgetsweep
VERSION=$("$ROOT/scripts/project-version")
# shellcheck source=../../tests/cluster/curve_sweep.sh
. "$ROOT/tests/cluster/curve_sweep.sh"
export BSW_CLUSTER_DIR=$BUILD/test-cluster BSW_IMAGES_DIR=$BUILD/images
"$ROOT/scripts/images.sh" sandbox curve-trainer >/dev/null
eval "$("$ROOT/tests/cluster/up.sh" 2>/dev/null | tail -1)"
BSW_NODE_GPUS=$((SWEEPS * PARALLELISM + HOSTILE_SWEEPS)) "$ROOT/tests/cluster/node_up.sh" >/dev/null
# shellcheck source=/dev/null
. "$BSW_CLUSTER_DIR/node/node.env"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsw-bench-operator.XXXXXX")
EPOCHS=$WORK/epochs # the containers' --epoch-log files (the node is this machine)
mkdir -m 1777 "$EPOCHS"
NS=bench-op-$(printf '%04x' $RANDOM)
k() { kubectl --cache-dir="$WORK/kube-cache" --request-timeout=30s "$@"; }
OP=""
cleanup() {
  set +e
  [ -n "$OP" ] && kill -TERM "$OP" 2>/dev/null && wait "$OP" 2>/dev/null
  k delete namespace "$NS" --wait=false >/dev/null 2>&1
  for pod in $(k -n "$NS" get pods -o name 2>/dev/null); do
    k -n "$NS" patch "$pod" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  done
  k delete pv "$NS-epochs" --wait=false >/dev/null 2>&1
  "$ROOT/tests/cluster/node_down.sh" >/dev/null 2>&1
  "$ROOT/tests/cluster/down.sh" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

k apply -f "$ROOT/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s crd/budgetsweeps.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
# The epoch logs' directory reaches the trials as a volume the cluster's admin (this script)
# provides (node_claim).
node_claim epochs "$EPOCHS" | k apply -f - >/dev/null
METRICS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BSW" operator --namespace "$NS" --metrics-addr "127.0.0.1:$METRICS_PORT" --health-addr 127.0.0.1:0 \
  2>"$WORK/operator.log" &
OP=$!

for i in $(seq 1 "$SWEEPS"); do
  CURVE_VOLUMES="          - {name: epochs, persistentVolumeClaim: {claimName: epochs}}" \
    CURVE_MOUNTS="              - {name: epochs, mountPath: /epochs}" \
    curve_sweep "load-$i" "  budget: {gpuHours: 1000}
  scheduler: {algorithm: asha, mode: stop, seed: $i}
  parallelism: $PARALLELISM
  maxTrials: $TRIALS
  searchSpace:
    lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
    weight-decay: {type: logUniform, min: 1.0e-4, max: 1.0e-1}" \
    '"--seconds-per-epoch=0.1", "--epoch-log=/epochs/$(BUDGETSWEEP_TRIAL).log"'
  echo ---
done | k apply -f - >/dev/null
for i in $(seq 1 "$HOSTILE_SWEEPS"); do
  echo ---
  curve_sweep "hostile-$i" "  budget: {gpuHours: 1000}
  scheduler: {algorithm: random, seed: $i}
  parallelism: 1
  maxTrials: $TRIALS
  maxFailedTrials: $TRIALS
  searchSpace:
    hostile: {type: choice, values: [gzip-bomb, big-body, label-flood]}" '"--seconds-per-epoch=0.5"'
done >"$WORK/hostile.yaml"
[ "$HOSTILE_SWEEPS" -eq 0 ] || k apply -f "$WORK/hostile.yaml" >/dev/null

start=$(date +%s)
: >"$WORK/rss.tsv"
while :; do
  now=$(date +%s)
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$OP/status" 2>/dev/null || echo 0)
  # The healthy sweeps (load-*): the hostile ones only run beside them.
  ended=$(k -n "$NS" get bsw -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase}{"\n"}{end}' |
    grep -cE '^load-[0-9]+ (Completed|BudgetExhausted|Failed)$' || true)
  created=$(k -n "$NS" get bsw -o jsonpath='{range .items[*]}{.metadata.name} {.status.trials.created}{"\n"}{end}' |
    awk '/^load-/ {s += $2} END {print s + 0}')
  printf '%s\t%s\t%s\t%s\n' "$((now - start))" "$rss" "$created" "$ended" >>"$WORK/rss.tsv"
  [ "$ended" -ge "$SWEEPS" ] && break
  [ $((now - start)) -ge "$DURATION" ] && break
  sleep 2
done
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$OP/status")
curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$WORK/metrics.txt" || : >"$WORK/metrics.txt"
elapsed=$(($(date +%s) - start))

hostile_knob=""
[ "$HOSTILE_SWEEPS" -gt 0 ] && hostile_knob=" HOSTILE_SWEEPS=$HOSTILE_SWEEPS"
python3 "$HERE/report.py" --operator-log "$WORK/operator.log" --epoch-logs "$EPOCHS" --namespace "$NS" \
  --rss "$WORK/rss.tsv" --metrics "$WORK/metrics.txt" --hwm-kb "$hwm" --elapsed "$elapsed" --sweeps "$SWEEPS" \
  --trials "$TRIALS" --parallelism "$PARALLELISM" --duration "$DURATION" --hostile-sweeps "$HOSTILE_SWEEPS" \
  --hostile-failures "$(k -n "$NS" get bsw -o jsonpath='{range .items[*]}{.metadata.name} {.status.trials.failed}{"\n"}{end}' |
    awk '/^hostile-/ {s += $2} END {print s + 0}')" \
  --command "SWEEPS=$SWEEPS TRIALS=$TRIALS PARALLELISM=$PARALLELISM DURATION=$DURATION$hostile_knob bench/operator/run.sh" \
  --out "$OUT"
