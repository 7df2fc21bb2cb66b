#!/usr/bin/env bash
# The pool example (examples/pool/): the BudgetPool and every sweep beside it pass
# `budgetsweep validate`, and every sweep's spec.budget.poolRef names that pool.
set -euo pipefail
: "${BSW:?path to budgetsweep}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir="$ROOT/examples/pool"
out=$("$BSW" validate "$dir/team-a.yaml")
echo "$out"
grep -q 'valid BudgetPool "team-a"' <<<"$out" || { echo "FAIL: team-a.yaml is not a BudgetPool"; exit 1; }
sweeps=0
for f in "$dir"/*.yaml; do
  [ "$f" = "$dir/team-a.yaml" ] && continue
  out=$("$BSW" validate "$f") || { echo "FAIL ${f#"$ROOT"/}: $out"; exit 1; }
  grep -q "valid BudgetSweep" <<<"$out" || { echo "FAIL ${f#"$ROOT"/}: not a BudgetSweep"; exit 1; }
  python3 - "$f" <<'PY' || { echo "FAIL ${f#"$ROOT"/}: spec.budget.poolRef.name is not team-a"; exit 1; }
import sys, yaml
sweep = yaml.safe_load(open(sys.argv[1]))
sys.exit(0 if sweep["spec"]["budget"]["poolRef"]["name"] == "team-a" else 1)
PY
  echo "ok   ${f#"$ROOT"/} draws on team-a"
  sweeps=$((sweeps + 1))
done
[ "$sweeps" -ge 2 ] || { echo "FAIL: the example shares the pool between $sweeps sweep(s)"; exit 1; }
