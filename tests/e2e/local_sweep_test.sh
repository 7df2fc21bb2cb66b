#!/usr/bin/env bash
# A stop-mode ASHA sweep of real trial processes: it completes within its budget, kills the
# bottom trials at the rungs, reports the best trial, and leaves no process behind.
source "$(dirname "$0")/lib.sh"

curve_sweep "$WORK/sweep.yaml" stopmode '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 11}
  parallelism: 2
  maxTrials: 9'

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "run exited $?"; }
cat "$WORK/status.json"

[ "$(json_get "$WORK/status.json" 's["phase"]')" = Completed ] || fail "phase is not Completed"
json_get "$WORK/status.json" 's["budget"]["used"] <= s["budget"]["gpuHours"] or sys.exit(1)' >/dev/null \
  || fail "budget used exceeds the budget"
[ "$(json_get "$WORK/status.json" 's["trials"]["created"]')" -eq 9 ] || fail "not 9 trials"
[ "$(json_get "$WORK/status.json" 's["trials"]["stopped"]')" -ge 4 ] || fail "ASHA stopped too few trials"
[ "$(json_get "$WORK/status.json" 's["trials"]["completed"]')" -ge 1 ] || fail "no trial completed"
[ "$(json_get "$WORK/status.json" 's["rungs"][0]["reached"]')" -eq 9 ] || fail "rung 1 not reached by all"
[ "$(json_get "$WORK/status.json" 's["best"]["resource"]')" = 9.0 ] || fail "best is not at the max resource"
json_get "$WORK/status.json" 's["best"]["value"] > 0.5 or sys.exit(1)' >/dev/null || fail "best value too low"
grep -q "stopped (RungCutoff)" "$WORK/progress.log" || fail "no rung cutoff in the progress lines"
assert_journal_sane "$WORK/state" 9
assert_no_trial_processes
# With a budget this generous no trial may hit its reserved deadline: reservations must keep
# ahead of the trials (a regression: deadlines once trailed the trials and killed them).
if grep -q '"reason":"DeadlineExceeded"' "$WORK/state/journal.jsonl"; then
  fail "a trial hit its deadline although the budget had room"
fi
