#!/usr/bin/env bash
# Every sweep in examples/ (each *.yaml directly in it is one BudgetSweep) passes
# `budgetsweep validate`. Objects the sweeps need (examples/pvc/) are checked against the test
# cluster by tests/cluster/examples_test.sh, with the sweeps.
set -euo pipefail
: "${BSW:?path to budgetsweep}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shopt -s nullglob
files=("$ROOT"/examples/*.yaml)
[ ${#files[@]} -ge 4 ] || { echo "FAIL: expected at least 4 examples, found ${#files[@]}"; exit 1; }
status=0
for f in "${files[@]}"; do
  if out=$("$BSW" validate "$f" 2>&1); then
    echo "ok   ${f#"$ROOT"/}"
  else
    echo "FAIL ${f#"$ROOT"/}"; sed 's/^/       | /' <<<"$out"; status=1
  fi
done
exit "$status"
