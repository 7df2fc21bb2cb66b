#!/usr/bin/env bash
# Issue 40: the counts a sweep ends with are true. A trial that exits 0 short of the resource it
# was asked for is ExitedShort (failed, with what it last reported, its last metrics read error
# and its output), a sweep whose trials all failed ends Failed with exit 1, the JSON status after
# Ctrl-C counts no trial running, and a pause-mode sweep that ASHA alone would end with no trial at
# the full resource ends with its best trial there.
source "$(dirname "$0")/lib.sh"
HOSTILE="$(cd "$(dirname "$0")/../fixtures/hostile-trainer" && pwd)/hostile-trainer.sh"

# Writes sweep NAME ($WORK/NAME.yaml) running the curve trainer under the hostile trainer's MODES
# (NAME MODES EXTRA_SPEC_YAML [TRAINER_ARGS]).
hostile_sweep() {
  local name=$1 modes=$2 extra=$3 args=${4:-'"--seconds-per-epoch=0.1"'}
  curve_sweep "$WORK/$name.yaml" "$name" "$extra" "$args"
  sed -i "s|command: \[\"$CURVE\"\]|command: [\"$HOSTILE\", $modes, --, \"$CURVE\"]|" "$WORK/$name.yaml"
  grep -q -- "$modes, --" "$WORK/$name.yaml" || fail "$name does not run the hostile trainer"
}

# Runs sweep NAME and expects it to end Failed with exit 1 (NAME).
run_failed_sweep() {
  local name=$1 rc=0
  timeout 60 "$BSW" run "$WORK/$name.yaml" --state-dir "$WORK/$name" --output json \
    >"$WORK/$name.json" 2>"$WORK/$name.log" || rc=$?
  cat "$WORK/$name.log"
  [ "$rc" -eq 1 ] || fail "$name: run exited $rc, want 1"
  [ "$(json_get "$WORK/$name.json" 's["phase"]')" = Failed ] || fail "$name: phase is not Failed"
  [ "$(json_get "$WORK/$name.json" 's["trials"]["completed"]')" -eq 0 ] ||
    fail "$name: a trial is counted completed"
}

# Random search, so that no rung stops a trial before it could fail.
two_trials='  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: random, seed: 3}
  parallelism: 2
  maxTrials: 2'

# A trainer that exits 0 at epoch 1 of the 9 it was asked for: ExitedShort, not retried, and with
# maxTrials (2) below maxFailedTrials (3) the sweep ends Failed: every trial failed.
hostile_sweep short exit-early "$two_trials"
run_failed_sweep short
want="short-t0000 Failed (ExitedShort: exited 0 at epochs 1 of the 9 it was asked for, without the objective at epochs 9)"
grep -qF "$want" "$WORK/short.log" || fail "no status line: $want"
grep -qF "sweep Failed: all 2 trials failed" "$WORK/short.log" || fail "the sweep does not say all failed"
[ ! -d "$WORK/short/trials/short-t0000/seg-1" ] || fail "an ExitedShort trial was retried"
json_get "$WORK/short.json" 'all(f["reason"] == "ExitedShort" and "epoch 1/9" in f["output"] for f in s["recentFailures"]) and len(s["recentFailures"]) == 2 or sys.exit(1)' >/dev/null ||
  fail "status.recentFailures does not carry each ExitedShort with the trainer's output"

# Metrics that never parse: the trainer runs to epoch 9 and exits 0, but no objective was read;
# the message gives the read error.
hostile_sweep garbage garbage-metrics "$two_trials"
run_failed_sweep garbage
grep -E "garbage-t0000 Failed \(ExitedShort: exited 0 having reported no epochs of the 9 it was asked for, without the objective at epochs 9; its metrics could not be read: .+\)" \
  "$WORK/garbage.log" >/dev/null || fail "the ExitedShort line does not give the metrics read error"

# Trials that fail for good (exit 1, one retry each) while maxTrials is below maxFailedTrials.
curve_sweep "$WORK/errors.yaml" errors "$two_trials" '"--seconds-per-epoch=0.1", "--fail-at-epoch=1"'
run_failed_sweep errors
[ "$(json_get "$WORK/errors.json" 's["trials"]["failed"]')" -eq 2 ] || fail "errors: not 2 failed trials"
json_get "$WORK/errors.json" '[c for c in s["conditions"] if c["type"] == "Progressing"][0]["reason"] == "Failed" or sys.exit(1)' >/dev/null ||
  fail "errors: Progressing does not say Failed"

# Ctrl-C: the JSON status says the run was interrupted and counts no trial as running.
curve_sweep "$WORK/ctrlc.yaml" ctrlc '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 4}
  parallelism: 2
  maxTrials: 6'
"$BSW" run "$WORK/ctrlc.yaml" --state-dir "$WORK/ctrlc" --output json >"$WORK/ctrlc.json" \
  2>"$WORK/ctrlc.log" &
pid=$!
for _ in $(seq 100); do
  grep -q SegmentLaunched "$WORK/ctrlc/journal.jsonl" 2>/dev/null && break
  sleep 0.1
done
sleep 1
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || { cat "$WORK/ctrlc.log" >&2; fail "interrupted run exited $rc, want 130"; }
cat "$WORK/ctrlc.json"
[ "$(json_get "$WORK/ctrlc.json" 's["trials"]["running"]')" -eq 0 ] ||
  fail "the interrupted run counts trials running"
[ "$(json_get "$WORK/ctrlc.json" 'len(s["runningTrials"])')" -eq 0 ] ||
  fail "the interrupted run lists trials running"
[ "$(json_get "$WORK/ctrlc.json" 's["trials"]["interrupted"]')" -ge 1 ] ||
  fail "the interrupted run counts no trial interrupted"
json_get "$WORK/ctrlc.json" '[c for c in s["conditions"] if c["type"] == "Progressing"][0]["reason"] == "Interrupted" or sys.exit(1)' >/dev/null ||
  fail "Progressing does not say Interrupted"
assert_no_trial_processes

# Pause mode with maxTrials 6 and η 3: rung 1 promotes 2, rung 3 promotes none; the finish reserve
# takes the best trial to epoch 9 before the sweep ends.
curve_sweep "$WORK/pause6.yaml" pause6 '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: pause, seed: 5}
  parallelism: 2
  maxTrials: 6'
run_completed_sweep pause6 6 9
cat "$WORK/pause6.json"
[ "$(json_get "$WORK/pause6.json" 's["trials"]["completed"]')" -eq 1 ] ||
  fail "pause6: not exactly one trial at the full resource"
[ "$(json_get "$WORK/pause6.json" 's["best"]["resource"]')" = 9.0 ] || fail "pause6: best is not at epoch 9"
grep -q "promoted from rung 1 to epochs 9 before the sweep ends" "$WORK/pause6.log" ||
  fail "pause6: the leader was not taken to the end by the finish reserve"
echo "ok: pause6 used $(json_get "$WORK/pause6.json" 's["budget"]["used"]') of 0.05 GPU-hours," \
  "best $(json_get "$WORK/pause6.json" 's["best"]["trial"]') at epoch 9"
assert_no_trial_processes
