#!/usr/bin/env bash
# gather-runtime.sh OUT BINARY...: copies each binary and every shared library it loads (as ldd
# resolves them) under OUT, so that OUT is a root in which the binaries run with nothing else.
# Libraries land under OUT/usr, in Debian's merged-/usr layout (OUT/lib and OUT/lib64 are links
# into it), so OUT/usr can also be copied over a Debian base. Used by the images' build stages.
set -euo pipefail
out=$1
shift
mkdir -p "$out/usr/lib" "$out/usr/lib64"
[ -e "$out/lib" ] || ln -s usr/lib "$out/lib"
[ -e "$out/lib64" ] || ln -s usr/lib64 "$out/lib64"
for binary in "$@"; do
  cp --parents -L "$binary" "$out"
  if ldd "$binary" | grep 'not found'; then
    echo "gather-runtime: $binary: a shared library is missing" >&2
    exit 1
  fi
  # "libx.so => /path (addr)" and the loader's own "/lib64/ld-linux-x86-64.so.2 (addr)"; each
  # keeps the name it is loaded by (a link's target may live elsewhere, as alternatives do).
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
    while read -r library; do
      target=$out/usr/${library#/usr/}
      mkdir -p "$(dirname "$target")"
      cp -L "$library" "$target"
    done
done
