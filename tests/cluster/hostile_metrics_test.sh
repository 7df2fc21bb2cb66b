#!/usr/bin/env bash
# Issue 40, point 1 on the test cluster's real node: trial pods whose metrics endpoints are
# hostile (curve-trainer --hostile: a gzip bomb, a 200 MiB body, a flood of 20,000 label sets)
# beside a healthy sweep, with the operator installed by Helm (its memory limit the chart's
# 256 MiB) scraping the pods itself (no spec.metrics.prometheus):
#   1. the operator is never restarted (an unbounded read of any of these bodies is an OOM kill)
#      and its resident memory peaks well below the limit;
#   2. each hostile trial ends ExitedShort, failed and not retried, its message naming the cap its
#      metrics broke and its output's tail read from the pod's log (it exited 0, so the kubelet
#      wrote no termination message); the hostile sweep ends Failed (all its trials failed);
#   3. the healthy sweep completes with a trial at max; no trial pod is left.
# Without KUBECONFIG it skips (exit 77).
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BSW_CLUSTER_DIR:?the test cluster state dir}"
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
use_test_node
# The operator's peak resident memory may be at most this (it is about 12 MiB scraping healthy
# pods; one 200 MiB body read whole would be far over).
MAX_RSS_KIB=$((64 * 1024))

NS=bsw-hostile-$(printf '%04x%04x' $RANDOM $RANDOM)
REL=bsw
# shellcheck source=operator_lib.sh
. "$HERE/operator_lib.sh"
cleanup() {
  set +e
  if [ "$failures" -gt 0 ]; then
    k -n "$NS" get bsw,bswt,pods -o wide
    k -n "$NS" logs -l app.kubernetes.io/name=budgetsweep --tail=40
    node_pressure
  fi
  "$HELM" uninstall "$REL" -n "$NS" >/dev/null 2>&1
  drop_namespace "$NS"
  rm -rf "$TMP"
}
trap cleanup EXIT

start_operator budgetsweeps.budgetsweep.dev
pid=$(operator_pid)
[ -n "$pid" ] || { fail "no operator process"; finish; }

# ---- a hostile sweep (one trial per endpoint kind) and a healthy one --------------------------
{
  curve_sweep hostile "  budget: {gpuHours: 1}
  scheduler: {algorithm: grid}
  parallelism: 3
  searchSpace:
    hostile: {type: choice, values: [gzip-bomb, big-body, label-flood]}" \
    '"--seconds-per-epoch=1"' "            resources: {requests: {cpu: 50m, memory: 64Mi}}"
  echo ---
  curve_sweep healthy "  budget: {gpuHours: 1}
  scheduler: {algorithm: asha, mode: stop, seed: 3}
  parallelism: 2
  maxTrials: 4
  searchSpace:
    lr: {type: logUniform, min: 1.0e-3, max: 1.0e-1}" \
    '"--seconds-per-epoch=0.5"' "            resources: {requests: {cpu: 50m, memory: 64Mi}}"
} | k apply -f - >/dev/null

peak=0
ended() {
  case $(field "bsw/$1" .status.phase) in Completed | BudgetExhausted | Failed) return 0 ;; esac
  return 1
}
for _ in $(seq 1 240); do
  rss=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
  [ "${rss:-0}" -gt "$peak" ] && peak=$rss
  ended hostile && ended healthy && break
  sleep 1
done

# ---- 1. the operator held -----------------------------------------------------------------------
restarts=$(operator_restarts)
[ "$restarts" = 0 ] && [ "$(operator_pid)" = "$pid" ] &&
  pass "the operator was never restarted (restartCount 0, the same process)" ||
  fail "the operator's restartCount is '$restarts' (want 0), its process $(operator_pid) (was $pid)"
[ "$peak" -gt 0 ] && [ "$peak" -le "$MAX_RSS_KIB" ] &&
  pass "the operator's resident memory peaked at $((peak / 1024)) MiB (at most $((MAX_RSS_KIB / 1024)) MiB)" ||
  fail "the operator's resident memory peaked at ${peak} KiB (want at most $MAX_RSS_KIB KiB)"

# ---- 2. the hostile trials say which cap their metrics broke ---------------------------------
phase=$(field bsw/hostile .status.phase)
reason=$(field bsw/hostile '.status.conditions[?(@.type=="Progressing")].reason')
[ "$phase" = Failed ] && pass "the hostile sweep ended Failed ($reason)" ||
  fail "the hostile sweep's phase is '$phase' (want Failed), reason '$reason'"
k -n "$NS" get bswt -l budgetsweep.dev/sweep=hostile -o json >"$TMP/hostile.json"
python3 - "$TMP/hostile.json" >"$TMP/check" <<'PY' && pass "$(cat "$TMP/check")" || fail "$(cat "$TMP/check")"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
problems, seen = [], {}
for item in items:
    events = item.get("status", {}).get("events", [])
    kind = next((dict(e["params"]).get("hostile") for e in events if e["event"] == "TrialCreated"), "?")
    ends = [e for e in events if e["event"] == "SegmentEnded"]
    if len(ends) != 1:
        problems.append(f"{item['metadata']['name']} ({kind}): {len(ends)} segment ends, want 1 (no retry)")
        continue
    end = ends[0]
    message = end.get("message", "")
    if end.get("reason") != "ExitedShort" or "cap of" not in message or len(message) > 2048:
        problems.append(f"{item['metadata']['name']} ({kind}): {end.get('reason')}: {message[:300]}")
    # It exited 0, so the kubelet wrote no termination message: the tail is read from its log.
    if "epoch 9/9" not in end.get("output", ""):
        problems.append(f"{item['metadata']['name']} ({kind}): its output tail lacks its last epoch: "
                        f"{end.get('output', '')[:200]!r}")
    seen[kind] = message[message.find("its metrics could not be read"):][:160]
if sorted(seen) != ["big-body", "gzip-bomb", "label-flood"]:
    problems.append(f"the hostile trials were {sorted(seen)}")
print("; ".join(problems) if problems else
      "each hostile trial ended ExitedShort once, naming its cap: " +
      " | ".join(f"{k}: {v}" for k, v in sorted(seen.items())))
sys.exit(1 if problems else 0)
PY

# ---- 3. the healthy sweep beside them completed --------------------------------------------------
phase=$(field bsw/healthy .status.phase)
best=$(field bsw/healthy .status.best.resource)
[ "$phase" = Completed ] && [ "${best%.*}" = 9 ] &&
  pass "the healthy sweep completed, its best trial at epoch $best" ||
  fail "the healthy sweep's phase is '$phase', its best trial at epoch '$best' (want Completed, 9)"
left=$(wait_trial_pods_released)
[ "$left" -eq 0 ] && pass "no trial pod is left running or holding its charge" ||
  fail "$left trial pod(s) left running or holding a charge"
finish
