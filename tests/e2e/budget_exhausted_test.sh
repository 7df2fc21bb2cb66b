#!/usr/bin/env bash
# A sweep with no trial limit runs until the budget admits no more work, then ends
# BudgetExhausted with the charge (from process start and finish times) within the budget.
source "$(dirname "$0")/lib.sh"

# 0.004 GPU-hours = 14.4 device-seconds; each epoch sleeps 0.2 s.
curve_sweep "$WORK/sweep.yaml" budget '  budget: {gpuHours: 0.004}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: random, seed: 3}
  parallelism: 2'

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "run exited $?"; }
cat "$WORK/status.json"
[ "$(json_get "$WORK/status.json" 's["phase"]')" = BudgetExhausted ] || fail "phase is not BudgetExhausted"
# Issue 40 point 5: the reason is written once, not "BudgetExhausted: BudgetExhausted: requested".
grep -q "^sweep BudgetExhausted: requested " "$WORK/progress.log" ||
  fail "the progress log does not say what was requested and what was left"
if grep -q "BudgetExhausted.*BudgetExhausted" "$WORK/progress.log"; then
  fail "a progress line repeats the reason BudgetExhausted"
fi
json_get "$WORK/status.json" 's["budget"]["used"] <= s["budget"]["gpuHours"] or sys.exit(1)' >/dev/null \
  || fail "budget used exceeds the budget"
json_get "$WORK/status.json" 's["budget"]["used"] >= 0.5 * s["budget"]["gpuHours"] or sys.exit(1)' >/dev/null \
  || fail "less than half the budget was used"
json_get "$WORK/status.json" '[c for c in s["conditions"] if c["type"] == "BudgetAvailable"][0]["status"] == "False" or sys.exit(1)' >/dev/null \
  || fail "BudgetAvailable is not False"
# The charge recomputed here from the supervisors' own times agrees with the status.
python3 - "$WORK/state" "$WORK/status.json" <<'PY'
import glob, json, sys
state, status = sys.argv[1], json.load(open(sys.argv[2]))
charge = 0.0
for f in glob.glob(f"{state}/trials/*/seg-*/status.json"):
    s = json.load(open(f))
    charge += s["finished_unix_seconds"] - s["started_unix_seconds"]
hours = charge / 3600
print(f"charge from segment times: {hours:.5f} GPU-h, status says {status['budget']['used']}")
assert hours <= status["budget"]["gpuHours"], "segment times exceed the budget"
assert abs(hours - status["budget"]["used"]) < 0.0005, "status disagrees with segment times"
PY
assert_no_trial_processes
