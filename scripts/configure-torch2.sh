#!/usr/bin/env bash
# configure-torch2.sh [BUILD_DIR [CMAKE_ARGS...]]: configures BUILD_DIR (default build-torch2) to build the trainer and its tests against the CUDA
# LibTorch 2.x of the pinned PyPI torch wheel (scripts/torch-wheel.sh), on a machine without a GPU.
# The wheel's CMake config wants a CUDA toolkit: the cuda-toolkit[nvcc] wheel beside it provides
# one, once each versioned library has the unversioned name a linker looks for.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:-build-torch2}
shift || true  # the rest: further CMake arguments
venv=$(scripts/torch-wheel.sh)
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cuda=$site/nvidia/cu13

for lib_dir in "$site"/nvidia/*/lib; do
  for versioned in "$lib_dir"/lib*.so.[0-9]*; do
    [ -e "$versioned" ] || continue
    unversioned=${versioned%%.so.*}.so
    [ -e "$unversioned" ] || ln -s "$(basename "$versioned")" "$unversioned"
  done
done

[ -f "$build_dir/build.ninja" ] && exit 0
# The trainer runs on the data-centre GPUs the product targets (Ampere, Hopper, Blackwell); the
# list must be given because detecting it needs a GPU.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  "${launcher[@]}" -DBSW_OPERATOR=OFF -DBSW_TESTS="${BSW_TESTS:-ON}" \
  -DCMAKE_PREFIX_PATH="$site/torch/share/cmake" \
  -DCUDA_TOOLKIT_ROOT_DIR="$cuda" -DCUDAToolkit_ROOT="$cuda" \
  -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" \
  -DTORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-8.0;9.0;10.0}" "$@"
