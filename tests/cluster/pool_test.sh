#!/usr/bin/env bash
# One BudgetPool shared by two sweeps on the test cluster's real node, with the operator installed
# by Helm (a container of its own image) and SIGKILLed twice while both sweeps run; kubelet
# restarts it, and it carries on from the pool's status and the trial records:
#   1. the pool's status counts what each sweep holds (per-sweep accounts, totals, printer
#      columns) while they run; the sweeps get Warning Events when the pool denies them;
#   2. after the kills, every sweep ends, each status says why (BudgetExhausted by the pool);
#   3. the sum of the sweeps' charges is at most the pool, and the pool's used agrees with it;
#   4. no trial was created twice and no pod is left running (nothing orphaned);
#   5. a deleted sweep's charge stays in the pool.
# Trials are containers of the curve-trainer image (deterministic curves, seconds per epoch).
# Without KUBECONFIG it skips (exit 77).
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BSW_CLUSTER_DIR:?the test cluster state dir}"
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
use_test_node
POOL_HOURS=0.04 # 144 device-seconds: a few rungs of each sweep

NS=bsw-pool-$(printf '%04x%04x' $RANDOM $RANDOM)
REL=bsw
# shellcheck source=operator_lib.sh
. "$HERE/operator_lib.sh"
cleanup() {
  set +e
  if [ "$failures" -gt 0 ]; then
    k -n "$NS" get bsp,bsw,pods -o wide
    k -n "$NS" get bsp team -o yaml | sed -n '/^status:/,$p'
    k -n "$NS" logs -l app.kubernetes.io/name=budgetsweep --tail=40
    echo "--- the operator's previous container, if it restarted, and how it ended:"
    k -n "$NS" get pods -l app.kubernetes.io/name=budgetsweep \
      -o jsonpath='{range .items[*].status.containerStatuses[*]}{.lastState}{"\n"}{end}'
    k -n "$NS" logs -l app.kubernetes.io/name=budgetsweep --previous --tail=40
    node_pressure
  fi
  "$HELM" uninstall "$REL" -n "$NS" >/dev/null 2>&1
  drop_namespace "$NS"
  rm -rf "$TMP"
}
trap cleanup EXIT

start_operator budgetpools.budgetsweep.dev

# ---- the pool and two sweeps on it (one with its own cap too) ---------------------------------
sweep() { # NAME SEED [own gpuHours]
  curve_sweep "$1" "  budget: {${3:+gpuHours: $3, }poolRef: {name: team}}
  scheduler: {algorithm: asha, mode: stop, seed: $2}
  parallelism: 2
  maxTrials: 40
  searchSpace:
    lr: {type: logUniform, min: 1.0e-3, max: 1.0e-1}" '"--seconds-per-epoch=2"' \
    "            resources: {requests: {cpu: 50m, memory: 64Mi}}"
}
{
  cat <<YAML
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetPool
metadata: {name: team, namespace: $NS}
spec: {gpuHours: $POOL_HOURS}
---
YAML
  sweep alpha 1
  echo ---
  sweep beta 2 1
} | k apply -f - >/dev/null

# ---- 1. the pool counts both while they run --------------------------------------------------
accounts=""
for _ in $(seq 1 120); do
  accounts=$(k -n "$NS" get bsp/team -o 'jsonpath={range .status.sweeps[*]}{.sweep}{" "}{end}' || true)
  [[ $accounts == *alpha* && $accounts == *beta* ]] && break
  sleep 1
done
[[ $accounts == *alpha* && $accounts == *beta* ]] &&
  pass "the pool's status holds an account for each sweep: $accounts" ||
  fail "the pool's accounts: '$accounts'"
# Whole, then its first line: under pipefail, `| head -1` can end kubectl by SIGPIPE mid-table.
columns=$(k -n "$NS" get bsp team 2>&1 || true)
columns=$(head -1 <<<"$columns")
[[ $columns == *BUDGET*USED*RESERVED*REMAINING* ]] && pass "kubectl get bsp: $columns" ||
  fail "kubectl get bsp columns: $columns"

# ---- SIGKILL the operator twice while both sweeps run ----------------------------------------
for kill_no in 1 2; do
  sleep $((5 + RANDOM % 10))
  kill_operator "$kill_no"
done
[ "$(operator_restarts)" = 2 ] && pass "kubelet restarted the operator after each SIGKILL" ||
  fail "the operator's restartCount is '$(operator_restarts)' (want 2)"

# ---- 2. both end, each saying why ----------------------------------------------------------
for s in alpha beta; do
  phase=""
  for _ in $(seq 1 400); do
    phase=$(field "bsw/$s" .status.phase)
    case $phase in Completed | BudgetExhausted | Failed) break ;; esac
    sleep 1
  done
  why=$(k -n "$NS" get bsw "$s" -o json | python3 -c '
import json, sys
s = json.load(sys.stdin)["status"]
print(" | ".join(c["reason"] + ": " + c.get("message", "") for c in s.get("conditions", [])
                 if c["type"] in ("Complete", "Completed", "BudgetExhausted", "Succeeded", "Ready")
                 or "Pool" in c.get("message", "") or "Pool" in c["reason"]))')
  [ "$phase" = BudgetExhausted ] && [[ $why == *Pool* ]] &&
    pass "sweep $s ended BudgetExhausted; its status says why: ${why:0:160}" ||
    fail "sweep $s: phase '$phase', conditions: $why"
done
denials=$(k -n "$NS" get events -o json | python3 -c '
import json, sys
print(sorted({e["reason"] + "/" + e["involvedObject"]["kind"] for e in json.load(sys.stdin)["items"]
              if e["reason"].startswith("Pool")}))')
[[ $denials == *BudgetSweep* && $denials == *BudgetPool* ]] &&
  pass "the pool's denials are Events on the sweeps and on the pool: $denials" ||
  fail "pool denial Events: $denials"

# ---- 3. the charges are within the pool -------------------------------------------------------
# Each sweep's charge from its trial records: devices x (finished - started) of every segment, the
# pods' own times; the pool's accounts must agree with them and their sum stay within the pool.
k -n "$NS" get bswt,bsp -o json >"$TMP/objects.json"
python3 - "$TMP/objects.json" "$POOL_HOURS" >"$TMP/sum" <<'PY' && pass "$(cat "$TMP/sum")" || fail "$(cat "$TMP/sum")"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
pool_hours = float(sys.argv[2])
charged = {}
for i in items:
    if i["kind"] != "BudgetSweepTrial":
        continue
    sweep = i["metadata"]["labels"]["budgetsweep.dev/sweep"]
    for e in i.get("status", {}).get("events", []):
        if e.get("event") == "SegmentEnded":
            charged[sweep] = charged.get(sweep, 0) + e["devices"] * (e["finished"] - e["started"])
pool = next(i for i in items if i["kind"] == "BudgetPool")["status"]
accounts = {a["sweep"]: a["usedDeviceSeconds"] for a in pool["sweeps"]}
total = sum(charged.values())
print(f"charges from the trial records {({n: round(c, 1) for n, c in charged.items()})} device-s,"
      f" {total / 3600:.4f} of the pool's {pool_hours} GPU-h; the pool's accounts "
      f"{({n: round(c, 1) for n, c in accounts.items()})}, used {pool['usedGpuHours']}, reserved "
      f"{pool['reservedGpuHours']}, remaining {pool['remainingGpuHours']}")
ok = (total <= pool_hours * 3600 and total >= 0.5 * pool_hours * 3600
      and sorted(charged) == sorted(accounts)
      and all(abs(accounts[n] - charged[n]) < 1e-6 for n in charged)
      and pool["reservedGpuHours"] == 0 and not any(a["active"] for a in pool["sweeps"]))
sys.exit(0 if ok else 1)
PY

# ---- 4. no trial twice, no pod left ------------------------------------------------------------
# One trial record per created trial (a restart that re-decided would add records or lose them),
# and every pod has ended and let go of its charge.
for s in alpha beta; do
  created=$(field "bsw/$s" .status.trials.created)
  records=$(k -n "$NS" get bswt -l "budgetsweep.dev/sweep=$s" -o name | wc -l)
  [ "$records" -eq "${created:-x}" ] && pass "sweep $s: $records trial records for $created trials created" ||
    fail "sweep $s: $records trial records, status.trials.created '$created'"
done
left=$(wait_trial_pods_released)
[ "$left" -eq 0 ] && pass "no trial pod is left running or holding its charge" ||
  fail "$left trial pod(s) left running or holding a charge"

# ---- 5. a deleted sweep's charge stays ----------------------------------------------------------
before=$(field bsp/team .status.usedGpuHours)
k -n "$NS" delete bsw alpha --wait=true --timeout=60s >/dev/null
sleep 2
after=$(field bsp/team .status.usedGpuHours)
alpha=$(field bsp/team '.status.sweeps[?(@.sweep=="alpha")].usedDeviceSeconds')
python3 -c "import sys; sys.exit(0 if abs(float('$before') - float('$after')) < 1e-9 and float('${alpha:-0}') > 0 else 1)" &&
  pass "deleting sweep alpha keeps its charge in the pool (used $after GPU-h)" ||
  fail "after deleting alpha: used $before -> $after, alpha's account '$alpha'"
finish
