#!/usr/bin/env bash
# `algorithm: hyperband` with real trial processes, in stop and pause mode. Rungs 1, 3 and 9 with
# η 3 make three brackets of sizes 9, 5 and 3, dealt in turn (smooth weighted round robin, the
# oracle below): a trial of bracket b is judged first at rung b, so in pause mode its first segment
# ends there, and in stop mode no rung below b stops it; bracket 2 runs its trials to the end. Both
# sweeps complete within their budget, and the verdicts are journaled, never decided twice across a
# kill -9 of the runner.
source "$(dirname "$0")/lib.sh"

run_sweep() {
  local name=$1 mode=$2 kill_at_verdict=${3:-}
  curve_sweep "$WORK/$name.yaml" "$name" "  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: hyperband, mode: $mode, seed: 5}
  parallelism: 2
  maxTrials: 9" "--seconds-per-epoch=0.1"
  if [ -n "$kill_at_verdict" ]; then kill_at_event "$name" RungVerdict; fi
  run_completed_sweep "$name" 9 9
  cat "$WORK/$name.json"
  [ "$(json_get "$WORK/$name.json" '[r["bracketTrials"] for r in s["rungs"]]')" = "[5, 2, 2]" ] \
    || fail "$name: status does not count 5, 2 and 2 trials in the brackets"
}

# Checks a sweep's journal against its brackets (STATE_DIR MODE).
check_brackets() {
  python3 - "$1" "$2" <<'PY'
import json, os, sys
state, mode = sys.argv[1], sys.argv[2]
rungs, sizes = [1, 3, 9], [9, 5, 3]
credit, cycle = [0] * 3, []
for _ in range(sum(sizes)):
    credit = [c + n for c, n in zip(credit, sizes)]
    b = max(range(3), key=lambda i: (credit[i], -i))
    credit[b] -= sum(sizes)
    cycle.append(b)
bracket = lambda trial: cycle[trial % len(cycle)]
events = [json.loads(l) for l in open(os.path.join(state, "journal.jsonl")) if l.strip()]
trials = sorted({e["trial"] for e in events if e["event"] == "TrialCreated"})
print("brackets:", [bracket(t) for t in trials])
assert {bracket(t) for t in trials} == {0, 1, 2}, "not every bracket got a trial"
first = {e["trial"]: e["until"] for e in events
         if e["event"] == "SegmentLaunched" and e["segment"] == 0}
verdicts = [e for e in events if e["event"] == "RungVerdict"]
for t in trials:
    want = rungs[bracket(t)] if mode == "pause" else 9
    assert first[t] == want, f"trial {t} (bracket {bracket(t)}) first ran to {first[t]}, not {want}"
for v in verdicts:
    assert v["rung"] >= bracket(v["trial"]), f"trial {v['trial']} judged below its bracket: {v}"
completed = {e["trial"] for e in events if e["event"] == "SegmentEnded" and e["reason"] == ""
             and any(l["trial"] == e["trial"] and l["segment"] == e["segment"] and l["until"] == 9
                     for l in events if l["event"] == "SegmentLaunched")}
for t in trials:
    if bracket(t) == 2:
        assert t in completed, f"trial {t} of the last bracket did not run to the end"
if mode == "stop":
    assert any(v["verdict"] == "Stop" for v in verdicts), "no stop verdict journaled"
    judged = {(v["trial"], v["rung"]) for v in verdicts}
    for t in trials:
        if bracket(t) < 2:
            assert (t, bracket(t)) in judged, f"trial {t} has no verdict at rung {bracket(t)}"
else:
    promoted = [e for e in events if e["event"] == "TrialPromoted"]
    assert promoted, "nothing promoted"
    for p in promoted:
        assert p["rung"] >= bracket(p["trial"]), f"promoted below its bracket: {p}"
decided = [(e["event"], e["trial"], e["rung"]) for e in events
           if e["event"] in ("RungVerdict", "TrialPromoted")]
assert len(decided) == len(set(decided)), "a verdict or promotion was decided twice"
print(f"{len(trials)} trials, {len(verdicts)} verdicts, {len(completed)} completed")
PY
}

# Killed with -9 once it has judged someone, then run again on the same state: nothing is decided
# twice.
run_sweep hb-stop stop kill
check_brackets "$WORK/hb-stop" stop || fail "hb-stop: brackets"
run_sweep hb-pause pause
check_brackets "$WORK/hb-pause" pause || fail "hb-pause: brackets"
assert_no_trial_processes
