#!/usr/bin/env bash
# kill -9 of `budgetsweep run` at several moments, then the same command again with the same
# --state-dir: the sweep completes, no segment is launched twice, no finished trial runs again,
# the total charge stays within the budget, and no process is orphaned.
source "$(dirname "$0")/lib.sh"

curve_sweep "$WORK/sweep.yaml" crash '  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 21}
  parallelism: 2
  maxTrials: 8' '"--seconds-per-epoch=0.3"'

for delay in 2.5 1.7 3.1; do
  "$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" >"$WORK/run.log" 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "killed the runner after ${delay}s: $(grep -c SegmentLaunched "$WORK/state/journal.jsonl") segments launched so far"
done

# The killed runs left trials to resume; the run that resumes them keeps every complete line of
# the journal it found (a torn last line may be dropped) and appends to it.
cp "$WORK/state/journal.jsonl" "$WORK/journal-before.jsonl"
created_before=$(grep -c TrialCreated "$WORK/journal-before.jsonl" || true)
[ "$created_before" -gt 0 ] || fail "the killed runs journaled no trial: nothing was resumed"
# Bounded well inside ctest's limit, so that a run that never ends says where it stood (timeout's
# SIGTERM stops it as Ctrl-C would, with its summary).
rc=0
timeout 150 "$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json \
  >"$WORK/status.json" 2>"$WORK/progress.log" || rc=$?
if [ "$rc" -ne 0 ]; then
  tail -n 40 "$WORK/progress.log" >&2
  tail -n 8 "$WORK/state/journal.jsonl" >&2
  pgrep -af -- "$WORK" >&2 || true
  fail "resumed run exited $rc"
fi
cat "$WORK/status.json"
lines_before=$(wc -l <"$WORK/journal-before.jsonl")
head -n "$lines_before" "$WORK/state/journal.jsonl" | cmp -s - <(head -n "$lines_before" "$WORK/journal-before.jsonl") ||
  fail "the resumed run did not continue the journal it found"
echo "ok: resumed from $created_before journaled trials ($lines_before events)"
[ "$(json_get "$WORK/status.json" 's["phase"]')" = Completed ] || fail "phase is not Completed"
[ "$(json_get "$WORK/status.json" 's["trials"]["created"]')" -eq 8 ] || fail "not 8 trials"
json_get "$WORK/status.json" 's["budget"]["used"] <= s["budget"]["gpuHours"] or sys.exit(1)' >/dev/null \
  || fail "budget used exceeds the budget"
assert_journal_sane "$WORK/state" 9

# Running it again finds the sweep finished and starts nothing.
before=$(grep -c SegmentLaunched "$WORK/state/journal.jsonl")
"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/again.json" 2>/dev/null
[ "$(grep -c SegmentLaunched "$WORK/state/journal.jsonl")" -eq "$before" ] || fail "a finished sweep launched work"
assert_no_trial_processes
