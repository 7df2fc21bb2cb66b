# Shared helpers for the end-to-end tests. Each test runs the real budgetsweep binary on real
# trial processes; ctest passes the binaries' paths in BSW, CURVE and TRAINER.
set -euo pipefail

: "${BSW:?path to budgetsweep}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsw-e2e.XXXXXX")
cleanup() {
  # Leave nothing running whatever happened: the runner, supervisors and trainers under WORK.
  pkill -KILL -f -- "$WORK" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Writes a sweep running the curve-trainer fixture. Usage: curve_sweep FILE NAME EXTRA_SPEC_YAML
# [TRAINER_ARGS]. EXTRA_SPEC_YAML is indented spec content (budget, resource, scheduler, ...).
curve_sweep() {
  local file=$1 name=$2 extra=$3 args=${4:-"--seconds-per-epoch=0.2"}
  cat >"$file" <<YAML
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata:
  name: $name
spec:
  objective: {metric: validation_accuracy, goal: maximize}
$extra
  searchSpace:
    lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
    weight-decay: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
    batch-size: {type: choice, values: [64, 128, 256]}
  trial:
    gpus: 0
    maxRetries: 1
    template:
      spec:
        terminationGracePeriodSeconds: 2
        containers:
          - name: trainer
            image: curve-trainer
            command: ["$CURVE"]
            args: [$args]
YAML
}

# Runs the sweep file $WORK/NAME.yaml with state dir $WORK/NAME and its status in $WORK/NAME.json,
# and asserts that it completed within its budget with TRIALS trials and a sane journal
# (NAME TRIALS MAX_RESOURCE).
run_completed_sweep() {
  local name=$1 trials=$2 max_resource=$3
  "$BSW" run "$WORK/$name.yaml" --state-dir "$WORK/$name" --output json >"$WORK/$name.json" \
    2>"$WORK/$name.log" || { cat "$WORK/$name.log" >&2; fail "$name: run exited $?"; }
  [ "$(json_get "$WORK/$name.json" 's["phase"]')" = Completed ] || fail "$name: phase is not Completed"
  json_get "$WORK/$name.json" 's["budget"]["used"] <= s["budget"]["gpuHours"] or sys.exit(1)' \
    >/dev/null || fail "$name: budget used exceeds the budget"
  [ "$(json_get "$WORK/$name.json" 's["trials"]["created"]')" -eq "$trials" ] \
    || fail "$name: not $trials trials"
  assert_journal_sane "$WORK/$name" "$max_resource"
}

# Runs sweep NAME ($WORK/NAME.yaml, state $WORK/NAME) until its journal holds an EVENT, then kills
# the runner with -9 before the sweep finished (NAME EVENT), for a run again on the same state.
kill_at_event() {
  local name=$1 event=$2
  "$BSW" run "$WORK/$name.yaml" --state-dir "$WORK/$name" >"$WORK/$name-killed.log" 2>&1 &
  local pid=$! waited=0
  until grep -q "$event" "$WORK/$name/journal.jsonl" 2>/dev/null; do
    [ "$waited" -lt 600 ] || fail "$name: no $event within 60 s"
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  ! grep -q SweepFinished "$WORK/$name/journal.jsonl" || fail "$name: finished before the kill"
}

# Reads a field of a JSON file with a Python expression over `s`, e.g. json_get f 's["phase"]'.
json_get() {
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"
}

# Asserts that no process of this test is left: no runner or supervisor (their command lines
# name WORK) and no trainer (its environment names a checkpoint directory under WORK).
assert_no_trial_processes() {
  sleep 0.5
  if pgrep -f -- "$WORK" >/dev/null; then
    pgrep -af -- "$WORK" >&2
    fail "runner or supervisor processes left running"
  fi
  local p
  for p in /proc/[0-9]*; do
    if grep -q "^BUDGETSWEEP_CHECKPOINT_DIR=$WORK" <<<"$(tr '\0' '\n' 2>/dev/null <"$p/environ")"; then
      fail "trainer process ${p#/proc/} left running"
    fi
  done
}

# Asserts the journal's invariants (STATE_DIR MAX_RESOURCE): no segment launched twice, no trial launched again after it
# completed, and every launched segment (and probe run) has exactly one directory.
assert_journal_sane() {
  local state=$1 max_resource=$2
  python3 - "$state" "$max_resource" <<'PY'
import json, os, sys
state, max_resource = sys.argv[1], float(sys.argv[2])
events = [json.loads(l) for l in open(os.path.join(state, "journal.jsonl")) if l.strip()]
launched = {}
completed = set()
for e in events:
    if e["event"] == "SegmentLaunched":
        key = (e["trial"], e["segment"])
        assert key not in launched, f"segment launched twice: {key}"
        assert e["trial"] not in completed, f"trial {e['trial']} launched after it completed"
        launched[key] = e
    if e["event"] == "SegmentEnded" and e["reason"] == "":
        seg = launched[(e["trial"], e["segment"])]
        if seg["until"] >= max_resource:
            completed.add(e["trial"])
probes = sum(e["event"] == "ProbeLaunched" for e in events)
dirs = sum(len([d for d in os.listdir(os.path.join(state, "trials", t)) if d.startswith("seg-")])
           for t in os.listdir(os.path.join(state, "trials")))
assert dirs == len(launched) + probes, f"{dirs} directories for {len(launched)} + {probes} launches"
print(f"journal: {len(events)} events, {len(launched)} segments, {len(completed)} completed")
PY
}

# Skips the test (exit 77) unless python $1 imports torch and Debian's Fashion-MNIST is there: the
# Python examples' needs.
require_torch_and_fashion_mnist() {
  if ! "$1" -c 'import torch' 2>/dev/null; then
    echo "SKIP: $1 cannot import torch (apt-get install python3-torch)"
    exit 77
  fi
  if [ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    echo "SKIP: no Fashion-MNIST in /usr/share/datasets/fashion-mnist (apt-get install dataset-fashion-mnist)"
    exit 77
  fi
}
