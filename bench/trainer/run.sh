#!/usr/bin/env bash
# Reproduces bench/results/trainer.{md,json}: benchmarks 1-4 of issue 3 on this machine.
#   bench/trainer/run.sh [BUILD_DIR]        (default build; needs budgetsweep-trainer built)
# Python side: Debian's python3-torch (/usr/bin/python3), nothing pip-installed. Both sides get
# THREADS intra-op threads (default 1: with 2 cores, a second compute thread stalls whenever any other process runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
COMMAND="bench/trainer/run.sh $*"
BUILD_DIR=${1:-build}
THREADS=${THREADS:-1}
TRAINER="$BUILD_DIR/trainer-image/budgetsweep-trainer"
WORK=${BENCH_WORK:-/tmp/bsw-trainer-bench}
RAW="$WORK/raw.jsonl"
mkdir -p "$WORK"
: > "$RAW"

# The PyTorch side needs Debian's python3-torch (not part of `make deps`: only this bench uses it).
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q python3-torch
fi

record() {  # record BENCH CASE  (reads the trainer's --summary-json line on stdin)
  python3 -c 'import json,sys; b,c=sys.argv[1:3]
for line in sys.stdin:
    if line.startswith("{"): d=json.loads(line); d.update(bench=b, case=c); print(json.dumps(d))' "$1" "$2" >> "$RAW"
}

common=(--threads "$THREADS" --linger-seconds 0 --summary-json)

# 1 + 3: cnn2, one epoch on 20k samples, batch 128, bf16 and fp32, against PyTorch.
for precision in bf16 fp32; do
  "$TRAINER" "${common[@]}" --model cnn2 --train-limit 20000 --epochs 1 --batch-size 128 \
    --precision "$precision" --workers 1 | record 1 "budgetsweep-trainer $precision"
  for layout in "" --channels-last; do
    /usr/bin/python3 bench/trainer/cnn2_pytorch.py --train-limit 20000 --batch-size 128 \
      --threads "$THREADS" --precision "$precision" --workers 0,1 $layout |
      python3 -c 'import json,sys; b,c=sys.argv[1:3]
for line in sys.stdin:
    d=json.loads(line); d.update(bench=b, case=c); print(json.dumps(d))' 1 "pytorch $precision${layout:+ channels_last}" >> "$RAW"
  done
done

# 2: the decode-heavy image folder (96x96 JPEG, decoded, random-cropped, flipped, resized to 28).
FOLDER="$WORK/fmnist96"
[ -f "$FOLDER/dataset.json" ] || "$TRAINER" export --out "$FOLDER" --size 96 --format jpeg --limit 12000
for setting in "0 0" "1 4" "2 8" "4 8"; do
  set -- $setting
  "$TRAINER" "${common[@]}" --dataset image-folder --data-dir "$FOLDER" --validation-size 2000 \
    --model cnn2 --epochs 1 --batch-size 128 --precision bf16 --workers "$1" --prefetch "$2" |
    record 2 "workers $1 prefetch $2"
done

# Threads: the quickstart's trial (cnn2, 5000 samples, batch 128) on 1 and 2 intra-op threads
# (passive OpenMP waiting, the trainer's default), and on 2 with libgomp's spinning default.
quick=(--linger-seconds 0 --summary-json --model cnn2 --train-limit 5000 --epochs 1 --batch-size 128)
for threads in 1 2; do
  for precision in bf16 fp32; do
    "$TRAINER" "${quick[@]}" --threads "$threads" --precision "$precision" |
      record T "threads $threads $precision"
  done
done
OMP_WAIT_POLICY=ACTIVE "$TRAINER" "${quick[@]}" --threads 2 --precision bf16 |
  record T "threads 2 bf16 OMP_WAIT_POLICY=ACTIVE"

# 4: quality, cnn2 with default settings for 10 epochs on all of Fashion-MNIST.
"$TRAINER" "${common[@]}" --model cnn2 --epochs 10 | record 4 "cnn2 defaults, 10 epochs"

python3 bench/trainer/report.py "$RAW" "$THREADS" "$COMMAND"
