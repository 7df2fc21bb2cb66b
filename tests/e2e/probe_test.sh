#!/usr/bin/env bash
# The probe phase on the decode-heavy image folder, with the real trainer: the runner is killed
# with -9 while probing and run again with the same --state-dir. The probe phase picks the fastest
# candidate (with loader workers when the cores are free), workers measure a lower data-wait ratio
# than the naive baseline (the template's workers 0), it stays within
# spec.throughput.maxBudgetFraction, probes no candidate twice, and every trial runs with the
# chosen settings.
source "$(dirname "$0")/lib.sh"
: "${TRAINER:?path to budgetsweep-trainer}"

# 128x128 JPEGs decoded, cropped and resized to 28x28 for a small MLP: decoding dominates a step.
"$TRAINER" export --out "$WORK/folder" --size 128 --format jpeg --limit 2500 >/dev/null

cat >"$WORK/sweep.yaml" <<YAML
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata:
  name: probe
spec:
  budget: {gpuHours: 0.04}
  objective: {metric: validation_accuracy, goal: maximize}
  resource: {unit: epochs, min: 1, max: 3, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 3}
  parallelism: 1
  maxTrials: 2
  searchSpace:
    lr: {type: logUniform, min: 1.0e-3, max: 1.0e-2}
  throughput:
    enabled: true
    targetUtilization: 0.85
    probeSteps: 20
    maxBudgetFraction: 0.3
    candidates: {workers: [0, 1, 2], prefetch: [8]}
  trial:
    gpus: 0
    maxRetries: 0
    template:
      spec:
        terminationGracePeriodSeconds: 5
        containers:
          - name: trainer
            image: budgetsweep-trainer
            command: ["$TRAINER"]
            args: [--dataset=image-folder, "--data-dir=$WORK/folder", --validation-size=500,
                   --model=mlp, --threads=1, --workers=0, --prefetch=1]
YAML

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" >"$WORK/first.log" 2>&1 &
pid=$!
# Kill the runner once the second probe run has been launched.
for _ in $(seq 1 200); do
  launches=$(grep -c ProbeLaunched "$WORK/state/journal.jsonl" 2>/dev/null || true)
  [ "${launches:-0}" -ge 2 ] && break
  sleep 0.1
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
echo "killed the runner after $(grep -c ProbeLaunched "$WORK/state/journal.jsonl") probe launches"

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "resumed run exited non-zero"; }
python3 -m json.tool "$WORK/status.json" | sed -n '/"throughput"/,$p'
grep -E "probing|measured|throughput" "$WORK/progress.log" || fail "no probe lines in the progress"

python3 - "$WORK/status.json" "$WORK/state" <<'PY' || fail "probe phase checks"
import json, os, sys
status, state = json.load(open(sys.argv[1])), sys.argv[2]
t = status["throughput"]
assert status["phase"] == "Completed", status["phase"]
assert t["phase"] == "Decided", t
chosen, baseline = t["chosen"], t["baseline"]
# Among the candidates that meet the target (all of them when none does), the fastest wins, the
# fewest workers among those within 5% of it. On an idle machine that has loader workers; with
# both cores busy (make test runs other tests beside this one) extra threads may not pay, but
# workers still cut the data wait below the baseline's.
pool = [p for p in t["probes"] if p["utilization"] >= t["targetUtilization"]] or t["probes"]
fastest = max(p["samplesPerSecond"] for p in pool)
band = [p for p in pool if p["samplesPerSecond"] >= 0.95 * fastest]
assert chosen["samplesPerSecond"] >= 0.95 * fastest, (chosen, fastest)
workers = lambda p: p["settings"].get("workers", 0)
assert workers(chosen) == min(workers(p) for p in band), (chosen, band)
with_workers = [p for p in t["probes"] if workers(p) > 0]
assert with_workers and min(p["dataWaitRatio"] for p in with_workers) < baseline["dataWaitRatio"], (
    with_workers, baseline)
assert t["budgetUsed"] <= t["budgetLimit"], t
assert "1 - dataWaitRatio" in t["utilizationSource"]
gate = [c for c in status["conditions"] if c["type"] == "ThroughputBelowTarget"][0]
# Whether a candidate meets the 0.85 gate depends on how many cores are free to decode (make test
# runs other tests beside this one); either way the condition says so, with the figures.
if t["targetMet"]:
    assert gate["status"] == "False" and gate["reason"] == "TargetMet", gate
else:
    assert gate["status"] == "True" and gate["reason"] == "BelowTarget", gate
    assert "data wait" in gate["message"] and "baseline" in gate["message"], gate

events = [json.loads(l) for l in open(os.path.join(state, "journal.jsonl")) if l.strip()]
launched = [e for e in events if e["event"] == "ProbeLaunched"]
settings = [json.dumps(e["params"]) for e in launched]
assert len(settings) == len(set(settings)) == 4, f"probes launched: {settings}"
assert sum(e["event"] == "ThroughputDecided" for e in events) == 1
first_trial = next(i for i, e in enumerate(events) if e["event"] == "TrialCreated")
decided = next(i for i, e in enumerate(events) if e["event"] == "ThroughputDecided")
assert decided < first_trial, "a trial started before the probe phase decided"

# Every trial segment ran with the chosen settings after the template's args.
for trial in sorted(os.listdir(os.path.join(state, "trials"))):
    for seg in os.listdir(os.path.join(state, "trials", trial)):
        if not seg.startswith("seg-"):
            continue
        argv = json.load(open(os.path.join(state, "trials", trial, seg, "launch.json")))["argv"]
        if "-p" in trial:
            assert any(a.startswith("--probe-steps=") for a in argv), argv
        else:
            # The last occurrence: the chosen settings may repeat a template arg (--workers=0).
            for arg in t["trialArgs"]:
                assert arg in argv, (arg, argv)
                last = len(argv) - 1 - argv[::-1].index(arg)
                assert last > argv.index("--workers=0"), (arg, argv)
print(f"chosen {chosen['settings']} data wait {chosen['dataWaitRatio']:.3f} vs baseline "
      f"{baseline['dataWaitRatio']:.3f}; probing used {t['budgetUsed']} of {t['budgetLimit']} GPU-h")
PY
assert_no_trial_processes
