#!/usr/bin/env bash
# The Python SDK's snapshots and exploits with the real runner: examples/byo/sdk/train.py in a pbt
# sweep (4 trials, lr and weight-decay mutable, paused every epoch to 4). Every journaled exploit
# is carried out: the trial's next segment starts from the donor's snapshot (the SDK says so), and
# a later segment of it resumes from its own checkpoint. Skips (77) without python3-torch or
# Fashion-MNIST.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${BSW_SDK_PYTHON:-/usr/bin/python3}

require_torch_and_fashion_mnist "$PY"

# The example's sweep as pbt, without the probe, with absolute paths.
python3 - "$ROOT" "$PY" "$ROOT/examples/byo/sdk/sweep.yaml" >"$WORK/sweep.yaml" <<'PY'
import re, sys
root, py, path = sys.argv[1:]
s = open(path).read()
edits = [
    (r"  throughput:\n(    .*\n|      .*\n)*", ""),
    (r"algorithm: asha", "algorithm: pbt"),
    (r"maxTrials: 9", "maxTrials: 4"),
    (r"    max: 9\n", "    max: 4\n"),
    (r"    reductionFactor: .*\n", ""),
    (r"(    (lr|weight-decay): \{.*)\}", r"\1, mutable: true}"),
    (r"command: \[python3, examples/byo/sdk/train.py\]",
     "command: [%s, %s/examples/byo/sdk/train.py]" % (py, root)),
    (r"value: sdk/python", "value: %s/sdk/python" % root),
]
for pattern, replacement in edits:
    s, n = re.subn(pattern, replacement, s)
    assert n >= 1, "no match for " + pattern
print(s, end="")
PY
"$BSW" validate "$WORK/sweep.yaml" >/dev/null || fail "the pbt sweep is not valid"

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "run exited $?"; }
S="$WORK/status.json"
[ "$(json_get "$S" 's["phase"]')" = Completed ] || fail "phase is not Completed"
json_get "$S" 's["budget"]["used"] <= s["budget"]["gpuHours"] or sys.exit(1)' >/dev/null \
  || fail "budget used exceeds the budget"

python3 - "$WORK/state" <<'PY' || fail "exploits"
import json, os, sys
state = sys.argv[1]
events = [json.loads(l) for l in open(os.path.join(state, "journal.jsonl")) if l.strip()]
name = lambda t: "byo-sdk-t%04d" % t
log = lambda t, seg: open(os.path.join(state, "trials", name(t), "seg-%d" % seg,
                                       "trainer.log")).read()
exploits = 0
for i, e in enumerate(events):
    if e["event"] != "TrialExploited":
        continue
    exploits += 1
    t, at = e["trial"], e["rung"] + 1
    snapshot = os.path.join(state, "trials", name(e["donor"]), "checkpoint", "snapshot-%d.pt" % at)
    segments = []  # the trial's segments until its next exploit
    for x in events[i + 1:]:
        if x["event"] == "TrialExploited" and x["trial"] == t:
            break
        if x["event"] == "SegmentLaunched" and x["trial"] == t:
            segments.append(x["segment"])
    assert segments, f"{name(t)} never ran after its exploit"
    first = log(t, segments[0])
    assert f"budgetsweep: exploited {snapshot} at {at}" in first, f"{name(t)}: {first}"
    for seg in segments[1:]:
        later = log(t, seg)
        assert "exploited" not in later and "resumed at epoch" in later, f"{name(t)}: {later}"
assert exploits >= 1, "no exploit"
print(f"{exploits} exploits, each started from its donor's snapshot")
PY
assert_no_trial_processes
json_get "$S" '"%d trials, best %s = %.4f at %s epochs, used %.4f of %s GPU-h" % (
  s["trials"]["created"], s["best"]["trial"], s["best"]["value"], s["best"]["resource"],
  s["budget"]["used"], s["budget"]["gpuHours"])'
