#!/usr/bin/env bash
# Reproduces bench/results/trainer-current.{md,json}: budgetsweep-trainer built against Debian's
# LibTorch 1.13 (build/) and against the pinned torch wheel's LibTorch 2.x (build-torch2/), side
# by side in one run with PyTorch of that same wheel in Python at its best setting
# (channels_last, and the better of DataLoader num_workers 0 and 1): the same cnn2, data (20k
# Fashion-MNIST samples, one epoch), batch 128, precision and intra-op threads. Cases alternate
# round by round so that a busy spell on the machine hits every side alike; the report takes
# medians. Then a perf profile of each side's bf16 run says where the time goes.
#   bench/trainer/current.sh        (needs `make build build-torch2`; ROUNDS=3, THREADS=1)
set -euo pipefail
cd "$(dirname "$0")/../.."
COMMAND="bench/trainer/current.sh${*:+ $*}"
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-1}
WORK=${BENCH_WORK:-/tmp/bsw-trainer-current}
TRAINER_113=build/trainer-image/budgetsweep-trainer
TRAINER_2X=build-torch2/trainer-image/budgetsweep-trainer
PYTHON="$(scripts/torch-wheel.sh)/bin/python"
RAW="$WORK/raw.jsonl"
mkdir -p "$WORK"
: > "$RAW"
for binary in "$TRAINER_113" "$TRAINER_2X"; do
  [ -x "$binary" ] || { echo "current.sh: $binary not built (make build build-torch2)" >&2; exit 1; }
done

tag() {  # tag SIDE PRECISION ROUND: labels each JSON line read on stdin
  python3 -c 'import json,sys; s,p,r=sys.argv[1:4]
for line in sys.stdin:
    if line.startswith("{"): d=json.loads(line); d.update(side=s, precision=p, round=int(r)); print(json.dumps(d))' "$@" >> "$RAW"
}
ours=(--model cnn2 --train-limit 20000 --epochs 1 --batch-size 128 --workers 1 --threads "$THREADS"
  --linger-seconds 0 --summary-json)
theirs=(bench/trainer/cnn2_pytorch.py --train-limit 20000 --batch-size 128 --threads "$THREADS"
  --workers 0,1 --channels-last)

for round in $(seq 1 "$ROUNDS"); do
  for precision in bf16 fp32; do
    "$TRAINER_113" "${ours[@]}" --precision "$precision" | tag "budgetsweep-trainer 1.13" "$precision" "$round"
    "$TRAINER_2X" "${ours[@]}" --precision "$precision" --device cpu |
      tag "budgetsweep-trainer 2.x" "$precision" "$round"
    "$PYTHON" "${theirs[@]}" --precision "$precision" | tag "pytorch 2.x channels_last" "$precision" "$round"
  done
done

# Where the time goes: perf samples each side's bf16 run (at its normal speed; the LibTorch
# profiler slowed the trainer several-fold), and the report groups the samples by kind of work.
command -v perf >/dev/null || apt-get install -y -q linux-perf >&2
profile() {  # profile NAME COMMAND...
  perf record -q -F 999 -o "$WORK/perf-$1.data" -- "${@:2}" > /dev/null 2>&1
  perf report -i "$WORK/perf-$1.data" --no-children --sort dso,sym --stdio 2>/dev/null \
    > "$WORK/perf-$1.txt"
}
profile ours "$TRAINER_2X" "${ours[@]}" --precision bf16 --device cpu --eval-limit 256
profile ours-113 "$TRAINER_113" "${ours[@]}" --precision bf16 --eval-limit 256
profile pytorch "$PYTHON" "${theirs[@]}" --precision bf16 --workers 0

"$PYTHON" bench/trainer/current_report.py "$RAW" "$WORK" "$THREADS" "$COMMAND"
