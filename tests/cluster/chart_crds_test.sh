#!/usr/bin/env bash
# The chart ships the CRDs of crds/ (the single source of truth) in charts/budgetsweep/crds/, where
# Helm installs them before the templates and keeps them on uninstall: every file in crds/ must
# have a byte-identical copy there, and the chart must hold no other CRD.
#   fix: cp crds/*.yaml charts/budgetsweep/crds/
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
status=0
shopt -s nullglob
sources=("$ROOT"/crds/*)
[ ${#sources[@]} -gt 0 ] || { echo "FAIL: no file in crds/"; exit 1; }
for f in "${sources[@]}"; do
  copy=$ROOT/charts/budgetsweep/crds/$(basename "$f")
  if [ ! -f "$copy" ]; then
    echo "FAIL: ${f#"$ROOT"/} has no copy in charts/budgetsweep/crds/"; status=1
  elif ! cmp -s "$f" "$copy"; then
    echo "FAIL: ${copy#"$ROOT"/} differs from ${f#"$ROOT"/}"; status=1
  else
    echo "ok   ${f#"$ROOT"/} = ${copy#"$ROOT"/}"
  fi
done
for copy in "$ROOT"/charts/budgetsweep/crds/*; do
  [ -f "$ROOT/crds/$(basename "$copy")" ] ||
    { echo "FAIL: ${copy#"$ROOT"/} is not in crds/"; status=1; }
done
exit "$status"
