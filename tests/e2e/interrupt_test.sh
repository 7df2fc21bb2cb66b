#!/usr/bin/env bash
# Ctrl-C (SIGINT) stops every trial cleanly, still prints the summary, exits 130, and the same
# command with the same --state-dir then finishes the sweep.
source "$(dirname "$0")/lib.sh"

curve_sweep "$WORK/sweep.yaml" interrupt '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 4}
  parallelism: 2
  maxTrials: 6'

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" >"$WORK/run.log" 2>&1 &
pid=$!
sleep 2
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
cat "$WORK/run.log"
[ "$rc" -eq 130 ] || fail "interrupted run exited $rc, want 130"
grep -q "^sweep interrupt: Running" "$WORK/run.log" || fail "no summary after Ctrl-C"
assert_no_trial_processes

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "resumed run exited $?"; }
[ "$(json_get "$WORK/status.json" 's["phase"]')" = Completed ] || fail "phase is not Completed"
[ "$(json_get "$WORK/status.json" 's["trials"]["failed"]')" -eq 0 ] || fail "interrupted trials counted as failed"
assert_journal_sane "$WORK/state" 9
assert_no_trial_processes
