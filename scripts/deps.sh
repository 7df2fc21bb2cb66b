#!/usr/bin/env bash
# deps.sh [run|all]: installs the Debian packages budgetsweep needs. `run` (make run): what builds
# budgetsweep and the trainer and runs a local sweep. `all` (the default; make test): that and
# what the tests need (test libraries, the browser, image builders, container runtime, Prometheus).
# Idempotent: when all packages are present it changes nothing and asks no registry.
set -euo pipefail

run_packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-pthread
  prometheus-cpp-dev libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev
  libturbojpeg0-dev libpng-dev
  dataset-fashion-mnist
)
test_packages=(
  clang-format openssl curl prometheus
  googletest libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  python3-yaml python3-venv python3-torch chromium
  mmdebstrap buildah
  runc containernetworking-plugins iptables nftables iproute2
)
case "${1:-all}" in
  run) packages=("${run_packages[@]}") ;;
  all) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "usage: $0 [run|all]" >&2
    exit 2
    ;;
esac

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
