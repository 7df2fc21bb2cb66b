#!/usr/bin/env bash
# Issue 39: the hard cap and the state directory hold whatever a trial does and whatever a user
# types. Trials of the hostile-trainer fixture rewrite their deadline files and leave daemonized
# processes that ignore SIGTERM; the runner is killed with -9 while they do, and resumed. Each
# case checks the charge against the cap, that nothing is left, a true status and the message.
source "$(dirname "$0")/lib.sh"
HOSTILE="$(cd "$(dirname "$0")/../fixtures/hostile-trainer" && pwd)/hostile-trainer.sh"

# gpuHours 0.004 is 14.4 device-seconds: far less than the trials would train.
curve_sweep "$WORK/sweep.yaml" hostile '  budget: {gpuHours: 0.004}
  resource: {unit: epochs, min: 1, max: 27, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 5}
  parallelism: 2
  maxTrials: 6' '"--seconds-per-epoch=0.3"'
sed -i "s|command: \[\"$CURVE\"\]|command: [\"$HOSTILE\", rewrite-deadline, escape, --, \"$CURVE\"]|" \
  "$WORK/sweep.yaml"
grep -q rewrite-deadline "$WORK/sweep.yaml" || fail "the sweep does not run the hostile trainer"

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" >"$WORK/first.log" 2>&1 &
first=$!
for _ in $(seq 100); do
  grep -q SegmentLaunched "$WORK/state/journal.jsonl" 2>/dev/null && break
  sleep 0.1
done
grep -q SegmentLaunched "$WORK/state/journal.jsonl" || fail "no segment launched in 10 s"

# One runner per state directory: a second one exits 2, naming the directory and the holder.
rc=0
"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" >"$WORK/second.log" 2>&1 || rc=$?
cat "$WORK/second.log"
[ "$rc" -eq 2 ] || fail "a second runner on the same state directory exited $rc, want 2"
grep -q "$WORK/state: another budgetsweep run (PID $first) is running this sweep" "$WORK/second.log" \
  || fail "the second runner's message does not name the directory and PID $first"

# The runner dies while its trials rewrite their deadlines: their supervisors keep the deadlines
# the runner gave them.
sleep 1
kill -9 "$first"
wait "$first" 2>/dev/null || true
sleep 2

rc=0
timeout 150 "$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json \
  >"$WORK/status.json" 2>"$WORK/resumed.log" || rc=$?
[ "$rc" -eq 0 ] || { tail -n 30 "$WORK/resumed.log" >&2; fail "the resumed run exited $rc"; }
used=$(json_get "$WORK/status.json" '"%.6f" % s["budget"]["used"]')
# The documented bound: (grace + one poll of the supervisor) per running segment, on 2 slots.
json_get "$WORK/status.json" \
  's["budget"]["used"] <= s["budget"]["gpuHours"] + 2 * (2 + 0.1) / 3600 or sys.exit(1)' >/dev/null \
  || fail "used $used GPU-hours of 0.004: over the cap"
echo "ok: used $used of 0.004 GPU-hours after the trials rewrote their deadlines"
[ "$(json_get "$WORK/status.json" 's["phase"]')" = BudgetExhausted ] || fail "phase is not BudgetExhausted"
assert_journal_sane "$WORK/state" 27

# Every escapee is gone, and so is every other process of the trials.
escapees=$(cat "$WORK"/state/trials/*/checkpoint/escapee.pid)
[ -n "$escapees" ] || fail "the hostile trainers left no escapee to look for"
for pid in $escapees; do
  if [ -e "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
    fail "escapee $pid is still running"
  fi
done
echo "ok: $(wc -w <<<"$escapees") escaped processes, none left"
assert_no_trial_processes

# report reads the state directory and never writes into it.
cp "$WORK/state/journal.jsonl" "$WORK/journal.before"
rc=0
"$BSW" report "$WORK/state" -o "$WORK/state/journal.jsonl" 2>"$WORK/report.log" || rc=$?
cat "$WORK/report.log"
[ "$rc" -eq 2 ] || fail "report into the state directory exited $rc, want 2"
grep -q "inside the state directory" "$WORK/report.log" || fail "report's message does not say why"
cmp -s "$WORK/journal.before" "$WORK/state/journal.jsonl" || fail "report changed the journal"
"$BSW" report "$WORK/state" -o "$WORK/report.html" >/dev/null || fail "report elsewhere failed"

# State directories are the user's alone.
[ "$(stat -c %a "$WORK/state")" = 700 ] || fail "the state directory is not 0700"
[ "$(stat -c %a "$WORK/state/journal.jsonl")" = 600 ] || fail "the journal is not 0600"
launch=$(ls "$WORK"/state/trials/*/seg-0/launch.json | head -n 1)
[ "$(stat -c %a "$launch")" = 600 ] || fail "$launch is not 0600"

# Only a new, empty or budgetsweep directory is a state directory.
mkdir "$WORK/photos"
touch "$WORK/photos/holiday.jpg"
ln -s / "$WORK/root-link"
for dir in "$WORK/photos" "$WORK/root-link"; do
  rc=0
  "$BSW" run "$WORK/sweep.yaml" --state-dir "$dir" 2>"$WORK/refused.log" || rc=$?
  cat "$WORK/refused.log"
  [ "$rc" -eq 2 ] || fail "--state-dir $dir exited $rc, want 2"
  grep -q "is not a budgetsweep state directory" "$WORK/refused.log" || fail "$dir: no reason given"
done
[ ! -e /journal.jsonl ] && [ ! -e /.budgetsweep-state ] || fail "a run wrote at /"
[ "$(ls "$WORK/photos")" = holiday.jpg ] || fail "a refused run wrote into $WORK/photos"

# A damaged pool ledger cannot heal by waiting: the run exits 2 naming the file.
cat >"$WORK/pool.yaml" <<'YAML'
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetPool
metadata: {name: team}
spec: {gpuHours: 1}
YAML
echo '{"sweeps": [' >"$WORK/pool.yaml.ledger.json"
rc=0
timeout 30 "$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/pooled" --pool "$WORK/pool.yaml" \
  >"$WORK/pooled.log" 2>&1 || rc=$?
cat "$WORK/pooled.log"
[ "$rc" -eq 2 ] || fail "a damaged pool ledger: the run exited $rc, want 2"
grep -q "the pool's ledger is damaged: $WORK/pool.yaml.ledger.json: not JSON" "$WORK/pooled.log" \
  || fail "a damaged pool ledger: the message does not name the file"

# A launch journaled before the runner died and never started (its segment directory is gone, as
# when the runner is killed between the two) is admitted again once its reservation lapsed: its
# trial trains, it does not end unstarted at a deadline that passed while the runner was down.
curve_sweep "$WORK/lost.yaml" lost '  budget: {gpuHours: 0.02}
  resource: {unit: epochs, min: 1, max: 3, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 3}
  parallelism: 2
  maxTrials: 2' '"--seconds-per-epoch=1"'
"$BSW" run "$WORK/lost.yaml" --state-dir "$WORK/lost" >"$WORK/lost-killed.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  [ "$(cat "$WORK/lost/journal.jsonl" 2>/dev/null | grep -c SegmentLaunched)" -ge 2 ] && break
  sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pkill -KILL -f -- "$WORK/lost/" || true
rm -rf "$WORK"/lost/trials/*/seg-*
grep -q ValueRecorded "$WORK/lost/journal.jsonl" && fail "values were recorded before the kill"
# A launch goes on with what is left of its reservation until half of it has lapsed.
wait_s=$(python3 -c '
import json, sys, time
launches = [e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "SegmentLaunched"]
half = max((e["at"] + e["deadline"]) / 2 for e in launches)
print(max(0.0, half - time.time()) + 0.5)' "$WORK/lost/journal.jsonl")
echo "waiting ${wait_s}s until the unstarted launches lost half of their reservations"
sleep "$wait_s"
timeout 120 "$BSW" run "$WORK/lost.yaml" --state-dir "$WORK/lost" --output json \
  >"$WORK/lost.json" 2>"$WORK/lost.log" || { tail -n 20 "$WORK/lost.log" >&2; fail "lost: run failed"; }
[ "$(json_get "$WORK/lost.json" 's["phase"]')" = Completed ] || fail "lost: phase is not Completed"
[ "$(json_get "$WORK/lost.json" 's["trials"]["completed"]')" -ge 1 ] || fail "lost: no trial completed"
python3 - "$WORK/lost/journal.jsonl" <<'PY' || fail "lost: a trial ended without having trained"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
ends = [e for e in events if e["event"] == "SegmentEnded"]
readmitted = [e for e in ends if e["reason"] == "Interrupted" and "never started" in e["message"]]
assert len(readmitted) == 2, f"{len(readmitted)} launches admitted again, want 2"
assert not any("started" in e for e in readmitted), "an unstarted launch was charged"
for trial in {e["trial"] for e in ends}:
    assert any(v["trial"] == trial for v in events if v["event"] == "ValueRecorded"), f"trial {trial} never trained"
print(f"lost: {len(readmitted)} unstarted launches admitted again; every trial trained")
PY
assert_no_trial_processes

# The disk of the state directory fills while trials run (a 4 MiB tmpfs, filled and freed again):
# the run says so once, waits, and goes on; no charge is lost and no retry is spent.
mkdir "$WORK/small"
mount -t tmpfs -o size=4m tmpfs "$WORK/small" || fail "cannot mount a tmpfs for the full-disk case"
trap 'umount -l "$WORK/small" 2>/dev/null || true; cleanup' EXIT
curve_sweep "$WORK/full.yaml" full '  budget: {gpuHours: 0.01}
  resource: {unit: epochs, min: 1, max: 3, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 3}
  parallelism: 2
  maxTrials: 3' '"--seconds-per-epoch=1"'
# Trainers that write nothing to that disk (no checkpoint: stop mode needs none), so that what is
# tested is the runner's and the supervisors' own writes.
sed -i "s|command: \[\"$CURVE\"\]|command: [env, -u, BUDGETSWEEP_CHECKPOINT_DIR, \"$CURVE\"]|" "$WORK/full.yaml"
grep -q "env, -u" "$WORK/full.yaml" || fail "full disk: the sweep's command was not rewritten"
timeout 120 "$BSW" run "$WORK/full.yaml" --state-dir "$WORK/small/state" --output json \
  >"$WORK/full.json" 2>"$WORK/full.log" &
pid=$!
for _ in $(seq 100); do
  [ "$(cat "$WORK/small/state/journal.jsonl" 2>/dev/null | grep -c SegmentLaunched)" -ge 2 ] && break
  sleep 0.05
done
sleep 0.3
dd if=/dev/zero of="$WORK/small/filler" bs=64k 2>/dev/null || true
[ "$(df --output=avail "$WORK/small" | tail -n 1)" -eq 0 ] || fail "the tmpfs is not full"
sleep 2
rm "$WORK/small/filler"
rc=0
wait "$pid" || rc=$?
cat "$WORK/full.log"
[ "$rc" -eq 0 ] || fail "full disk: the run exited $rc"
[ "$(grep -c "is full" "$WORK/full.log")" -eq 1 ] || fail "full disk: not said exactly once"
grep -q "free space on it" "$WORK/full.log" || fail "full disk: the message does not say what to do"
[ "$(json_get "$WORK/full.json" 's["phase"]')" = Completed ] || fail "full disk: not Completed"
! grep -q '"Lost"\|Retrying' "$WORK/small/state/journal.jsonl" "$WORK/full.log" \
  || fail "full disk: a segment was lost or a retry spent"
[ "$(json_get "$WORK/full.json" 's["trials"]["failed"]')" -eq 0 ] || fail "full disk: a trial failed"
assert_journal_sane "$WORK/small/state" 3
echo "ok: the disk filled and was freed; the sweep went on with nothing lost"
umount "$WORK/small"
