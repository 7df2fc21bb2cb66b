#!/usr/bin/env bash
# algorithm: pbt on the test cluster's real node, with the operator installed by Helm and SIGKILLed
# once it has exploited (kubelet restarts it). A population of 4 curve-trainer pods, lr and
# weight-decay mutable, pauses every 3 epochs to 9; the trials share a checkpoint volume (a
# PersistentVolumeClaim bound to a static PersistentVolume on the node), as pbt needs:
#   1. the sweep completes within its budget, every trial at epoch 9 (or stopped at its deadline);
#      no decision twice, one trial record per trial, no pod left;
#   2. every exploit in the trial records went on from the donor's snapshot at that epoch: the
#      snapshot is on the volume, and the trial's checkpoint records it as its origin;
#   3. status.best and `budgetsweep report` show the lineage.
# Without KUBECONFIG it skips (exit 77).
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BSW_CLUSTER_DIR:?the test cluster state dir}"
: "${BUDGETSWEEP:?the budgetsweep binary, for its report}"
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
use_test_node

NS=bsw-pbt-$(printf '%04x%04x' $RANDOM $RANDOM)
REL=bsw
# shellcheck source=operator_lib.sh
. "$HERE/operator_lib.sh"
cleanup() {
  set +e
  if [ "$failures" -gt 0 ]; then
    k -n "$NS" get bsw,bswt,pods,pvc -o wide
    k -n "$NS" logs -l app.kubernetes.io/name=budgetsweep --tail=40
    node_pressure
  fi
  "$HELM" uninstall "$REL" -n "$NS" >/dev/null 2>&1
  drop_namespace "$NS"
  k delete pv "$NS-checkpoints" --wait=false >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT

start_operator budgetsweeps.budgetsweep.dev

# ---- the shared checkpoint volume and the population ---------------------------------------
VOLUME=$TMP/checkpoints
mkdir -p "$VOLUME"
chmod 0777 "$VOLUME" # the trainer runs as the chart's non-root user
node_claim checkpoints "$VOLUME" | k apply -f - >/dev/null
# 4 s an epoch: a segment's reservation is 1.25 times its measured run plus the grace period, and
# the trainer's checkpoint and exit after its last value are not priced (the pod's start is), so
# with 2 s epochs a pod that started a second late on a loaded node was stopped at its deadline
# before it exited (a CI run where every segment ended so, and no trial reached epoch 9). Such a
# segment now ends as planned if its trainer exits 0 in the grace period, but not if it is killed.
BUDGET=0.1
CURVE_CHECKPOINTS='persistentVolumeClaim: {claimName: checkpoints}' curve_sweep pop "  budget: {gpuHours: $BUDGET}
  scheduler: {algorithm: pbt, mode: pause, perturbationInterval: 3, seed: 4}
  parallelism: 2
  maxTrials: 4
  searchSpace:
    lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1, mutable: true}
    weight-decay: {type: logUniform, min: 1.0e-4, max: 1.0e-1, mutable: true}" \
  '"--seconds-per-epoch=4"' "            resources: {requests: {cpu: 50m, memory: 64Mi}}" |
  k apply -f - >/dev/null

# ---- SIGKILL the operator once it has exploited -----------------------------------------------
exploits() {
  k -n "$NS" get bswt -o json 2>/dev/null | python3 -c '
import json, sys
print(sum(e.get("event") == "TrialExploited" for i in json.load(sys.stdin)["items"]
          for e in i.get("status", {}).get("events", [])))' || echo 0
}
for _ in $(seq 1 300); do
  [ "$(exploits)" -gt 0 ] && break
  sleep 1
done
# Without an exploit the rest cannot hold: end now, while the test's time is left for its report.
[ "$(exploits)" -gt 0 ] && pass "the operator journaled an exploit" || {
  fail "no exploit within 300 s"
  finish
}
kill_operator 1
[ "$(operator_restarts)" = 1 ] && pass "kubelet restarted the operator" ||
  fail "the operator's restartCount is '$(operator_restarts)' (want 1)"

# ---- 1. the sweep completes, soundly ---------------------------------------------------------
phase=""
for _ in $(seq 1 400); do
  phase=$(field bsw/pop .status.phase)
  case $phase in Completed | BudgetExhausted | Failed) break ;; esac
  sleep 1
done
[ "$phase" = Completed ] && pass "the sweep completed" || fail "the sweep's phase is '$phase'"
created=$(field bsw/pop .status.trials.created)
records=$(k -n "$NS" get bswt -l budgetsweep.dev/sweep=pop -o name | wc -l)
[ "$created" = 4 ] && [ "$records" -eq 4 ] && pass "4 trials created, 4 trial records" ||
  fail "status.trials.created '$created', $records trial records"
left=$(wait_trial_pods_released)
[ "$left" -eq 0 ] && pass "no trial pod is left running or holding its charge" ||
  fail "$left trial pod(s) left running or holding a charge"

# ---- 2. every exploit went on from the donor's snapshot ------------------------------------
k -n "$NS" get bswt,bsw -o json >"$TMP/objects.json"
python3 - "$TMP/objects.json" "$VOLUME" "$BUDGET" >"$TMP/check" <<'PY' && pass "$(cat "$TMP/check")" || fail "$(cat "$TMP/check")"
import json, os, sys
items, volume, budget = json.load(open(sys.argv[1]))["items"], sys.argv[2], float(sys.argv[3])
name = lambda t: f"pop-t{t:04d}"
events = sorted((e for i in items if i["kind"] == "BudgetSweepTrial"
                 for e in i["status"].get("events", [])), key=lambda e: e["seq"])
problems = []
steps = [(e["event"], e["trial"], e["rung"]) for e in events
         if e["event"] in ("TrialExploited", "TrialPromoted")]
if len(steps) != len(set(steps)):
    problems.append("a step was decided twice")
last_exploit = {}
for e in events:
    if e["event"] != "TrialExploited":
        continue
    at = 3 * (e["rung"] + 1)
    snapshot = os.path.join(volume, name(e["donor"]), f"snapshot-{at}.epoch")
    if not os.path.exists(snapshot):
        problems.append(f"no snapshot {snapshot} for {e['message']}")
    last_exploit[e["trial"]] = f"/checkpoints/{name(e['donor'])}@{at}"
for t, origin in last_exploit.items():
    checkpoint = open(os.path.join(volume, name(t), "curve-trainer.epoch")).read().split()
    if checkpoint[1:] != [origin]:
        problems.append(f"{name(t)}'s checkpoint is {checkpoint}, not from {origin}")
# Every trial reached epoch 9, or its pod was stopped at its deadline (a segment's reservation is
# its whole run here, and a pod that starts slowly on a loaded node can outrun it): none is left
# paused or ends for another reason.
at_nine = 0
for t in range(4):
    ended = [e for e in events if e.get("trial") == t and e["event"] == "SegmentEnded"]
    launched = {e["segment"]: e for e in events if e.get("trial") == t
                and e["event"] == "SegmentLaunched"}
    if any(launched[e["segment"]]["until"] == 9 and e["reason"] == "" for e in ended):
        at_nine += 1
    elif not ended or ended[-1]["reason"] != "DeadlineExceeded":
        problems.append(f"{name(t)} did not reach epoch 9: " + ", ".join(
            f"{e['event']} {e.get('segment', e.get('rung', ''))} {e.get('reason', '')} "
            f"{e.get('message', '')}".strip() for e in events if e.get("trial") == t))
if at_nine == 0:
    problems.append("no trial reached epoch 9")
charged = sum(e["devices"] * (e["finished"] - e["started"]) for e in events
              if e["event"] == "SegmentEnded" and e.get("started", 0) > 0)
if charged > budget * 3600:
    problems.append(f"charged {charged:.0f} device-s of a budget of {budget * 3600:.0f}")
if not last_exploit:
    problems.append("no exploit")
print("; ".join(problems) if problems else
      f"{len(last_exploit)} trials exploited, each from a snapshot on the volume; {at_nine} of 4 "
      f"trials at epoch 9, the rest stopped at their deadline; {len(steps)} steps, none twice; "
      f"charged {charged:.0f} of {budget * 3600:.0f} device-s")
sys.exit(1 if problems else 0)
PY

# ---- 3. the lineage in the status and the report -------------------------------------------
best=$(python3 - "$TMP/objects.json" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
best = next(i for i in items if i["kind"] == "BudgetSweep")["status"]["best"]
exploited = {f"pop-t{e['trial']:04d}" for i in items for e in i.get("status", {}).get("events", [])
             if e.get("event") == "TrialExploited"}
lineage = [step["from"] + "@" + str(step["resource"]) for step in best.get("lineage", [])]
print(best["trial"], lineage)
sys.exit(0 if bool(lineage) == (best["trial"] in exploited) else 1)
PY
) && pass "status.best shows its lineage exactly when it was exploited: $best" ||
  fail "status.best: $best"
if "$BUDGETSWEEP" report --kubeconfig "$KUBECONFIG" "$NS/pop" -o "$TMP/report.html" >"$TMP/report.log" 2>&1 &&
  grep -q '<th>went on from</th>' "$TMP/report.html" &&
  python3 - "$TMP/objects.json" "$TMP/report.html" <<'PY'; then
import json, sys
html = open(sys.argv[2]).read()
for i in json.load(open(sys.argv[1]))["items"]:
    for e in i.get("status", {}).get("events", []):
        if e.get("event") == "TrialExploited":
            cell = f"pop-t{e['donor']:04d}@{3 * (e['rung'] + 1)}"
            assert cell in html, f"the report lacks {cell}"
PY
  pass "budgetsweep report shows where each trial went on from"
else
  fail "budgetsweep report: $(tail -3 "$TMP/report.log")"
fi
finish
