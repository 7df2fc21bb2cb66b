#!/usr/bin/env bash
# The chart's users' ClusterRoles (templates/aggregated-roles.yaml) on the real test cluster: the
# clusterrole-aggregation controller of kube-controller-manager folds them into the built-in view,
# edit and admin roles, so that, in one namespace, through `kubectl auth can-i --as`:
#   - a user bound to view lists sweeps and trial records, and creates no sweep;
#   - a user bound to edit creates and deletes sweeps, but creates no trial record and does not
#     patch a sweep's status (both are the operator's);
#   - a user bound to admin writes sweeps too;
#   - all three read BudgetPools, and none creates, updates, patches or deletes one (a pool is a
#     quota, like a ResourceQuota: cluster administrators set it);
#   - a user bound to nothing does neither.
# Without KUBECONFIG it skips (exit 77). Builds helm on first use.
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set (eval \"\$(tests/cluster/up.sh | tail -1)\")"
  exit 77
fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }

ID=$(date +%s)-$$
NS=roles-$ID
REL=roles-$$
VIEWER=viewer-$ID EDITOR=editor-$ID ADMIN=admin-$ID NOBODY=nobody-$ID
cleanup_cluster() {
  k delete clusterrole -l "app.kubernetes.io/instance=$REL" --ignore-not-found --wait=false \
    >/dev/null 2>&1 || true
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
trap 'cleanup_cluster; rm -rf "$TMP"' EXIT

# The CRDs first: `auth can-i` resolves bsw, bswt and bsp through discovery.
k apply -f "$CHART/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s crd/budgetsweeps.budgetsweep.dev \
  crd/budgetsweeptrials.budgetsweep.dev crd/budgetpools.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
# Established comes before discovery lists the kinds: until then `auth can-i` cannot resolve the
# short names (it warns and answers no).
for _ in $(seq 1 60); do
  k get bsw,bswt,bsp -n "$NS" >/dev/null 2>&1 && break
  sleep 0.5
done
render "$REL" "$NS" --show-only templates/aggregated-roles.yaml | k apply -f - >/dev/null
k create rolebinding viewer -n "$NS" --clusterrole=view --user="$VIEWER" >/dev/null
k create rolebinding editor -n "$NS" --clusterrole=edit --user="$EDITOR" >/dev/null
k create rolebinding admin -n "$NS" --clusterrole=admin --user="$ADMIN" >/dev/null
pass "ClusterRoles $REL-budgetsweep-view/-edit applied; $VIEWER bound to view, $EDITOR to edit, $ADMIN to admin in $NS"

# The aggregation controller copies the rules in shortly after.
aggregated=""
for _ in $(seq 1 60); do
  view=$(k get clusterrole view -o jsonpath='{.rules[*].resources}')
  edit=$(k get clusterrole edit -o jsonpath='{.rules[*].resources}')
  admin=$(k get clusterrole admin -o jsonpath='{.rules[*].resources}')
  if [[ $view == *budgetpools* && $edit == *budgetpools* && $admin == *budgetpools* ]]; then
    aggregated=yes; break
  fi
  sleep 0.5
done
[ -n "$aggregated" ] && pass "view, edit and admin aggregate the budgetsweep rules" ||
  fail "the built-in roles did not aggregate the budgetsweep rules within 30 s"

# can USER VERB RESOURCE [kubectl flags...] -> yes|no
can() {
  local user=$1; shift
  k auth can-i -n "$NS" --as "$user" "$@" 2>/dev/null || true
}
expect() {   # want user verb resource [flags...]
  local want=$1 user=$2; shift 2
  local got
  got=$(can "$user" "$@")
  [ "$got" = "$want" ] && pass "$user: $* -> $want" || fail "$user: $* -> '$got', want $want"
}
expect yes "$VIEWER" list bsw
expect yes "$VIEWER" watch bsw
expect yes "$VIEWER" list bswt
expect no "$VIEWER" create bsw
expect no "$VIEWER" delete bsw
expect yes "$EDITOR" create bsw
expect yes "$EDITOR" delete bsw
expect yes "$EDITOR" list bswt
expect no "$EDITOR" create bswt
expect no "$EDITOR" delete bswt
expect no "$EDITOR" patch bsw --subresource=status
expect no "$NOBODY" list bsw
expect no "$NOBODY" create bsw
expect no "$NOBODY" list bswt
# BudgetPools: read by view, edit and admin, written by none.
expect yes "$VIEWER" get bsp
expect yes "$VIEWER" list bsp
expect no "$VIEWER" create bsp
expect yes "$EDITOR" get bsp
expect yes "$EDITOR" watch bsp
for verb in create update patch delete; do
  expect no "$EDITOR" "$verb" bsp
done
expect no "$EDITOR" patch bsp --subresource=status
expect yes "$ADMIN" create bsw
expect yes "$ADMIN" list bsp
for verb in create update patch delete; do
  expect no "$ADMIN" "$verb" bsp
done
expect no "$NOBODY" list bsp
# Only in the namespace of the binding.
expect no "$EDITOR" create bsw -n default

finish
