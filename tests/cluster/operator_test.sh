#!/usr/bin/env bash
# `budgetsweep operator` on the real test cluster (kube-apiserver, etcd, kube-scheduler,
# kube-controller-manager) and its real node (the node fixture: kubelet, containerd, runc, 4
# nvidia.com/gpu): trial pods are containers of the budgetsweep/curve-trainer image on the pod
# network, scraped by the operator at their pod IPs. What really ran is read from the pods
# themselves: a watch records every pod's uid and container states (started/finished), as the
# kubelet reported them.
#   1. invalid sweeps: rejected by `kubectl apply` with the field named (schema/CEL), or, for
#      what CEL cannot express, condition InvalidSpec; the operator keeps serving other sweeps;
#      a trial pod the node cannot schedule: a TrialsScheduled condition and a Warning event with
#      the scheduler's message, and no charge;
#   2. apply -> the sweep ends; budget used <= budget; no trial pod left; status, conditions,
#      BudgetSweepTrial records and events correct; the charge agrees with what really ran;
#   3. SIGKILL the operator at random moments (>= 10 times) during one sweep, restarting it each
#      time: no trial segment started twice, no orphan pod, charge within the overspend bound;
#   4. the kube-apiserver restarted mid-sweep: the sweep completes;
#   5. the operator down while trials run: the kubelet stops them at their activeDeadlineSeconds
#      (reason DeadlineExceeded, an event from the kubelet), within their reserved shares, so
#      what ran stays within the budget without the operator;
#   6. two replicas with --leader-elect: one acts; SIGKILL the leader, the other takes over.
#
#   eval "$(BSW_CLUSTER_DIR=build/test-cluster tests/cluster/up.sh | tail -1)"
#   BSW_CLUSTER_DIR=build/test-cluster tests/cluster/node_up.sh
#   BUDGETSWEEP=build/operator/cmd/budgetsweep BSW_CLUSTER_DIR=build/test-cluster \
#     tests/cluster/operator_test.sh
# ctest runs it under the cluster and node fixtures (label cluster). Without KUBECONFIG it skips
# (exit 77).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BUDGETSWEEP:?path to budgetsweep}" "${BSW_CLUSTER_DIR:?the test cluster state dir}"
[ -s "$BSW_CLUSTER_DIR/node/node.env" ] || { echo "FAIL no test node (node_fixture.sh up)"; exit 1; }
# shellcheck source=/dev/null
. "$BSW_CLUSTER_DIR/node/node.env"
VERSION=$("$ROOT/scripts/project-version")
# shellcheck source=curve_sweep.sh
. "$HERE/curve_sweep.sh"

RUN_ID=$(printf '%04x%04x' $RANDOM $RANDOM)
NS=bsw-op-$RUN_ID
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsw-operator.XXXXXX")
OPERATOR_PID=""
OPERATOR_PIDS=()
RECORDER_PID=""
failures=0

# shellcheck source=namespace_lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/namespace_lib.sh"
k() { kubectl --cache-dir="$WORK/kube-cache" --request-timeout=30s "$@"; }
pass() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
say() { printf -- '--   %s\n' "$*"; }

cleanup() {
  set +e
  for pid in "${OPERATOR_PIDS[@]}" $OPERATOR_PID; do kill -KILL "$pid" 2>/dev/null; done
  [ -n "$RECORDER_PID" ] && kill -TERM "$RECORDER_PID" 2>/dev/null
  drop_namespace "$NS"
  if [ "$failures" -gt 0 ]; then
    echo "---- operator logs (last 40 lines each) ----"
    for f in "$WORK"/operator-*.log; do echo "== $f"; tail -40 "$f"; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- setup: CRDs, namespace, the pod recorder ---------------------------------------------------
k apply -f "$ROOT/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s \
  crd/budgetsweeps.budgetsweep.dev crd/budgetsweeptrials.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
[ "$(k get node "$BSW_NODE_NAME" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" = 4 ] ||
  { echo "FAIL node $BSW_NODE_NAME does not offer 4 nvidia.com/gpu"; exit 1; }
# Every pod event of the namespace, as kubectl prints it (one JSON object a watch event, its
# first line unindented), to pods.json. A watch that ends (the apiserver restart of scenario 4)
# is started again; its first events re-list the pods.
(
  trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
  while :; do
    kubectl --cache-dir="$WORK/kube-cache" --request-timeout=0 -n "$NS" get pods --watch \
      --output-watch-events -o json >>"$WORK/pods.json" 2>>"$WORK/recorder.log" &
    wait $! || sleep 1
  done
) &
RECORDER_PID=$!

# start_operator NAME [EXTRA FLAGS...]: runs an operator in the background, logs to operator-NAME.
start_operator() {
  local name=$1
  shift
  "$BUDGETSWEEP" operator --namespace "$NS" --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 \
    --resync-interval 0.3 "$@" 2>>"$WORK/operator-$name.log" &
  OPERATOR_PID=$!
}
stop_operator() {
  [ -n "$OPERATOR_PID" ] || return 0
  kill -"${1:-TERM}" "$OPERATOR_PID" 2>/dev/null || true
  wait "$OPERATOR_PID" 2>/dev/null || true
  OPERATOR_PID=""
}

# sweep NAME EXTRA_SPEC [SECONDS_PER_EPOCH]: a curve-trainer sweep on the node, one GPU a trial.
sweep() {
  local name=$1 extra=$2 spe=${3:-0.3}
  curve_sweep "$name" "$extra
  searchSpace:
    lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
    weight-decay: {type: logUniform, min: 1.0e-4, max: 1.0e-1}" "\"--seconds-per-epoch=$spe\"" "" \
    "    maxRetries: 1"
}

field() { k -n "$NS" get bsw "$1" -o "jsonpath={$2}" 2>/dev/null; }

# wait_ended NAME SECONDS: waits for a terminal phase; prints it.
wait_ended() {
  local name=$1 limit=$2 phase=""
  for _ in $(seq 1 $((limit * 2))); do
    phase=$(field "$name" .status.phase)
    case $phase in Completed | BudgetExhausted | Failed) break ;; esac
    kill -0 "$OPERATOR_PID" 2>/dev/null || { echo "operator-died"; return; }
    sleep 0.5
  done
  echo "$phase"
}

# wait_no_pods NAME SECONDS: true once the sweep has no pod left at all.
wait_no_pods() {
  for _ in $(seq 1 $(($2 * 2))); do
    [ -z "$(k -n "$NS" get pods -l "budgetsweep.dev/sweep=$1" -o name 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  return 1
}

# What really ran, from the recorded pod events: the last state seen of each pod uid of sweep NAME,
# with its container's start and finish as the kubelet reported them. Prints "device_seconds
# max_starts pods": the seconds its pods ran (one GPU each) and how often a pod name was started
# (distinct uids).
pod_truth() {
  sleep 2 # the recorder's watch is a moment behind the API
  python3 - "$WORK/pods.json" "$1" <<'PY'
import collections, json, re, sys
from datetime import datetime
events, sweep = sys.argv[1:3]
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
last, uids = {}, collections.defaultdict(set)
for chunk in re.split(r"^(?=\{)", open(events).read(), flags=re.M):
    try:
        pod = json.loads(chunk)["object"]
    except (ValueError, KeyError):
        continue  # a watch cut mid-object
    meta = pod["metadata"]
    if meta.get("labels", {}).get("budgetsweep.dev/sweep") != sweep:
        continue
    uids[meta["name"]].add(meta["uid"])
    last[meta["uid"]] = pod
seconds = 0.0
for pod in last.values():
    for c in pod.get("status", {}).get("containerStatuses", []):
        term = c.get("state", {}).get("terminated")
        if term and term.get("startedAt") and term.get("finishedAt"):
            seconds += t(term["finishedAt"]) - t(term["startedAt"])
print(f"{seconds:.1f} {max((len(u) for u in uids.values()), default=0)} {len(uids)}")
PY
}

# ---- 1. invalid sweeps --------------------------------------------------------------------------
start_operator main
bad=$(sweep bad-range "  budget: {gpuHours: 0.05}" | sed 's/min: 1, max: 9/min: 9, max: 1/')
if out=$(echo "$bad" | k apply -f - 2>&1); then
  fail "a sweep with resource.min > resource.max was accepted"
else
  [[ $out == *spec.resource* ]] && pass "kubectl apply rejects min > max, naming spec.resource" \
    || fail "min > max rejected without naming spec.resource: $out"
fi
# `values` entries must be scalars: the schema cannot say so (see crd_test.sh), the operator does.
sweep not-scalar "  budget: {gpuHours: 0.05}" |
  sed 's/    weight-decay: .*/    batch-size: {type: choice, values: [64, {a: 1}]}/' | k apply -f - >/dev/null
cond=""
for _ in $(seq 1 60); do
  cond=$(field not-scalar '.status.conditions[?(@.type=="InvalidSpec")].status')
  [ "$cond" = True ] && break
  sleep 0.5
done
msg=$(field not-scalar '.status.conditions[?(@.type=="InvalidSpec")].message')
if [ "$cond" = True ] && [[ $msg == *searchSpace.batch-size* ]]; then
  pass "InvalidSpec=True naming the field: $msg"
else
  fail "no InvalidSpec condition naming searchSpace.batch-size (status=$cond message=$msg)"
fi
[ "$(field not-scalar .status.observedGeneration)" = "$(k -n "$NS" get bsw not-scalar -o jsonpath='{.metadata.generation}')" ] &&
  pass "InvalidSpec status carries observedGeneration" || fail "InvalidSpec status lacks observedGeneration"
[ -n "$(k -n "$NS" get events --field-selector reason=InvalidSpec -o name)" ] &&
  pass "a Warning event InvalidSpec was recorded" || fail "no InvalidSpec event"

# A trial pod the node cannot take (5 GPUs on a 4-GPU node): the sweep says why, as the scheduler
# does, in a condition and a Warning event, instead of waiting silently. Deleting it releases
# its pods.
sweep held "  budget: {gpuHours: 0.05}
  parallelism: 1
  maxTrials: 1" | sed 's/    gpus: 1/    gpus: 5/' | k apply -f - >/dev/null
held=""
for _ in $(seq 1 60); do
  held=$(field held '.status.conditions[?(@.type=="TrialsScheduled")].reason')
  [ "$held" = Unschedulable ] && break
  sleep 0.5
done
msg=$(field held '.status.conditions[?(@.type=="TrialsScheduled")].message')
[ "$held" = Unschedulable ] && [[ $msg == "held-t0000: "*"Insufficient nvidia.com/gpu"* ]] &&
  pass "TrialsScheduled=False, Unschedulable: $msg" ||
  fail "no TrialsScheduled condition with the scheduler's message (reason=$held message=$msg)"
[[ $(k -n "$NS" get events --field-selector "involvedObject.name=held,reason=Unschedulable" \
  -o jsonpath='{.items[*].message}') == *"Insufficient nvidia.com/gpu"* ]] &&
  pass "a Warning event Unschedulable names the missing GPUs" || fail "no Unschedulable event on the sweep"
[ "$(field held .status.budget.used)" = 0 ] && pass "a pod that never started is not charged" ||
  fail "held sweep charged $(field held .status.budget.used) GPU-h"
k -n "$NS" delete bsw held --wait=false >/dev/null
wait_no_pods held 30 && pass "the held sweep's pod went with it" || fail "pods left (held)"

# ---- 2. a sweep runs to its end -----------------------------------------------------------------
sweep basic "  budget: {gpuHours: 0.02}
  scheduler: {algorithm: asha, mode: stop, seed: 3}
  parallelism: 3
  maxTrials: 9" | k apply -f - >/dev/null
phase=$(wait_ended basic 180)
kill -0 "$OPERATOR_PID" 2>/dev/null && pass "the operator survived the invalid sweep" ||
  fail "the operator died"
case $phase in
  Completed | BudgetExhausted) pass "sweep basic ended: $phase" ;;
  *) fail "sweep basic did not end within 180 s (phase '$phase')" ;;
esac
used=$(field basic .status.budget.used)
used=${used:-nan}
python3 -c "import sys; sys.exit(0 if float('$used') <= 0.02 else 1)" &&
  pass "budget used $used <= 0.02 GPU-h" || fail "budget used $used > 0.02 GPU-h"
wait_no_pods basic 30 && pass "no trial pod left (released and deleted)" ||
  fail "trial pods left: $(k -n "$NS" get pods -l budgetsweep.dev/sweep=basic -o name | tr '\n' ' ')"
created=$(field basic .status.trials.created)
created=${created:-0}
records=$(k -n "$NS" get bswt -l budgetsweep.dev/sweep=basic -o name | wc -l)
[ "$created" -ge 1 ] && [ "$records" -eq "$created" ] &&
  pass "$records BudgetSweepTrial records for $created trials" ||
  fail "BudgetSweepTrial records $records != trials created $created"
gen=$(k -n "$NS" get bsw basic -o jsonpath='{.metadata.generation}')
conds=$(k -n "$NS" get bsw basic -o json | python3 -c '
import json, sys
s = json.load(sys.stdin).get("status", {})
print(" ".join("%s=%s@%s" % (c["type"], c["status"], c.get("observedGeneration")) for c in s.get("conditions", [])))')
[[ $conds == *"@$gen"* ]] && [[ $conds != *"@None"* ]] &&
  pass "conditions carry observedGeneration $gen: $conds" || fail "conditions: $conds"
reasons=$(k -n "$NS" get events --field-selector "involvedObject.name=basic" \
  -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' | sort -u | tr '\n' ' ')
[[ $reasons == *TrialStarted* ]] && [[ $reasons == *TrialStopped* || $reasons == *TrialPromoted* ]] &&
  [[ $reasons == *SweepCompleted* || $reasons == *BudgetExhausted* ]] &&
  pass "events: $reasons" || fail "events missing (got: $reasons)"
read -r ran max_starts npods <<<"$(pod_truth basic)"
python3 - "$ran" "$used" "$npods" <<'PY' && pass "charge $used GPU-h matches what ran ($ran device-s, $npods pods)" ||
import sys
ran, used, pods = float(sys.argv[1]), float(sys.argv[2]) * 3600, int(sys.argv[3])
# Status rounds to 0.001 GPU-h (3.6 s); API times have one-second resolution, per pod.
sys.exit(0 if pods > 0 and abs(ran - used) <= 3.6 + pods else 1)
PY
  fail "charge $used GPU-h does not match what ran ($ran device-s)"
[ "$max_starts" -le 1 ] && pass "$npods pods, each started once" || fail "a pod was started $max_starts times"

# ---- 3. SIGKILL the operator at random moments --------------------------------------------------
sweep crashy "  budget: {gpuHours: 0.03}
  scheduler: {algorithm: asha, mode: stop, seed: 11}
  parallelism: 4
  maxTrials: 16" 0.4 | k apply -f - >/dev/null
kills=0
for i in $(seq 1 40); do
  sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
  stop_operator KILL
  kills=$((kills + 1))
  start_operator "crash"
  [ "$kills" -ge 12 ] && break
done
phase=$(wait_ended crashy 240)
[ "$kills" -ge 10 ] && pass "operator SIGKILLed $kills times" || fail "only $kills kills"
case $phase in
  Completed | BudgetExhausted) pass "sweep crashy ended after the kills: $phase" ;;
  *) fail "sweep crashy did not end (phase '$phase')" ;;
esac
wait_no_pods crashy 30 && pass "no orphan pod after the kills" ||
  fail "pods left: $(k -n "$NS" get pods -l budgetsweep.dev/sweep=crashy -o name | tr '\n' ' ')"
read -r ran max_starts npods <<<"$(pod_truth crashy)"
[ "$max_starts" -le 1 ] && pass "no duplicate: $npods pods, each started once" ||
  fail "a trial pod was started $max_starts times"
dups=$(k -n "$NS" get bswt -l budgetsweep.dev/sweep=crashy -o json | python3 -c '
import json, sys, collections
n = 0
for item in json.load(sys.stdin)["items"]:
    c = collections.Counter(e["segment"] for e in item["status"]["events"] if e["event"] == "SegmentLaunched")
    n += sum(v - 1 for v in c.values())
print(n)')
[ "$dups" -eq 0 ] && pass "no segment launched twice in the records" || fail "$dups duplicate launches"
used=$(field crashy .status.budget.used)
used=${used:-nan}
# The overspend bound (docs/design.md, "Budget invariants"): (grace period + one resync) x running GPUs, here (2 + 0.3) s x 4.
python3 - "$ran" "$used" "$npods" <<'PY' && pass "charge within the bound (used $used GPU-h, ran $ran device-s, $npods pods)" ||
import sys
ran, used, pods = float(sys.argv[1]), float(sys.argv[2]) * 3600, int(sys.argv[3])
bound = 0.03 * 3600 + (2 + 0.3) * 4
# Nothing lost across the kills: what is charged is what ran (rounding as above).
sys.exit(0 if pods > 0 and ran <= bound and used <= bound and abs(ran - used) <= 3.6 + pods else 1)
PY
  fail "charge out of bounds: used $used GPU-h, ran $ran device-s"

# ---- 4. kube-apiserver restarted mid-sweep ------------------------------------------------------
sweep restart "  budget: {gpuHours: 0.02}
  scheduler: {algorithm: asha, mode: stop, seed: 5}
  parallelism: 3
  maxTrials: 6" 0.5 | k apply -f - >/dev/null
sleep 4
(
  # shellcheck source=lib.sh
  . "$HERE/lib.sh"
  stop_comp kube-apiserver
)
sleep 3
"$HERE/up.sh" >/dev/null 2>"$WORK/up.log" || fail "up.sh could not restart the apiserver"
phase=$(wait_ended restart 240)
case $phase in
  Completed | BudgetExhausted) pass "sweep restart ended after an apiserver restart: $phase" ;;
  *)
    fail "sweep restart did not end after the apiserver restart (phase '$phase')"
    # Why, from the journal: how each segment ended and how the sweep finished.
    grep -h "\"sweep\":\"$NS/restart\"" "$WORK"/operator-*.log |
      grep -E '"event":"(SegmentEnded|TrialStopped|SweepFinished)"' | tail -20 || true
    ;;
esac
wait_no_pods restart 30 && pass "no pod left after the apiserver restart" || fail "pods left (restart)"

# ---- 5. the operator down while trials run ------------------------------------------------------
# Each trial would need 9 x 3 s; the first trials get an equal share of the budget (0.01 GPU-h /
# 3 = 12 s each), so only activeDeadlineSeconds can stop them while the operator is away.
sweep unattended "  budget: {gpuHours: 0.01}
  scheduler: {algorithm: asha, mode: stop, seed: 9}
  parallelism: 3
  maxTrials: 3" 3 | k apply -f - >/dev/null
for _ in $(seq 1 60); do
  [ "$(k -n "$NS" get pods -l budgetsweep.dev/sweep=unattended -o name | wc -l)" -ge 3 ] && break
  sleep 0.5
done
stop_operator KILL
say "operator killed; waiting for the pods to end on their own"
ended=0
for _ in $(seq 1 120); do
  phases=$(k -n "$NS" get pods -l budgetsweep.dev/sweep=unattended -o jsonpath='{.items[*].status.phase}')
  if [ -n "$phases" ] && ! [[ $phases =~ Running|Pending ]]; then ended=1; break; fi
  sleep 0.5
done
[ "$ended" -eq 1 ] && pass "pods ended without the operator: $phases" || fail "pods still running: $phases"
reasons=$(k -n "$NS" get pods -l budgetsweep.dev/sweep=unattended -o jsonpath='{.items[*].status.reason}')
[[ $reasons == *DeadlineExceeded* ]] && pass "stopped by activeDeadlineSeconds ($reasons)" ||
  fail "pods were not stopped by their deadline (reasons: $reasons)"
by=$(k -n "$NS" get events --field-selector reason=DeadlineExceeded \
  -o jsonpath='{range .items[*]}{.involvedObject.name}={.source.component}/{.source.host}{" "}{end}')
[[ $by == *unattended-t*"=kubelet/$BSW_NODE_NAME"* ]] && pass "the kubelet ended them: $by" ||
  fail "no DeadlineExceeded event from the kubelet of $BSW_NODE_NAME (got: $by)"
read -r ran _ _ <<<"$(pod_truth unattended)"
python3 -c "import sys; sys.exit(0 if $ran <= 0.01 * 3600 + 2 * 3 + 3 else 1)" &&
  pass "what ran without the operator ($ran device-s) is within the budget (36 s + grace)" ||
  fail "ran $ran device-s without the operator, over the budget"
start_operator main
phase=$(wait_ended unattended 60)
[[ $phase == BudgetExhausted || $phase == Completed ]] && pass "the operator came back and closed it: $phase" ||
  fail "sweep unattended phase '$phase' after the operator came back"
wait_no_pods unattended 30 && pass "the finished pods were released" || fail "pods left (unattended)"
stop_operator TERM

# ---- 6. two replicas, leader election -----------------------------------------------------------
sweep elected "  budget: {gpuHours: 0.02}
  scheduler: {algorithm: asha, mode: stop, seed: 13}
  parallelism: 3
  maxTrials: 9" 0.5 | k apply -f - >/dev/null
start_operator a --leader-elect --lease-name "op-$RUN_ID"
pid_a=$OPERATOR_PID
OPERATOR_PIDS+=("$pid_a")
sleep 1
start_operator b --leader-elect --lease-name "op-$RUN_ID"
pid_b=$OPERATOR_PID
OPERATOR_PIDS+=("$pid_b")
sleep 5
started_a=$(grep -c '"event":"operator_started"' "$WORK/operator-a.log" || true)
started_b=$(grep -c '"event":"operator_started"' "$WORK/operator-b.log" || true)
[ "$started_a" -eq 1 ] && [ "$started_b" -eq 0 ] && pass "only the leader (a) acts" ||
  fail "leaders: a=$started_a b=$started_b"
kill -KILL "$pid_a"
t0=$(date +%s)
took=""
for _ in $(seq 1 90); do
  if grep -q '"event":"operator_started"' "$WORK/operator-b.log"; then took=$(($(date +%s) - t0)); break; fi
  sleep 0.5
done
[ -n "$took" ] && [ "$took" -le 35 ] && pass "replica b took over ${took} s after the leader was killed" ||
  fail "replica b did not take over within 35 s"
OPERATOR_PID=$pid_b
phase=$(wait_ended elected 180)
case $phase in
  Completed | BudgetExhausted) pass "sweep elected ended under the new leader: $phase" ;;
  *) fail "sweep elected did not end (phase '$phase')" ;;
esac
stop_operator TERM

echo
if [ "$failures" -gt 0 ]; then
  echo "FAILED: $failures check(s)"
  exit 1
fi
echo "PASSED"
