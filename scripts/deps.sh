#!/usr/bin/env bash
# Installs every Debian package budgetsweep needs to build, run and test. Idempotent: when all
# packages are present it changes nothing and asks no registry.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config clang-format git openssl curl
  libtorch-dev libopenblas0-pthread
  prometheus prometheus-cpp-dev libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev
  googletest libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libturbojpeg0-dev libpng-dev
  dataset-fashion-mnist
  python3-yaml python3-venv chromium
  mmdebstrap buildah
  runc containernetworking-plugins iptables nftables iproute2
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
