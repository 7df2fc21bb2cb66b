#!/usr/bin/env bash
# Safe spec edits on resume: a sweep interrupted (Ctrl-C) and run again with the same --state-dir
# refuses, with exit 2 and before running anything, a file that changes an immutable field, naming
# each one; a file that changes only editable fields (parallelism, budget) is taken: the sweep goes
# on with them. A budget lowered below what was used ends the sweep BudgetExhausted.
source "$(dirname "$0")/lib.sh"

# Runs the sweep FILE in STATE_DIR, interrupts it after 2 s and checks it stopped as Ctrl-C does.
run_and_interrupt() {
  local file=$1 state=$2
  "$BSW" run "$file" --state-dir "$state" >"$WORK/run.log" 2>&1 &
  local pid=$!
  sleep 2
  kill -INT "$pid"
  local rc=0
  wait "$pid" || rc=$?
  [ "$rc" -eq 130 ] || { cat "$WORK/run.log" >&2; fail "interrupted run exited $rc, want 130"; }
  assert_no_trial_processes
}

# Prints the most segments the journal of STATE_DIR shows running at once after its first SKIP
# events.
max_running_after() {
  python3 - "$1" "$2" <<'PY'
import json, os, sys
state, skip = sys.argv[1], int(sys.argv[2])
events = [json.loads(l) for l in open(os.path.join(state, "journal.jsonl")) if l.strip()][skip:]
running, most = set(), 0
for e in events:
    if e["event"] == "SegmentLaunched":
        running.add((e["trial"], e["segment"]))
        most = max(most, len(running))
    elif e["event"] == "SegmentEnded":
        running.discard((e["trial"], e["segment"]))
print(most)
PY
}

curve_sweep "$WORK/sweep.yaml" edits '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 5}
  parallelism: 1
  maxTrials: 9'
run_and_interrupt "$WORK/sweep.yaml" "$WORK/state"
journal_before=$(sha256sum <"$WORK/state/journal.jsonl")
record_before=$(sha256sum <"$WORK/state/sweep.json")

# Immutable fields edited (and an editable one with them): refused, naming each immutable field.
sed -e 's/max: 9, reductionFactor/max: 27, reductionFactor/' \
  -e 's/lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1}/lr: {type: logUniform, min: 1.0e-4, max: 0.5}/' \
  -e 's/--seconds-per-epoch=0.2/--seconds-per-epoch=0.1/' \
  -e 's/parallelism: 1/parallelism: 2/' "$WORK/sweep.yaml" >"$WORK/immutable.yaml"
rc=0
"$BSW" run "$WORK/immutable.yaml" --state-dir "$WORK/state" >"$WORK/immutable.log" 2>&1 || rc=$?
cat "$WORK/immutable.log"
[ "$rc" -eq 2 ] || fail "resume with immutable fields edited exited $rc, want 2"
for field in spec.resource.max spec.searchSpace.lr 'spec.trial.template.spec.containers[0].args[0]'; do
  grep -qF "  $field: changed on a sweep that has started (immutable)" "$WORK/immutable.log" ||
    fail "the refusal does not name $field"
done
[ "$(grep -c 'changed on a sweep that has started' "$WORK/immutable.log")" -eq 3 ] ||
  fail "the refusal names other fields than the three immutable ones edited (parallelism is editable)"
[ "$(sha256sum <"$WORK/state/journal.jsonl")" = "$journal_before" ] || fail "the refused run journaled"
[ "$(sha256sum <"$WORK/state/sweep.json")" = "$record_before" ] || fail "the refused run rewrote sweep.json"
assert_no_trial_processes

# Only editable fields edited: three trials at a time and a larger budget, taken on resume.
sed -e 's/parallelism: 1/parallelism: 3/' -e 's/gpuHours: 0.05/gpuHours: 0.08/' \
  "$WORK/sweep.yaml" >"$WORK/editable.yaml"
events_before=$(grep -c . "$WORK/state/journal.jsonl")
"$BSW" run "$WORK/editable.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "resume with editable fields edited exited $?"; }
[ "$(json_get "$WORK/status.json" 's["phase"]')" = Completed ] || fail "phase is not Completed"
[ "$(json_get "$WORK/status.json" 's["budget"]["gpuHours"]')" = 0.08 ] ||
  fail "status.budget.gpuHours is not the edited 0.08"
[ "$(json_get "$WORK/state/sweep.json" 's["spec"]["parallelism"]')" -eq 3 ] ||
  fail "sweep.json does not record the edited parallelism"
most=$(max_running_after "$WORK/state" "$events_before")
[ "$most" -ge 2 ] && [ "$most" -le 3 ] ||
  fail "after the edit at most $most segments ran at once, want 2 or 3 (parallelism 1 -> 3)"
assert_journal_sane "$WORK/state" 9
assert_no_trial_processes

# The budget lowered below what was used: nothing fits, the sweep ends BudgetExhausted without
# launching anything more.
curve_sweep "$WORK/cut.yaml" cut '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 6}
  parallelism: 2
  maxTrials: 9'
run_and_interrupt "$WORK/cut.yaml" "$WORK/cut-state"
sed -e 's/gpuHours: 0.05/gpuHours: 0.0001/' "$WORK/cut.yaml" >"$WORK/cut-down.yaml"
events_before=$(grep -c . "$WORK/cut-state/journal.jsonl")
"$BSW" run "$WORK/cut-down.yaml" --state-dir "$WORK/cut-state" --output json >"$WORK/cut.json" \
  2>"$WORK/cut.log" || { cat "$WORK/cut.log" >&2; fail "resume with the budget cut exited $?"; }
[ "$(json_get "$WORK/cut.json" 's["phase"]')" = BudgetExhausted ] ||
  fail "phase is not BudgetExhausted after the budget was cut below what was used"
[ "$(max_running_after "$WORK/cut-state" "$events_before")" -eq 0 ] ||
  fail "a segment was launched after the budget was cut below what was used"
assert_no_trial_processes
