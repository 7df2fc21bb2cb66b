#!/usr/bin/env bash
# Soak benchmark (not in CI), issue #23 point 5: the chart's operator on the test cluster's real
# node, with its projected ServiceAccount token of the shortest lifetime the API server issues
# (serviceAccount.tokenExpirationSeconds=600, which the kubelet renews at 80%), runs sweeps of
# curve-trainer pods back to back for SOAK_SECONDS (default 1500: past two token lifetimes), then
# reports:
#   - 401s: responses the operator logged as Unauthorized (want 0);
#   - token_reloaded events: new tokens the operator read (want >= 2);
#   - operator restarts (want 0), and whether every sweep ended (Completed or BudgetExhausted);
#   - lost decisions: per sweep, the decisions the operator logged against the events journaled in
#     its BudgetSweepTrials and status.sweepEvents (want equal: every decision made was recorded).
# It exits 1 when any of these is off, and appends a dated section to bench/results/soak.md with
# the command.
#
# Usage (a cluster with the node and the images; as root):
#   make cluster-up && export KUBECONFIG=~/.cache/budgetsweep/cluster/admin.kubeconfig
#   BSW_CLUSTER_DIR=~/.cache/budgetsweep/cluster bench/soak/token_rotation.sh
# Environment: SOAK_SECONDS (default 1500), SECONDS_PER_EPOCH of the trainer (default 8).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${KUBECONFIG:?the test cluster's admin kubeconfig}"
: "${BSW_CLUSTER_DIR:?the test cluster's state directory (node/node.env)}"
# shellcheck source=/dev/null
. "$BSW_CLUSTER_DIR/node/node.env"
SOAK_SECONDS=${SOAK_SECONDS:-1500}
SECONDS_PER_EPOCH=${SECONDS_PER_EPOCH:-8}
VERSION=$("$ROOT/scripts/project-version")
# shellcheck source=../../tests/cluster/curve_sweep.sh
. "$ROOT/tests/cluster/curve_sweep.sh"
HELM=$("$ROOT/tests/cluster/build.sh" helm | sed -n 's/^helm=//p')
NS=bsw-soak-$(printf '%04x' $RANDOM)
REL=soak
TMP=$(mktemp -d)
k() { kubectl --request-timeout=30s "$@"; }
cleanup() {
  set +e
  "$HELM" uninstall "$REL" -n "$NS" >/dev/null 2>&1
  k delete namespace "$NS" --wait=false >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
say() { printf '[soak] %s\n' "$*" >&2; }

k apply -f "$ROOT/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s \
  crd/budgetsweeps.budgetsweep.dev crd/budgetsweeptrials.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
"$HELM" install "$REL" "$ROOT/charts/budgetsweep" -n "$NS" --wait --timeout 180s \
  --set serviceAccount.tokenExpirationSeconds=600 \
  --set-string "nodeSelector.kubernetes\.io/hostname=$BSW_NODE_NAME" >/dev/null
say "operator installed in $NS; sweeps for ${SOAK_SECONDS}s"

sweep() {   # name
  curve_sweep "$1" "  budget: {gpuHours: 0.1}
  scheduler: {algorithm: asha, mode: stop}
  parallelism: 2
  maxTrials: 6
  searchSpace:
    lr: {type: logUniform, min: 1.0e-3, max: 1.0e-1}" "\"--seconds-per-epoch=$SECONDS_PER_EPOCH\"" \
    "            resources: {requests: {cpu: 100m, memory: 64Mi}}"
}
phase() { k -n "$NS" get bsw "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }

start=$(date +%s)
sweeps=()
ended_bad=()
while [ $(($(date +%s) - start)) -lt "$SOAK_SECONDS" ]; do
  name=s${#sweeps[@]}
  sweep "$name" | k apply -f - >/dev/null
  sweeps+=("$name")
  p=""
  for _ in $(seq 1 1200); do
    p=$(phase "$name")
    case $p in Completed | BudgetExhausted | Failed) break ;; esac
    sleep 1
  done
  case $p in Completed | BudgetExhausted) ;; *) ended_bad+=("$name:$p") ;; esac
  say "$name ended $p at $(($(date +%s) - start))s"
done
elapsed=$(($(date +%s) - start))

pod=$(k -n "$NS" get pods -l app.kubernetes.io/name=budgetsweep -o jsonpath='{.items[0].metadata.name}')
restarts=$(k -n "$NS" get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}')
k -n "$NS" logs "$pod" >"$TMP/operator.log"
unauthorized=$(grep -c -i 'unauthorized\|"code":401\| 401' "$TMP/operator.log" || true)
reloads=$(grep -c '"event":"token_reloaded"' "$TMP/operator.log" || true)
k -n "$NS" get bsw -o json >"$TMP/sweeps.json"
k -n "$NS" get bswt -o json >"$TMP/trials.json"
lost=$(python3 - "$TMP/operator.log" "$TMP/sweeps.json" "$TMP/trials.json" "$NS" <<'PY'
import collections, json, sys
log, sweeps, trials, ns = sys.argv[1:5]
decided = collections.Counter()
for line in open(log):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "decision":
        decided[e["sweep"]] += 1
journaled = collections.Counter()
for s in json.load(open(sweeps))["items"]:
    journaled[ns + "/" + s["metadata"]["name"]] += len(s.get("status", {}).get("sweepEvents", []))
for t in json.load(open(trials))["items"]:
    sweep = t["metadata"]["labels"]["budgetsweep.dev/sweep"]
    journaled[ns + "/" + sweep] += len(t.get("status", {}).get("events", []))
off = [f"{k}: {decided[k]} decided, {journaled[k]} journaled"
       for k in sorted(set(decided) | set(journaled)) if decided[k] != journaled[k]]
print("; ".join(off) if off else "none")
PY
)

verdict=pass
[ "$unauthorized" = 0 ] && [ "$reloads" -ge 2 ] && [ "$restarts" = 0 ] &&
  [ ${#ended_bad[@]} -eq 0 ] && [ "$lost" = none ] && [ "$elapsed" -ge 1200 ] || verdict=FAIL
report="## $(date -u +%F) token rotation soak: $verdict

\`BSW_CLUSTER_DIR=$BSW_CLUSTER_DIR SOAK_SECONDS=$SOAK_SECONDS SECONDS_PER_EPOCH=$SECONDS_PER_EPOCH bench/soak/token_rotation.sh\`

| measure | value | want |
|---|---|---|
| soak | ${elapsed} s, ${#sweeps[@]} sweeps | >= 1200 s (two 600 s token lifetimes) |
| 401 / Unauthorized lines in the operator log | $unauthorized | 0 |
| token_reloaded (new tokens read) | $reloads | >= 2 |
| operator restarts | $restarts | 0 |
| sweeps that did not end Completed/BudgetExhausted | ${ended_bad[*]:-none} | none |
| decisions logged but not journaled (or the reverse) | $lost | none |
"
printf '%s\n' "$report"
printf '%s\n' "$report" >>"$ROOT/bench/results/soak.md"
[ "$verdict" = pass ]
