#!/usr/bin/env bash
# Run here, before a device call: downloads the Debian packages that the CUDA trainer's build needs
# besides LibTorch (which the accelerator machine has), and Fashion-MNIST, into .gpu-debs/
# (ignored by git), for the device call to carry: nothing can be fetched on that machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu-debs
cd .gpu-debs
packages=(
  libcli11-dev nlohmann-json3-dev
  prometheus-cpp-dev libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libprometheus-cpp-push1.0
  libcivetweb-dev libcivetweb1 libcurl4-openssl-dev
  libcpp-httplib-dev libcpp-httplib0.11 libbrotli-dev libbrotli1 libssl-dev
  libturbojpeg0-dev libturbojpeg0 libpng-dev libpng16-16 zlib1g-dev
  dataset-fashion-mnist
)
apt-get download "${packages[@]}"
du -sh .
