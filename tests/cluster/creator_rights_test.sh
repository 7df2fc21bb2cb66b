#!/usr/bin/env bash
# Issue #23, point 3: the rights of a sweep's creator, on the real test API server (no node
# needed: a trial pod that is created stays Pending). The chart's MutatingAdmissionPolicy, RBAC
# and users' roles (helm template, applied), and `budgetsweep operator --check-creator-rights` on
# the host as the chart's ServiceAccount. Users, impersonated with kubectl --as:
#   - alice holds `edit` in the namespace: her sweep, whose template runs as ServiceAccount
#     trainer, gets its trial pods; the creator annotation she forged in her manifest
#     (budgetsweep.dev/creator: system:admin) is replaced by "alice";
#   - bob may write sweeps but not create pods: his sweep (as ServiceAccount default, which is not
#     checked) stays Pending with condition
#     CreatorAuthorized False (reason CreatorForbidden) and a Warning event, both saying exactly
#     that he may not create pods in the namespace, and no pod; the "alice" he wrote into the
#     annotation does not count, and neither does an annotate --overwrite afterwards;
#   - carol may create sweeps and pods through a group whose name holds "," and "\" (recorded
#     escaped, read back whole), but not create serviceaccounts/token for trainer: her sweep is
#     refused for that one right only.
# Without KUBECONFIG it skips (exit 77). Builds helm on first use.
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set"
  exit 77
fi
: "${BUDGETSWEEP:?path to budgetsweep}"
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
# shellcheck source=namespace_lib.sh
. "$HERE/namespace_lib.sh"
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }

NS=bsw-creator-$(printf '%04x%04x' $RANDOM $RANDOM)
REL=c$(printf '%04x' $RANDOM)
SA=$REL-budgetsweep
GROUP='ml,team\x'   # a group name with the separator and the escape character
OPERATOR_PID=""
cleanup() {
  set +e
  [ -n "$OPERATOR_PID" ] && kill "$OPERATOR_PID" 2>/dev/null && wait "$OPERATOR_PID" 2>/dev/null
  k delete clusterrole,clusterrolebinding,mutatingadmissionpolicy,mutatingadmissionpolicybinding \
    -l "app.kubernetes.io/instance=$REL" --ignore-not-found --wait=false >/dev/null 2>&1
  drop_namespace "$NS"
  if [ "$failures" -gt 0 ]; then
    echo "---- operator log (last 30 lines) ----"
    tail -30 "$TMP/operator.log"
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

k apply -f "$ROOT/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s \
  crd/budgetsweeps.budgetsweep.dev crd/budgetsweeptrials.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
k -n "$NS" create serviceaccount trainer >/dev/null

# ---- the chart's policy, RBAC and users' roles -----------------------------------------------------
render "$REL" "$NS" --set metrics.secure=false \
  --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml \
  --show-only templates/aggregated-roles.yaml --show-only templates/creator-policy.yaml \
  >"$TMP/objects.yaml"
k apply -f "$TMP/objects.yaml" >/dev/null
k -n "$NS" create rolebinding alice-edit --clusterrole=edit --user=alice >/dev/null
k -n "$NS" create role sweep-author --verb=get,create,update,patch \
  --resource=budgetsweeps.budgetsweep.dev >/dev/null
k -n "$NS" create rolebinding bob-author --role=sweep-author --user=bob >/dev/null
k -n "$NS" create role pod-author --verb=create --resource=pods >/dev/null
k -n "$NS" create rolebinding group-author --role=sweep-author --group="$GROUP" >/dev/null
k -n "$NS" create rolebinding group-pods --role=pod-author --group="$GROUP" >/dev/null

sa_kubeconfig "$NS" "$SA" "$TMP"   # the operator's: the chart ServiceAccount's token
KUBECONFIG= "$BUDGETSWEEP" operator --kubeconfig "$TMP/$SA.kubeconfig" --namespace "$NS" \
  --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 --resync-interval 0.3 \
  --check-creator-rights 2>>"$TMP/operator.log" &
OPERATOR_PID=$!

# sweep NAME SERVICE-ACCOUNT FORGED-CREATOR: a small sweep, its template running as the account.
sweep() {
  cat <<YAML
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata:
  name: $1
  namespace: $NS
  annotations: {budgetsweep.dev/creator: "$3", budgetsweep.dev/creator-groups: "system:masters"}
spec:
  budget: {gpuHours: 0.05}
  objective: {metric: validation_accuracy, goal: maximize}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  maxTrials: 2
  parallelism: 1
  searchSpace:
    lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
  trial:
    gpus: 1
    template:
      spec:
        serviceAccountName: $2
        nodeSelector: {budgetsweep.dev/test: none}
        containers:
          - {name: trainer, image: budgetsweep/curve-trainer:dev}
YAML
}
annotation() { k -n "$NS" get bsw "$1" -o "jsonpath={.metadata.annotations.budgetsweep\.dev/$2}"; }
pods_of() { k -n "$NS" get pods -l "budgetsweep.dev/sweep=$1" -o name 2>/dev/null | wc -l; }
condition() {   # sweep -> "status reason message" of CreatorAuthorized
  k -n "$NS" get bsw "$1" -o json | python3 -c '
import json, sys
s = json.load(sys.stdin).get("status", {})
c = next((c for c in s.get("conditions", []) if c["type"] == "CreatorAuthorized"), None)
print(s.get("phase", ""), *([c["status"], c["reason"], c["message"]] if c else ["none"]), sep="|")'
}
wait_condition() {   # sweep -> the condition once it is set, within 30 s
  local got=""
  for _ in $(seq 1 100); do
    got=$(condition "$1")
    [[ $got == *"|False|"* ]] && break
    sleep 0.3
  done
  echo "$got"
}
event_message() {   # sweep reason -> the message of its Warning event with that reason
  k -n "$NS" get events --field-selector "involvedObject.name=$1,reason=$2,type=Warning" \
    -o jsonpath='{.items[0].message}'
}

# The API server loads admission policies in the background: wait until the chart's policy is in
# force, that is until a server-side dry run of a sweep with a forged creator comes back with the
# creator replaced (seen to take up to 45 s on a loaded machine).
forged=""
for _ in $(seq 1 180); do
  forged=$(sweep in-force default forged | k create --dry-run=server -f - \
    -o "jsonpath={.metadata.annotations.budgetsweep\.dev/creator}" 2>/dev/null || true)
  [ -n "$forged" ] && [ "$forged" != forged ] && break
  sleep 0.5
done
if [ -n "$forged" ] && [ "$forged" != forged ]; then
  pass "the creator policy is in force (a dry run records '$forged')"
else
  fail "the creator policy was not in force within 90 s (a dry run records '$forged')"
fi

# ---- alice: allowed -------------------------------------------------------------------------------
if sweep allowed trainer system:admin | k create -f - --as alice >"$TMP/alice.log" 2>&1; then
  pass "alice (edit) creates a sweep whose template runs as ServiceAccount trainer"
else
  fail "alice could not create her sweep: $(cat "$TMP/alice.log")"
fi
[ "$(annotation allowed creator)" = alice ] &&
  pass "the policy recorded creator \"alice\" over the \"system:admin\" her manifest claimed" ||
  fail "creator annotation: '$(annotation allowed creator)'"
[ "$(annotation allowed creator-groups)" = "system:authenticated" ] &&
  pass "and her groups (system:authenticated), not the system:masters her manifest claimed" ||
  fail "creator-groups: '$(annotation allowed creator-groups)'"
n=0
for _ in $(seq 1 100); do
  n=$(pods_of allowed)
  [ "$n" -ge 1 ] && break
  sleep 0.3
done
[ "$n" -ge 1 ] && pass "alice's sweep got its trial pod ($n)" ||
  fail "alice's sweep got no pod within 30 s ($(condition allowed))"
grep -q '"event":"creator_authorized".*"sweep":"'"$NS"'/allowed"' "$TMP/operator.log" &&
  pass "the operator logged creator_authorized for it" || fail "no creator_authorized log line"

# ---- bob: may not create pods -----------------------------------------------------------------------
if sweep no-pods default alice | k create -f - --as bob >"$TMP/bob.log" 2>&1; then
  pass "bob (sweeps only) creates a sweep that names creator \"alice\""
else
  fail "bob could not create his sweep: $(cat "$TMP/bob.log")"
fi
[ "$(annotation no-pods creator)" = bob ] && pass "recorded creator: \"bob\"" ||
  fail "bob's sweep records creator '$(annotation no-pods creator)'"
want="the sweep's creator \"bob\" may not create pods in namespace $NS: the operator creates no trial pod for it (SubjectAccessReview)"
got=$(wait_condition no-pods)
[ "$got" = "Pending|False|CreatorForbidden|$want" ] &&
  pass "bob's sweep: Pending, CreatorAuthorized False, CreatorForbidden: $want" ||
  fail "bob's sweep condition: '$got'"
[ "$(event_message no-pods CreatorForbidden)" = "$want" ] &&
  pass "a Warning event CreatorForbidden with the same message" ||
  fail "event: '$(event_message no-pods CreatorForbidden)'"
k -n "$NS" annotate bsw no-pods --overwrite budgetsweep.dev/creator=alice --as bob >/dev/null 2>&1 ||
  true
[ "$(annotation no-pods creator)" = bob ] &&
  pass "bob's annotate --overwrite budgetsweep.dev/creator=alice leaves \"bob\"" ||
  fail "after bob's annotate: '$(annotation no-pods creator)'"
sleep 3
[ "$(pods_of no-pods)" = 0 ] && [[ $(condition no-pods) == "Pending|False|CreatorForbidden|"* ]] &&
  pass "still no pod for bob's sweep" || fail "bob's sweep has $(pods_of no-pods) pod(s)"

# ---- carol, through her group: pods yes, the ServiceAccount no ------------------------------------
if sweep no-sa trainer "" | k create -f - --as carol --as-group "$GROUP" >"$TMP/carol.log" 2>&1; then
  pass "carol creates a sweep through group '$GROUP'"
else
  fail "carol could not create her sweep: $(cat "$TMP/carol.log")"
fi
[ "$(annotation no-sa creator-groups)" = 'ml\,team\\x,system:authenticated' ] &&
  pass "her groups recorded escaped: $(annotation no-sa creator-groups)" ||
  fail "carol's creator-groups: '$(annotation no-sa creator-groups)'"
want="the sweep's creator \"carol\" may not create serviceaccounts/token trainer in namespace $NS: the operator creates no trial pod for it (SubjectAccessReview)"
got=$(wait_condition no-sa)
[ "$got" = "Pending|False|CreatorForbidden|$want" ] &&
  pass "carol's sweep: refused for the ServiceAccount alone (her group's pod right was read back whole)" ||
  fail "carol's sweep condition: '$got'"
[ "$(pods_of no-sa)" = 0 ] && pass "no pod for carol's sweep" || fail "carol's sweep has pods"

finish
