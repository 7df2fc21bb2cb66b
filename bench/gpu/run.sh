#!/usr/bin/env bash
# The GPU check, for an accelerator machine (the device tool), in under 5 minutes: builds the CUDA
# trainer against the LibTorch of the torch installed there, then on the same model (cnn2) and
# data (Fashion-MNIST, 60k training samples, batch 512) measures bf16 against fp32 samples/s, the
# loader's data-wait ratio with 0 and 8 workers, NVML utilization (sampled by nvidia-smi while
# each run trains; the method's gate is 85%), model FLOP utilization (PyTorch's FlopCounterMode
# count of a training sample, over the measured bf16 matrix-product rate and the spec's dense
# peak), and PyTorch in Python with the same settings. A resnet run shows utilization with more
# work per sample. Writes $OUT/gpu.md and $OUT/gpu.json (copy them to bench/results/).
#
#   here:        bench/gpu/fetch-debs.sh        (once: the C++ dependencies and the dataset)
#   on the GPU:  bash bench/gpu/run.sh          (carry .gpu-debs)
# BSW_GPU_DRY_RUN=1 runs the same steps on this machine's CPU with this machine's packages and
# the pinned wheel, on a small slice, to check the script itself; its figures are not GPU results.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/bsw-gpu-out}
WORK=${BSW_GPU_WORK:-/tmp/bsw-gpu}
DRY=${BSW_GPU_DRY_RUN:-0}
mkdir -p "$OUT" "$WORK"
RAW=$WORK/raw.jsonl
: > "$RAW"
log() { printf '[gpu] %s\n' "$*" >&2; }
start=$SECONDS

if [ "$DRY" = 1 ]; then
  PYTHON="$(scripts/torch-wheel.sh)/bin/python"
  DEVICE=cpu LIMIT=4096 PY_LIMIT=4096 EPOCHS=1 WORKERS=1 THREADS=$(nproc) EVAL_LIMIT=512
  DATA=/usr/share/datasets/fashion-mnist
  prefix_path=""
else
  command -v nvidia-smi >/dev/null || { log "no nvidia-smi: run this on an NVIDIA GPU machine"; exit 2; }
  PYTHON=${PYTHON:-python3}
  # The trainer holds 5,000 of the 60,000 out for validation; PyTorch trains on as many.
  DEVICE=cuda LIMIT=0 PY_LIMIT=55000 EPOCHS=3 WORKERS=8 THREADS=8 EVAL_LIMIT=0
  # The trainer's C++ dependencies and Fashion-MNIST, unpacked from the carried Debian packages.
  root=$WORK/root
  ls .gpu-debs/*.deb >/dev/null 2>&1 || { log "no .gpu-debs/: run bench/gpu/fetch-debs.sh here first"; exit 2; }
  for deb in .gpu-debs/*.deb; do dpkg -x "$deb" "$root"; done
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig:$root/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  DATA=$root/usr/share/datasets/fashion-mnist
  prefix_path="$root/usr;"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$WORK/gpu.txt"
fi

# ---- build ------------------------------------------------------------------------------------
torch_cmake=$("$PYTHON" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
build=$WORK/build
if [ "$DRY" = 1 ]; then
  scripts/configure-torch2.sh "$build" -DBSW_TESTS=OFF >&2
else
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBSW_OPERATOR=OFF -DBSW_TESTS=OFF -DCMAKE_PREFIX_PATH="$prefix_path$torch_cmake" \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DTORCH_CUDA_ARCH_LIST=9.0 >&2
fi
cmake --build "$build" --target budgetsweep-trainer -j "$(nproc)" >&2
TRAINER=$build/trainer-image/budgetsweep-trainer
"$TRAINER" --version | tee "$WORK/version.txt"
log "built in $((SECONDS - start)) s"

# ---- runs -------------------------------------------------------------------------------------
sample_utilization() {  # sample_utilization FILE: NVML utilization every 100 ms until killed
  if [ "$DRY" = 1 ]; then sleep 3600; else
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 100 > "$1"
  fi
}
measure() {  # measure CASE COMMAND...: one run, its JSON lines tagged, NVML sampled alongside
  local case=$1; shift
  local samples="$WORK/util-${case// /_}.csv"
  : > "$samples"
  sample_utilization "$samples" & local sampler=$!
  "$@" | "$PYTHON" -c 'import json,sys
for line in sys.stdin:
    if line.startswith("{"):
        d=json.loads(line); d["case"]=sys.argv[1]; d["nvml_samples"]=sys.argv[2]; print(json.dumps(d))' \
    "$case" "$samples" >> "$RAW"
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  log "$case done at $((SECONDS - start)) s"
}
ours=("$TRAINER" --data-dir "$DATA" --device "$DEVICE" --train-limit "$LIMIT" --epochs "$EPOCHS"
  --batch-size 512 --threads "$THREADS" --prefetch 8 --eval-limit "$EVAL_LIMIT" --linger-seconds 0
  --summary-json)
theirs=("$PYTHON" bench/trainer/cnn2_pytorch.py --data-dir "$DATA" --device "$DEVICE"
  --train-limit "$PY_LIMIT" --epochs "$EPOCHS" --batch-size 512 --threads "$THREADS" --channels-last)

for precision in bf16 fp32; do
  measure "ours cnn2 $precision workers $WORKERS" "${ours[@]}" --model cnn2 --precision "$precision" --workers "$WORKERS"
  measure "pytorch cnn2 $precision workers $WORKERS" "${theirs[@]}" --precision "$precision" --workers "$WORKERS"
done
measure "ours cnn2 bf16 workers 0" "${ours[@]}" --model cnn2 --precision bf16 --workers 0
measure "ours resnet bf16 workers $WORKERS" "${ours[@]}" --model resnet --precision bf16 --workers "$WORKERS"

# Training FLOPs per cnn2 sample, and the bf16 matrix-product rate this device reaches.
"$PYTHON" bench/trainer/cnn2_pytorch.py --count-flops | sed 's/}$/, "case": "flops"}/' >> "$RAW"
"$PYTHON" - "$DEVICE" >> "$RAW" <<'PY'
import json, sys, time, torch
device = sys.argv[1]
n = 8192 if device == "cuda" else 1024
a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
for _ in range(3):
    a @ b
if device == "cuda":
    torch.cuda.synchronize()
start = time.perf_counter()
for _ in range(10):
    a @ b
if device == "cuda":
    torch.cuda.synchronize()
print(json.dumps({"case": "matmul", "bf16_flops_per_second": 10 * 2 * n ** 3 / (time.perf_counter() - start),
                  "torch": torch.__version__}))
PY

"$PYTHON" bench/gpu/report.py "$RAW" "$OUT" "$DRY" "$(cat "$WORK/gpu.txt" 2>/dev/null || echo cpu dry run)" \
  "$(cat "$WORK/version.txt")" "$((SECONDS - start))"
log "done in $((SECONDS - start)) s: $OUT/gpu.md"
