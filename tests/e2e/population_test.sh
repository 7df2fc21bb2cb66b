#!/usr/bin/env bash
# `algorithm: pbt` and `pb2` with real trial processes: a population of 4 curve-trainers with lr
# and weight-decay mutable, paused every epoch to 6. Every exploit is carried out as journaled:
# the donor kept a snapshot at the pause, the trial's next segment runs with the exploit's
# parameters and starts from that snapshot (its trainer says so), and a later segment resumes from
# its own checkpoint. The pbt sweep is killed with -9 once it has exploited and run again on the
# same state: no decision is made twice. The status and the report show the lineage.
source "$(dirname "$0")/lib.sh"

run_population() {
  local name=$1 algorithm=$2 kill_at_exploit=${3:-}
  curve_sweep "$WORK/$name.yaml" "$name" "  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 6}
  scheduler: {algorithm: $algorithm, mode: pause, seed: 3}
  parallelism: 2
  maxTrials: 4" "--seconds-per-epoch=0.1"
  sed -i -e 's/^\(    lr: {.*\)}$/\1, mutable: true}/' -e 's/^\(    weight-decay: {.*\)}$/\1, mutable: true}/' \
    "$WORK/$name.yaml"
  grep -q 'lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1, mutable: true}' "$WORK/$name.yaml" \
    || fail "$name: lr is not mutable in the spec"
  if [ -n "$kill_at_exploit" ]; then kill_at_event "$name" TrialExploited; fi
  run_completed_sweep "$name" 4 6
  check_population "$WORK/$name" || fail "$name: population"
  "$BSW" report "$WORK/$name" -o "$WORK/$name.html" >/dev/null || fail "$name: report failed"
  python3 - "$WORK/$name" "$WORK/$name.html" "$WORK/$name.json" <<'PY' || fail "$name: report or status lacks the lineage"
import json, os, sys
state, html, status = sys.argv[1], open(sys.argv[2]).read(), json.load(open(sys.argv[3]))
events = [json.loads(l) for l in open(os.path.join(state, "journal.jsonl")) if l.strip()]
names = {e["trial"]: f"{os.path.basename(state)}-t{e['trial']:04d}" for e in events
         if e["event"] == "TrialCreated"}
assert "<th>went on from</th>" in html, "no lineage column"
for e in events:
    if e["event"] == "TrialExploited":
        cell = f"{names[e['donor']]}@{e['rung'] + 1}"
        assert cell in html, f"report lacks {cell}"
best = status["best"]
exploited = {e["trial"] for e in events if e["event"] == "TrialExploited"}
best_index = next(i for i, n in names.items() if n == best["trial"])
assert ("lineage" in best) == (best_index in exploited), f"status.best.lineage: {best}"
print("report and status show the lineage; best", best["trial"], best.get("lineage", "(own line)"))
PY
}

# Checks every exploit of a sweep (STATE_DIR) against what its trainers did.
check_population() {
  python3 - "$1" <<'PY'
import json, os, re, sys
state = sys.argv[1]
events = [json.loads(l) for l in open(os.path.join(state, "journal.jsonl")) if l.strip()]
trials_dir = os.path.join(state, "trials")
name = lambda t: f"{os.path.basename(state)}-t{t:04d}"
params = {e["trial"]: dict(e["params"]) for e in events if e["event"] == "TrialCreated"}
exploits = 0
for i, e in enumerate(events):
    if e["event"] != "TrialExploited":
        continue
    exploits += 1
    t, donor, at = e["trial"], e["donor"], e["rung"] + 1
    new = dict(e["params"])
    assert new["batch-size"] == params[donor]["batch-size"], f"{e}: not the donor's batch-size"
    snapshot = os.path.join(trials_dir, name(donor), "checkpoint", f"snapshot-{at}.epoch")
    assert os.path.exists(snapshot), f"{e}: the donor kept no {snapshot}"
    launch = next(l for l in events[i:] if l["event"] == "SegmentLaunched" and l["trial"] == t)
    assert launch["from"] == at and launch["until"] == at + 1, f"{e}: then {launch}"
    seg = os.path.join(trials_dir, name(t), f"seg-{launch['segment']}")
    argv = json.load(open(os.path.join(seg, "launch.json")))["argv"]
    lr = next(float(a.split("=", 1)[1]) for a in argv if a.startswith("--lr="))
    assert abs(lr - new["lr"]) <= 1e-12 * new["lr"], f"{e}: ran with --lr={lr}"
    log = open(os.path.join(seg, "trainer.log")).read()
    assert f"exploited {snapshot} at epoch {at}" in log, f"{e}: its trainer did not start there:\n{log}"
    # Its next segment, unless that one follows another exploit.
    after = events[events.index(launch) + 1:]
    later = [l for l in after if l.get("trial") == t and l["event"] in ("SegmentLaunched", "TrialExploited")]
    if later and later[0]["event"] == "SegmentLaunched":
        log = open(os.path.join(trials_dir, name(t), f"seg-{later[0]['segment']}", "trainer.log")).read()
        assert "exploited" not in log, f"{e}: the next segment started from the snapshot again"
    params[t] = new
decided = [(e["event"], e["trial"], e["rung"]) for e in events
           if e["event"] in ("TrialExploited", "TrialPromoted")]
assert len(decided) == len(set(decided)), "a step was decided twice"
assert exploits > 0, "nothing exploited"
completed = {e["trial"] for e in events if e["event"] == "SegmentEnded" and e["reason"] == ""
             and any(l["event"] == "SegmentLaunched" and l["trial"] == e["trial"]
                     and l["segment"] == e["segment"] and l["until"] == 6 for l in events)}
assert completed == set(params), f"only {sorted(completed)} reached epoch 6"
print(f"{exploits} exploits, {len(decided)} steps, {len(completed)} trials at epoch 6")
PY
}

run_population pbt-local pbt kill
run_population pb2-local pb2
assert_no_trial_processes
