#!/usr/bin/env bash
# Issue #23: a trial pod that Pod Security admission rejects ends its sweep instead of being
# retried forever. `budgetsweep operator` on the host against the real test cluster (no node
# needed: the API server refuses the pod before any node sees it), in a namespace that enforces
# Pod Security "restricted", with a sweep whose template asks for runAsUser: 0:
#   - the sweep ends Failed (spec.maxFailedTrials: 2 trials, each with its retry) within a minute;
#   - status.recentFailures and a TrialFailed event quote the API server ("violates PodSecurity");
#   - no trial pod exists and nothing is charged.
# Without KUBECONFIG it skips (exit 77).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BUDGETSWEEP:?path to budgetsweep}"

NS=bsw-rejected-$(printf '%04x%04x' $RANDOM $RANDOM)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsw-rejected.XXXXXX")
OPERATOR_PID=""
failures=0
# shellcheck source=namespace_lib.sh
. "$ROOT/tests/cluster/namespace_lib.sh"
k() { kubectl --cache-dir="$WORK/kube-cache" --request-timeout=30s "$@"; }
pass() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
cleanup() {
  set +e
  [ -n "$OPERATOR_PID" ] && kill -KILL "$OPERATOR_PID" 2>/dev/null && wait "$OPERATOR_PID" 2>/dev/null
  drop_namespace "$NS"
  [ "$failures" -eq 0 ] || { echo "---- operator log (last 30 lines) ----"; tail -30 "$WORK/operator.log"; }
  rm -rf "$WORK"
}
trap cleanup EXIT

k apply -f "$ROOT/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s \
  crd/budgetsweeps.budgetsweep.dev crd/budgetsweeptrials.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
k label namespace "$NS" pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null

"$BUDGETSWEEP" operator --namespace "$NS" --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 \
  --resync-interval 0.3 2>>"$WORK/operator.log" &
OPERATOR_PID=$!

k apply -f - >/dev/null <<YAML
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata: {name: as-root, namespace: $NS}
spec:
  budget: {gpuHours: 0.05}
  objective: {metric: validation_accuracy, goal: maximize}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  maxFailedTrials: 2
  searchSpace:
    lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
  trial:
    gpus: 1
    maxRetries: 1
    template:
      spec:
        securityContext: {runAsUser: 0}
        containers:
          - {name: trainer, image: budgetsweep/curve-trainer:dev}
YAML

phase=""
for _ in $(seq 1 120); do
  phase=$(k -n "$NS" get bsw as-root -o jsonpath='{.status.phase}' 2>/dev/null)
  [ "$phase" = Failed ] && break
  kill -0 "$OPERATOR_PID" 2>/dev/null || { fail "the operator died"; break; }
  sleep 0.5
done
[ "$phase" = Failed ] && pass "the sweep ends Failed" || fail "the sweep's phase is '$phase' after 60 s"

failures_json=$(k -n "$NS" get bsw as-root -o jsonpath='{.status.recentFailures}')
if grep -q 'violates PodSecurity' <<<"$failures_json" && grep -q 'runAsUser=0' <<<"$failures_json"; then
  pass "status.recentFailures quotes the API server: $(python3 -c '
import json, sys
print(json.loads(sys.argv[1])[-1]["message"][:160])' "$failures_json")"
else
  fail "status.recentFailures does not quote the refusal: $failures_json"
fi
events=$(k -n "$NS" get events --field-selector reason=TrialFailed -o jsonpath='{.items[*].message}')
grep -q 'violates PodSecurity' <<<"$events" && pass "a TrialFailed event says why" ||
  fail "no TrialFailed event with the refusal: $events"
pods=$(k -n "$NS" get pods -o name)
[ -z "$pods" ] && pass "no trial pod exists" || fail "pods exist: $pods"
used=$(k -n "$NS" get bsw as-root -o jsonpath='{.status.budget.used}')
[ "${used:-0}" = 0 ] && pass "nothing charged" || fail "charged $used GPU-hours"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
