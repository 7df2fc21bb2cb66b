#!/usr/bin/env bash
# Pause mode: trials stop at their rung, and the best are resumed from their checkpoints to the
# next rung (new segments of the same trial), never more than 1/η of a rung.
source "$(dirname "$0")/lib.sh"

curve_sweep "$WORK/sweep.yaml" pausemode '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: pause, seed: 5}
  parallelism: 2
  maxTrials: 9'

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "run exited $?"; }
cat "$WORK/status.json"
[ "$(json_get "$WORK/status.json" 's["phase"]')" = Completed ] || fail "phase is not Completed"
[ "$(json_get "$WORK/status.json" 's["rungs"][0]["promoted"]')" -eq 3 ] || fail "rung 1 did not promote 9/3"
[ "$(json_get "$WORK/status.json" 's["rungs"][1]["promoted"]')" -eq 1 ] || fail "rung 3 did not promote 3/3"
[ "$(json_get "$WORK/status.json" 's["trials"]["completed"]')" -eq 1 ] || fail "not exactly one trial completed"
[ "$(json_get "$WORK/status.json" 's["best"]["resource"]')" = 9.0 ] || fail "best is not at the max resource"
# The completed trial ran as three segments: to epoch 1, 3 and 9, resuming its checkpoint.
best=$(json_get "$WORK/status.json" 's["best"]["trial"]')
[ -d "$WORK/state/trials/$best/seg-2" ] || fail "$best has no third segment"
[ "$(cat "$WORK/state/trials/$best/checkpoint/"* 2>/dev/null | tr -dc 0-9 | head -c 3)" != "" ] \
  || fail "$best has no checkpoint"
assert_journal_sane "$WORK/state" 9
assert_no_trial_processes
