#!/usr/bin/env bash
# Trials that keep failing are retried from their checkpoint spec.trial.maxRetries times, and the
# sweep ends Failed (exit 1) once spec.maxFailedTrials trials have failed for good.
source "$(dirname "$0")/lib.sh"

curve_sweep "$WORK/sweep.yaml" failing '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  parallelism: 2
  maxFailedTrials: 2' '"--seconds-per-epoch=0.1", "--fail-at-epoch=2"'

set +e
"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log"
rc=$?
set -e
cat "$WORK/status.json"
[ "$rc" -eq 1 ] || { cat "$WORK/progress.log" >&2; fail "run exited $rc, want 1"; }
[ "$(json_get "$WORK/status.json" 's["phase"]')" = Failed ] || fail "phase is not Failed"
json_get "$WORK/status.json" '[c for c in s["conditions"] if c["type"] == "Progressing"][0]["reason"] == "Failed" or sys.exit(1)' >/dev/null \
  || fail "Progressing does not say Failed"
[ "$(json_get "$WORK/status.json" 's["trials"]["failed"]')" -ge 2 ] || fail "fewer than 2 failed trials"
# Each failed trial ran twice: its first segment and one retry (maxRetries 1).
for t in "$WORK"/state/trials/failing-t0000 "$WORK"/state/trials/failing-t0001; do
  [ -d "$t/seg-1" ] || fail "$(basename "$t") was not retried"
  [ ! -d "$t/seg-2" ] || fail "$(basename "$t") was retried more than maxRetries"
done
grep -q "exited with code 1" "$WORK/progress.log" || fail "the failure reason is not reported"
# What the trainer said is where users look: under the failure's line, and in -o json.
grep -qxF "    | curve-trainer: injected failure at epoch 2" "$WORK/progress.log" ||
  fail "the trainer's last line is not under the failure on the console"
[ "$(json_get "$WORK/status.json" 's["trials"]["running"]')" -eq 0 ] ||
  fail "trials are counted running after the sweep ended"
json_get "$WORK/status.json" 'all(f["reason"] == "Error" and f["message"] == "exited with code 1" and f["output"].endswith("curve-trainer: injected failure at epoch 2") for f in s["recentFailures"]) and 2 <= len(s["recentFailures"]) <= 5 or sys.exit(1)' >/dev/null ||
  fail "status.recentFailures does not carry each failure with the trainer's last line"
assert_journal_sane "$WORK/state" 9
assert_no_trial_processes
