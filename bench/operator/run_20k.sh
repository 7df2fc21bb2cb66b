#!/usr/bin/env bash
# A 20,000-trial sweep (bench/operator/sweep_20k.yaml), in core and on the test cluster.
#
#   bench/operator/run_20k.sh                 20,000 trials: about 25 min, 20 of them recording
#   TRIALS=2000 bench/operator/run_20k.sh     a quick look
#
# 1. Core: sweep_sim_bench runs the whole sweep through the planner on a simulated clock (one pass
#    every 2 simulated seconds, parallelism 32, 1% of segments crash): wall time, events, peak RSS.
#    Its journal is kept.
# 2. Cluster: the control plane of tests/cluster (no node: no pod of this sweep ever runs), in its
#    own state directory, purged at the end. The BudgetSweep object is created, then replay_sweep
#    records the journal's events through kube::TrialLog, as the operator would have recorded them
#    while running the sweep (one BudgetSweepTrial object per trial), all but the last event
#    (SweepFinished): the prefix an operator killed just before it decided the end leaves. It
#    writes the sweep's status as the operator publishes it.
# 3. The operator (budgetsweep operator --namespace NS, on the host) is started on that: the time
#    from its start to the log line of its first decision on the sweep (the SweepFinished it must
#    now decide, from the whole history), its RSS peak (VmHWM, sampled until SETTLE seconds after
#    the decision), and the BudgetSweep object's size (`kubectl get -o json`, and its status)
#    before and after the operator's own status write.
#
# Knobs: TRIALS (20000), SETTLE (10 s), BUILD_DIR (build), OPERATOR (the budgetsweep binary to
# measure; default the build's), KEEP_CLUSTER=1 (leave the cluster and the namespace up, for a
# rerun of step 3 with NAMESPACE=<it>: steps 1 and 2 are skipped, and the SweepFinished the last
# operator decided is taken back out of the sweep's history first).
# Results: appended to bench/results/operator.md.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TRIALS=${TRIALS:-20000}
SETTLE=${SETTLE:-10}
BUILD=${BUILD_DIR:-$ROOT/build}
NAMESPACE=${NAMESPACE:-}
KEEP_CLUSTER=${KEEP_CLUSTER:-0}
SWEEP=sweep-20k
export BSW_CLUSTER_DIR=${BSW_CLUSTER_DIR:-$BUILD/test-cluster-20k}

cmake --build "$BUILD" -j2 --target budgetsweep sweep_sim_bench replay_sweep >/dev/null
BSW=${OPERATOR:-$BUILD/operator/cmd/budgetsweep}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsw-bench-20k.XXXXXX")
k() { kubectl --cache-dir="$WORK/kube-cache" --request-timeout=60s "$@"; }
OP=""
cleanup() {
  set +e
  [ -n "$OP" ] && kill -TERM "$OP" 2>/dev/null && wait "$OP" 2>/dev/null
  [ "$KEEP_CLUSTER" = 1 ] || "$ROOT/tests/cluster/down.sh" --purge >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "$NAMESPACE" ]; then
  "$BUILD/bench/operator/sweep_sim_bench" --sweep="$HERE/sweep_20k.yaml" --trials="$TRIALS" \
    --journal-dir="$WORK/journal" >"$WORK/sim.json"
  cat "$WORK/sim.json" >&2
fi

eval "$("$ROOT/tests/cluster/up.sh" 2>/dev/null | tail -1)"
if [ -z "$NAMESPACE" ]; then
  NAMESPACE=bench-20k-$(printf '%04x' $RANDOM)
  k apply -f "$ROOT/crds/" >/dev/null
  k wait --for=condition=Established --timeout=60s crd/budgetsweeps.budgetsweep.dev \
    crd/budgetsweeptrials.budgetsweep.dev >/dev/null
  k create namespace "$NAMESPACE" >/dev/null
  python3 - "$HERE/sweep_20k.yaml" "$TRIALS" <<'PY' | k -n "$NAMESPACE" apply -f - >/dev/null
import json, sys, yaml
sweep = yaml.safe_load(open(sys.argv[1]))
sweep["spec"]["maxTrials"] = sweep["spec"]["maxFailedTrials"] = int(sys.argv[2])
print(json.dumps(sweep))
PY
  journal=$WORK/journal/journal.jsonl
  tail -1 "$journal" | grep -q '"event":"SweepFinished"' || { echo "the journal does not end the sweep" >&2; exit 1; }
  "$BUILD/bench/operator/replay_sweep" --namespace="$NAMESPACE" --sweep="$SWEEP" \
    --journal="$journal" --events=$(($(wc -l <"$journal") - 1)) >"$WORK/replay.json"
  cat "$WORK/replay.json" >&2
else
  # A rerun: the SweepFinished the last operator decided is taken back out of the history.
  k -n "$NAMESPACE" get bsw "$SWEEP" -o json | python3 -c '
import json, sys
events = json.load(sys.stdin)["status"].get("sweepEvents", [])
print(json.dumps({"status": {"sweepEvents": [e for e in events if e["event"] != "SweepFinished"]}}))' \
    >"$WORK/undo.json"
  k -n "$NAMESPACE" patch bsw "$SWEEP" --subresource=status --type=merge --patch-file="$WORK/undo.json" >/dev/null
  echo '{}' >"$WORK/sim.json"
  echo '{}' >"$WORK/replay.json"
fi
[ "$KEEP_CLUSTER" = 1 ] && echo "cluster kept; namespace $NAMESPACE" >&2

trial_records=$(k get --raw "/apis/budgetsweep.dev/v1alpha1/namespaces/$NAMESPACE/budgetsweeptrials?limit=1" |
  python3 -c 'import json, sys; l = json.load(sys.stdin); print(len(l["items"]) + l["metadata"].get("remainingItemCount", 0))')
k -n "$NAMESPACE" get bsw "$SWEEP" -o json >"$WORK/before.json"

"$BSW" operator --namespace "$NAMESPACE" --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 \
  2>"$WORK/operator.log" &
OP=$!
start=$(date +%s.%N)
: >"$WORK/rss.tsv"
decided=""
while kill -0 "$OP" 2>/dev/null; do
  awk -v t="$(date +%s.%N)" '/^VmRSS:/ {print t - '"$start"' "\t" $2}' "/proc/$OP/status" >>"$WORK/rss.tsv" || true
  if [ -z "$decided" ] && grep -q '"event":"decision"' "$WORK/operator.log"; then
    decided=$(date +%s.%N)
  fi
  if [ -n "$decided" ] && awk -v a="$decided" -v b="$(date +%s.%N)" -v s="$SETTLE" 'BEGIN { exit !(b - a >= s) }'; then
    break
  fi
  if awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { exit !(b - a >= 300) }'; then
    echo "no decision within 300 s" >&2
    break
  fi
  sleep 0.1
done
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$OP/status")
kill -TERM "$OP"
wait "$OP" || true
OP=""
k -n "$NAMESPACE" get bsw "$SWEEP" -o json >"$WORK/after.json"

command="bench/operator/run_20k.sh"
[ "$TRIALS" = 20000 ] || command="TRIALS=$TRIALS $command"
[ -z "${OPERATOR:-}" ] || command="OPERATOR=$OPERATOR $command"
python3 "$HERE/report_20k.py" --sim "$WORK/sim.json" --replay "$WORK/replay.json" \
  --before "$WORK/before.json" --after "$WORK/after.json" --operator-log "$WORK/operator.log" \
  --start "$start" --hwm-kb "$hwm" --rss "$WORK/rss.tsv" --trial-records "$trial_records" \
  --command "$command" --out "$ROOT/bench/results/operator.md"
