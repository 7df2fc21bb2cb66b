#!/usr/bin/env bash
# A script on the Python SDK joins a real local sweep: examples/byo/sdk/sweep.yaml runs
# examples/byo/sdk/train.py (PyTorch, a slice of Fashion-MNIST) through the throughput probe (the
# SDK's probe mode) and pause-mode ASHA, so trials pause at their rung with a checkpoint and
# resume from it. Needs Debian's python3-torch and dataset-fashion-mnist; without them it skips
# (exit 77), saying which is missing.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${BSW_SDK_PYTHON:-/usr/bin/python3}

require_torch_and_fashion_mnist "$PY"

# By hand, with no budgetsweep around, the script trains to its own default and exits 0.
PYTHONPATH="$ROOT/sdk/python" "$PY" "$ROOT/examples/byo/sdk/train.py" --train-limit=500 \
  --validation-size=200 >"$WORK/by-hand.log" 2>&1 \
  || { cat "$WORK/by-hand.log" >&2; fail "by hand: exit $?"; }
grep -q '^epoch 9/9 ' "$WORK/by-hand.log" || fail "by hand: no epoch 9/9"

# The example with absolute paths, so that the trial runs whatever the working directory.
TRAIN=$ROOT/examples/byo/sdk/train.py
sed -e "s|command: \[python3, examples/byo/sdk/train.py\]|command: [$PY, $TRAIN]|" \
  -e "s|value: sdk/python|value: $ROOT/sdk/python|" "$ROOT/examples/byo/sdk/sweep.yaml" \
  >"$WORK/sweep.yaml"
grep -qF "command: [$PY, $TRAIN]" "$WORK/sweep.yaml" || fail "command not rewritten"
grep -qF "value: $ROOT/sdk/python" "$WORK/sweep.yaml" || fail "PYTHONPATH not rewritten"

started=$(date +%s)
"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "run exited $?"; }
wall=$(($(date +%s) - started))
S="$WORK/status.json"
[ "$(json_get "$S" 's["phase"]')" = Completed ] || fail "phase is not Completed"
json_get "$S" 's["budget"]["used"] <= s["budget"]["gpuHours"] or sys.exit(1)' >/dev/null \
  || fail "budget used exceeds the budget"
[ "$(json_get "$S" 's["trials"]["completed"]')" -ge 1 ] || fail "no trial reached the max"
[ "$(json_get "$S" 's["best"]["resource"]')" = 9.0 ] || fail "best is not at the max resource"

# The probe read each candidate's figures from the SDK's probe mode.
[ "$(json_get "$S" 's["throughput"]["phase"]')" = Decided ] || fail "the probe did not decide"
json_get "$S" 'all(p.get("samplesPerSecond", 0) > 0 for p in s["throughput"]["probes"])' \
  | grep -qx True || fail "a probe measured no throughput"

# The journal is sane: no segment launched twice, none after its trial completed, one directory
# per launch (probes included). A trial paused at a rung and resumed from its checkpoint: a
# second segment from > 0 whose trainer loaded the checkpoint the first one wrote.
assert_journal_sane "$WORK/state" 9
resumed=$(python3 - "$WORK/state/journal.jsonl" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
resumed = [(e["trial"], e["segment"], int(e["from"])) for e in events
           if e["event"] == "SegmentLaunched" and e["segment"] >= 1 and e["from"] > 0]
assert resumed, "no segment resumed from a checkpoint"
print(*resumed[0])
PY
)
[ -n "$resumed" ] || fail "journal checks"
read -r trial segment from <<<"$resumed"
log=$(ls "$WORK"/state/trials/*-t"$(printf %04d "$trial")"/seg-"$segment"/trainer.log)
grep -q "^resumed at epoch $from\$" "$log" \
  || { cat "$log" >&2; fail "segment $segment did not resume at epoch $from"; }
assert_no_trial_processes

json_get "$S" '"%d trials, %d completed, best %s = %.4f at %s epochs, used %.4f of %s GPU-h" % (
  s["trials"]["created"], s["trials"]["completed"], s["best"]["trial"], s["best"]["value"],
  s["best"]["resource"], s["budget"]["used"], s["budget"]["gpuHours"])'
echo "resumed: trial $trial segment $segment from epoch $from ($log); wall ${wall} s"
json_get "$S" '"throughput: " + s["throughput"]["message"]'
