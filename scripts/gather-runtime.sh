#!/usr/bin/env bash
# gather-runtime.sh OUT BINARY...: copies each binary and every shared library it loads (as ldd
# resolves them, at the same paths) under OUT, so that OUT is a root in which the binaries run
# with nothing else. Used by the images' build stages.
set -euo pipefail
out=$1
shift
for binary in "$@"; do
  cp --parents -L "$binary" "$out"
  if ldd "$binary" | grep 'not found'; then
    echo "gather-runtime: $binary: a shared library is missing" >&2
    exit 1
  fi
  # "libx.so => /path (addr)" and the loader's own "/lib64/ld-linux-x86-64.so.2 (addr)".
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
    while read -r library; do cp --parents -L "$library" "$out"; done
done
