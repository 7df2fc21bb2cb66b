#!/usr/bin/env bash
# Makes (once) the virtual environment holding the pinned PyPI torch wheel and the CUDA toolkit
# wheel its CMake config needs, cached under ~/.cache/budgetsweep keyed by both versions, and
# prints its directory. The wheel carries LibTorch 2.x with CUDA; the trainer builds against it
# (build-torch2/, `make build-torch2`) and the CUDA trainer image ships it.
set -euo pipefail

torch_version=${BSW_TORCH_VERSION:-2.15.0}
cuda_version=${BSW_TORCH_CUDA_VERSION:-13.2}
cache=${BSW_CACHE:-$HOME/.cache/budgetsweep}
venv=$cache/torch-$torch_version-cuda$cuda_version

if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  mkdir -p "$cache"
  echo "torch-wheel: installing torch $torch_version with the CUDA $cuda_version toolkit into $venv (about 6 GB, once)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --no-cache-dir "torch==$torch_version" "cuda-toolkit[nvcc]==$cuda_version.*" numpy >&2
  touch "$venv/.complete"
fi
echo "$venv"
