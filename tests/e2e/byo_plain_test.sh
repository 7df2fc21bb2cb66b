#!/usr/bin/env bash
# Scripts that know nothing of budgetsweep join real local sweeps (docs/byo.md):
# examples/byo/plain/train.py (PyTorch, a slice of Fashion-MNIST) only prints `epoch=N accuracy=X`
# lines, or with --metrics-file appends them to a JSON-lines file. budgetsweep-collect reads them:
# an ASHA sweep (stdout.yaml), a random sweep over the file (file.yaml), and the Katib Experiment
# of examples/byo/katib converted by `budgetsweep convert katib`, exactly as docs/byo.md shows it.
# Needs Debian's python3-torch and dataset-fashion-mnist; without them it skips (exit 77).
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${BSW_SDK_PYTHON:-/usr/bin/python3}
TRAIN=examples/byo/plain/train.py

require_torch_and_fashion_mnist "$PY"
# The examples say python3 and paths from the repository root: run them from there, with the
# Python that has torch first on PATH.
cd "$ROOT"
mkdir -p "$WORK/bin"
ln -s "$PY" "$WORK/bin/python3"
export PATH="$WORK/bin:$PATH"

# Runs sweep file $1 into state $2; the JSON status is $2.json.
run_sweep() {
  "$BSW" run "$1" --state-dir "$2" --output json >"$2.json" 2>"$2.log" \
    || { tail -30 "$2.log" >&2; fail "$1: run exited $?"; }
  [ "$(json_get "$2.json" 's["phase"]')" = Completed ] || fail "$1: phase is not Completed"
  json_get "$2.json" 's["budget"]["used"] <= s["budget"]["gpuHours"] or sys.exit(1)' >/dev/null \
    || fail "$1: budget used exceeds the budget"
  echo -n "$1: "
  json_get "$2.json" '"%d trials, %d completed, %d stopped, best %s = %.4f at %s, used %.4f of %s GPU-h" % (
    s["trials"]["created"], s["trials"]["completed"], s["trials"]["stopped"],
    s["best"]["trial"], s["best"]["value"], s["best"]["resource"], s["budget"]["used"],
    s["budget"]["gpuHours"])'
}

# Every trial ran under the collector, with its parameter placed and the others appended, and
# each value the journal recorded is one the script printed at that epoch.
check_values_are_printed() {
  python3 - "$1" "$2" <<'PY' || fail "$1: journaled values"
import glob, json, os, re, sys
state, log_kind = sys.argv[1], sys.argv[2]
events = [json.loads(l) for l in open(state + "/journal.jsonl") if l.strip()]
checked = 0
for e in events:
    if e["event"] != "ValueRecorded":
        continue
    trial = [d for d in glob.glob(state + "/trials/*-t%04d" % e["trial"])][0]
    printed = {}
    if log_kind == "file":
        for line in open(trial + "/metrics.jsonl"):
            v = json.loads(line)
            printed.setdefault(v["epoch"], v["accuracy"])
    else:
        for log in glob.glob(trial + "/seg-*/trainer.log"):
            for m in re.finditer(r"^epoch=(\d+) accuracy=([0-9.]+)", open(log).read(), re.M):
                printed.setdefault(int(m.group(1)), float(m.group(2)))
    assert abs(printed[int(e["resource"])] - e["value"]) < 1e-9, (trial, e, printed)
    checked += 1
assert checked > 0, "no value recorded"
for launch in glob.glob(state + "/trials/*/seg-*/launch.json"):
    argv = json.load(open(launch))["argv"]
    assert argv[0].endswith("/budgetsweep-collect") and "--" in argv, argv
    assert any(a.startswith("--lr=") for a in argv), argv
    assert sum(a.startswith("--lr=") for a in argv) == 1, argv
print("%s: %d recorded values match the printed ones" % (state, checked))
PY
}

# 1. StdOut, ASHA in stop mode: weak trials are stopped at epoch 1 or 3, the best reach 9.
run_sweep examples/byo/plain/stdout.yaml "$WORK/stdout"
[ "$(json_get "$WORK/stdout.json" 's["trials"]["completed"]')" -ge 1 ] || fail "stdout: none at max"
[ "$(json_get "$WORK/stdout.json" 's["trials"]["stopped"]')" -ge 1 ] || fail "stdout: none stopped"
[ "$(json_get "$WORK/stdout.json" 's["best"]["resource"]')" = 9.0 ] || fail "stdout: best not at 9"
assert_journal_sane "$WORK/stdout" 9
check_values_are_printed "$WORK/stdout" stdout

# 1b. The runner killed (kill -9) while printing trials run, then run again on the same state: no
# value is lost or counted twice. The wrappers live on with their trials and keep serving what was
# printed meanwhile: each value is recorded once, as printed, and no segment ends without its
# values (MetricsMissing or ExitedShort).
"$BSW" run examples/byo/plain/stdout.yaml --state-dir "$WORK/crash" >"$WORK/crash.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  recorded=$(grep -c ValueRecorded "$WORK/crash/journal.jsonl" 2>/dev/null || true)
  [ "${recorded:-0}" -ge 2 ] && break
  sleep 0.1
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
recorded=$(grep -c ValueRecorded "$WORK/crash/journal.jsonl" || true)
[ "$recorded" -ge 2 ] || fail "crash: the killed run recorded $recorded values"
run_sweep examples/byo/plain/stdout.yaml "$WORK/crash"
assert_journal_sane "$WORK/crash" 9
check_values_are_printed "$WORK/crash" stdout
python3 - "$WORK/crash" <<'PY' || fail "crash: a value was recorded twice, or a trial ended without its values"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1] + "/journal.jsonl") if l.strip()]
recorded = set()
for e in events:
    if e["event"] == "ValueRecorded":
        key = (e["trial"], e["resource"])
        assert key not in recorded, ("recorded twice", e)
        recorded.add(key)
    # A value lost across the restart would end its segment without it.
    assert e.get("reason") not in ("MetricsMissing", "ExitedShort"), e
print("crash: %d values, each recorded once; no segment ended without its values" % len(recorded))
PY

# 2. File, JSON lines, random search: every trial runs its 3 epochs.
run_sweep examples/byo/plain/file.yaml "$WORK/file"
[ "$(json_get "$WORK/file.json" 's["trials"]["completed"]')" = 4 ] || fail "file: not 4 completed"
assert_journal_sane "$WORK/file" 3
check_values_are_printed "$WORK/file" file

# 3. The Katib Experiment, converted as docs/byo.md says, then run: its trials count their values.
"$BSW" convert katib examples/byo/katib/experiment.yaml --gpu-hours 0.02 --max-resource 3 \
  >"$WORK/fmnist-random.yaml" 2>"$WORK/convert.log" \
  || { cat "$WORK/convert.log" >&2; fail "convert katib exited $?"; }
grep -q "spec.objective.additionalMetricNames: not mapped" "$WORK/convert.log" \
  || fail "convert katib did not list additionalMetricNames"
run_sweep "$WORK/fmnist-random.yaml" "$WORK/katib"
[ "$(json_get "$WORK/katib.json" 's["trials"]["completed"]')" = 4 ] || fail "katib: not 4 completed"
assert_journal_sane "$WORK/katib" 3
check_values_are_printed "$WORK/katib" stdout

# 4. A script that prints nothing the collector reads fails ExitedShort, and says why.
sed -e "s|command: \[python3, $TRAIN\]|command: [sh, -c, 'echo training; echo \"acc: 0.9\"', noop]|" \
  -e 's/maxTrials: 9/maxTrials: 1/' -e 's/parallelism: 2/parallelism: 1/' \
  examples/byo/plain/stdout.yaml >"$WORK/nothing.yaml"
grep -q "echo training" "$WORK/nothing.yaml" || fail "command not rewritten"
"$BSW" run "$WORK/nothing.yaml" --state-dir "$WORK/nothing" >"$WORK/nothing.out" 2>&1 \
  && fail "a sweep whose only trial printed nothing readable exited 0"
grep -q "Failed (ExitedShort: exited 0 at epochs 0 of the 9" "$WORK/nothing.out" \
  || { cat "$WORK/nothing.out" >&2; fail "no ExitedShort"; }
grep -q "no value of accuracy was read: a line must hold accuracy=VALUE and epoch=N" \
  "$WORK/nothing.out" || { cat "$WORK/nothing.out" >&2; fail "the reason is not shown"; }

sleep 0.5
if pgrep -f -- "$TRAIN" >/dev/null; then
  pgrep -af -- "$TRAIN" >&2
  fail "a trial's script outlived its sweep"
fi
assert_no_trial_processes
