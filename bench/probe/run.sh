#!/usr/bin/env bash
# Reproduces bench/results/probe.{md,json}: on the decode-heavy image folder, the device-hours a
# sweep spends to reach its best test accuracy with the probe phase (spec.throughput) and
# without it (the template's naive loader settings: workers 0, prefetch 1).
#   bench/probe/run.sh [BUILD_DIR]        (default build; needs budgetsweep and the trainer built)
# The two sweeps are the same but for spec.throughput.enabled: the same seed gives the same
# configurations, and the loader's batches do not depend on the worker count, so every trial
# computes the same numbers and ASHA takes the same decisions; only the time (and so the budget)
# differs. Each runs twice, in the order naive, probe, probe, naive, so that a machine that gets
# busier or quieter during the run favours neither. About 10 minutes on two shared CPU cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
COMMAND="bench/probe/run.sh${*:+ $*}"
BUILD_DIR=$(cd "${1:-build}" && pwd)
BSW="$BUILD_DIR/operator/cmd/budgetsweep"
TRAINER="$BUILD_DIR/trainer-image/budgetsweep-trainer"
WORK=${BENCH_WORK:-/tmp/bsw-probe-bench}
mkdir -p "$WORK"

# 128x128 JPEGs, decoded, cropped, flipped and resized to 28x28 in the loader.
FOLDER="$WORK/fmnist128"
[ -f "$FOLDER/dataset.json" ] ||
  "$TRAINER" export --out "$FOLDER" --size 128 --format jpeg --quality 90 --limit 7000 >/dev/null

sweep() {  # sweep NAME ENABLED
  cat <<YAML
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata:
  name: $1
spec:
  budget: {gpuHours: 0.5}
  objective: {metric: validation_accuracy, goal: maximize}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 11}
  parallelism: 1
  maxTrials: 6
  searchSpace:
    lr: {type: logUniform, min: 3.0e-4, max: 1.0e-2}
    weight-decay: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
  throughput:
    enabled: $2
    targetUtilization: 0.85
    probeSteps: 30
    candidates: {workers: [0, 1, 2], prefetch: [4]}
  trial:
    gpus: 0
    maxRetries: 0
    template:
      spec:
        terminationGracePeriodSeconds: 10
        containers:
          - name: trainer
            image: budgetsweep-trainer
            command: ["$TRAINER"]
            args: [--dataset=image-folder, "--data-dir=$FOLDER", --train-limit=6000,
                   --validation-size=1000, --eval-limit=1000, --model=mlp, --threads=1,
                   --workers=0, --prefetch=1, --summary-json]
YAML
}

for name in naive-1 probe-1 probe-2 naive-2; do
  enabled=false
  [[ $name == probe-* ]] && enabled=true
  rm -rf "${WORK:?}/$name"
  sweep "$name" "$enabled" >"$WORK/$name.yaml"
  start=$(date +%s.%N)
  "$BSW" run "$WORK/$name.yaml" --state-dir "$WORK/$name" --output json >"$WORK/$name.status.json" \
    2>"$WORK/$name.log"
  end=$(date +%s.%N)
  echo "$name: $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$start" "$end") s wall"
done

python3 bench/probe/report.py "$WORK" "$COMMAND"
