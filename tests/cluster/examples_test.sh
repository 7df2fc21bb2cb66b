#!/usr/bin/env bash
# Every file under examples/ (the sweeps, and the objects they need such as examples/pvc/) is
# accepted by a server-side dry run against the BudgetSweep CRD on the test cluster, in a namespace
# that enforces Pod Security "restricted"; a Katib Experiment (examples/byo/katib/) as
# `budgetsweep convert katib` (the budgetsweep binary is $1) converts it. `budgetsweep validate`
# checks the sweeps offline (tests/e2e/examples_test.sh). Without KUBECONFIG it skips (exit 77).
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set (eval \"\$(tests/cluster/up.sh | tail -1)\")"
  exit 77
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BSW=${1:?usage: examples_test.sh BUDGETSWEEP}
TMP=$(mktemp -d)
NS=examples-$(date +%s)-$$
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }
trap 'k delete namespace "$NS" --wait=false >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT

k apply -f "$ROOT/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s crd/budgetsweeps.budgetsweep.dev \
  crd/budgetpools.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
k label namespace "$NS" pod-security.kubernetes.io/enforce=restricted >/dev/null

status=0 count=0
while IFS= read -r f; do
  count=$((count + 1))
  if grep -q '^kind: Experiment$' "$f"; then
    "$BSW" convert katib "$f" --gpu-hours 1 --max-resource 3 >"$TMP/converted.yaml" 2>/dev/null \
      || { echo "FAIL ${f#"$ROOT"/}: budgetsweep convert katib exited $?"; status=1; continue; }
    applied=$TMP/converted.yaml
  else
    applied=$f
  fi
  if out=$(k apply --dry-run=server -n "$NS" -f "$applied" 2>&1); then
    echo "ok   ${f#"$ROOT"/}: $out"
  else
    echo "FAIL ${f#"$ROOT"/}"; sed 's/^/       | /' <<<"$out"; status=1
  fi
done < <(find "$ROOT/examples" -type f -name '*.yaml' | sort)
[ "$count" -ge 5 ] || { echo "FAIL: expected at least 5 files under examples/, found $count"; exit 1; }
exit "$status"
