#!/usr/bin/env bash
# A sweep with `sampler: tpe` of real trial processes: it completes within its budget, samples at
# random until a rung holds six values (three parameters: max(3 + 2, 6)), then proposes other
# configurations than the random sampler would, and the same seed gives the same configurations.
# One trial at a time, each to the full resource, so that every value is recorded before the next
# trial is created: the values TPE sees, and so its proposals, do not depend on timing.
source "$(dirname "$0")/lib.sh"

run_sweep() {
  local name=$1 sampler=$2
  curve_sweep "$WORK/$name.yaml" "$name" "  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 3, reductionFactor: 3}
  scheduler: {algorithm: random, sampler: $sampler, seed: 5}
  parallelism: 1
  maxTrials: 8" "--seconds-per-epoch=0.05"
  run_completed_sweep "$name" 8 3
}

# The TrialCreated params of a sweep's journal, one trial a line.
params() {
  python3 - "$WORK/$1/journal.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "TrialCreated":
        print(json.dumps(e["params"]))
PY
}

run_sweep tpe-a tpe
run_sweep tpe-b tpe
run_sweep rand random
params tpe-a >"$WORK/tpe-a.params"
params tpe-b >"$WORK/tpe-b.params"
params rand >"$WORK/rand.params"
cat "$WORK/tpe-a.params"

cmp -s "$WORK/tpe-a.params" "$WORK/tpe-b.params" || fail "the same seed gave other configurations"
cmp -s <(head -6 "$WORK/tpe-a.params") <(head -6 "$WORK/rand.params") \
  || fail "the first six trials are not the random sampler's"
if cmp -s <(tail -n +7 "$WORK/tpe-a.params") <(tail -n +7 "$WORK/rand.params"); then
  fail "tpe proposed the random sampler's configurations once it had values"
fi
assert_no_trial_processes
