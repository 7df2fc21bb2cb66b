#!/usr/bin/env bash
# The Helm chart (charts/budgetsweep) against the real test cluster:
#   - its CRDs apply and become Established;
#   - every object `helm template` renders, in scope namespace and scope cluster, is accepted by a
#     server-side dry run in a namespace that enforces Pod Security "restricted", with no
#     PodSecurity warning for the Deployment's pod template;
#   - a Pod made from that template is admitted there (and the same pod with privilege escalation
#     is not: the namespace really enforces);
#   - the RBAC objects, created for real, let the operator's ServiceAccount do what it needs and
#     nothing else (kubectl auth can-i), in the watched namespace only for scope namespace;
#   - `helm install` really runs: the Deployment's ReplicaSet creates the operator pod under
#     "restricted" (kube-controller-manager), and `helm uninstall` leaves no pod, ReplicaSet or
#     RBAC object behind; the CRDs stay.
# Without KUBECONFIG it skips (exit 77). Builds helm on first use.
set -euo pipefail
if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set (eval \"\$(tests/cluster/up.sh | tail -1)\")"
  exit 77
fi
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }

ID=$(date +%s)-$$
NS=chart-$ID            # the release namespace, enforcing restricted
WATCH=chart-watch-$ID   # the namespace a scope-namespace release watches
OTHER=chart-other-$ID   # a namespace it must not touch
REL=bsw-$$
cleanup_cluster() {
  k delete clusterrole,clusterrolebinding,mutatingadmissionpolicy,mutatingadmissionpolicybinding \
    -l "app.kubernetes.io/instance in ($REL,$REL-c)" \
    --ignore-not-found --wait=false >/dev/null 2>&1 || true
  k delete namespace "$NS" "$WATCH" "$OTHER" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
trap 'cleanup_cluster; rm -rf "$TMP"' EXIT

restricted=(pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/enforce-version=latest
  pod-security.kubernetes.io/warn=restricted pod-security.kubernetes.io/warn-version=latest)
for n in "$NS" "$WATCH" "$OTHER"; do
  k create namespace "$n" >/dev/null
  k label namespace "$n" "${restricted[@]}" >/dev/null
done
pass "namespaces $NS, $WATCH, $OTHER enforce Pod Security restricted"

# ---- CRDs ---------------------------------------------------------------------------------------
k apply -f "$CHART/crds/" >/dev/null
for f in "$CHART"/crds/*.yaml; do
  crd=$(objects_py 'print(docs[0]["metadata"]["name"])' <"$f")
  k wait --for=condition=Established --timeout=60s "crd/$crd" >/dev/null && pass "CRD $crd Established"
done

# ---- every rendered object, server-side dry run ------------------------------------------------
# nodeSelector: no node has it, so the pod of the real install below stays unscheduled.
common=(--set image.repository=budgetsweep/operator --set "nodeSelector.budgetsweep\.dev/test=none")
dry_run() {   # name [helm flags...]
  local name=$1; shift
  render "$REL" "$NS" "${common[@]}" "$@" >"$TMP/objects.yaml"
  if out=$(k apply --dry-run=server -f "$TMP/objects.yaml" 2>&1); then
    if grep -qi 'podsecurity\|would violate' <<<"$out"; then
      fail "$name: Pod Security warning"; indent <<<"$out"
    else
      pass "$name: $(grep -c 'created (server dry run)' <<<"$out") objects accepted (server dry run)"
    fi
  else
    fail "$name: rejected"; indent <<<"$out"
  fi
}
dry_run "scope namespace" --set "watchNamespace=$WATCH"
dry_run "scope cluster, 2 replicas, leader election" --set scope=cluster --set replicaCount=2 \
  --set leaderElection.enabled=true

# The operator pod itself under enforce=restricted: a Pod with the Deployment's template.
render "$REL" "$NS" "${common[@]}" >"$TMP/objects.yaml"
objects_py '
import json
dep = next(d for d in docs if d["kind"] == "Deployment")
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "operator-pod", **dep["spec"]["template"]["metadata"]},
       "spec": dep["spec"]["template"]["spec"]}
json.dump(pod, open(sys.argv[1] + "/pod.json", "w"))
pod["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
json.dump(pod, open(sys.argv[1] + "/bad-pod.json", "w"))' "$TMP" <"$TMP/objects.yaml"
k create serviceaccount -n "$NS" "$REL-budgetsweep" >/dev/null   # the pod names it
if out=$(k apply --dry-run=server -n "$NS" -f "$TMP/pod.json" 2>&1); then
  pass "operator pod admitted under enforce=restricted"
else
  fail "operator pod rejected under enforce=restricted"; indent <<<"$out"
fi
if out=$(k apply --dry-run=server -n "$NS" -f "$TMP/bad-pod.json" 2>&1); then
  fail "a pod with allowPrivilegeEscalation=true was admitted: the namespace does not enforce"
else
  grep -q 'violates PodSecurity "restricted' <<<"$out" &&
    pass "control: the same pod with allowPrivilegeEscalation=true is rejected" ||
    { fail "control pod rejected for another reason"; indent <<<"$out"; }
fi
k delete serviceaccount -n "$NS" "$REL-budgetsweep" >/dev/null

# ---- RBAC: what the ServiceAccount may do -------------------------------------------------------
# can SA NAMESPACE VERB RESOURCE[.GROUP][/SUBRESOURCE] -> yes|no, from a SubjectAccessReview (not
# `kubectl auth can-i`, which needs the resource in discovery: budgetsweeptrials may not exist yet).
can() {
  local rg=${4%%/*} sub="" res group=""
  [ "$rg" = "$4" ] || sub=${4#*/}
  res=${rg%%.*}
  [ "$res" = "$rg" ] || group=${rg#*.}
  k create -o jsonpath='{.status.allowed}' -f - <<JSON | sed 's/^true$/yes/; s/^false$/no/'
{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
 "spec": {"user": "system:serviceaccount:$NS:$1",
          "groups": ["system:serviceaccounts", "system:serviceaccounts:$NS", "system:authenticated"],
          "resourceAttributes": {"namespace": "$2", "verb": "$3", "group": "$group",
                                 "resource": "$res", "subresource": "$sub"}}}
JSON
}
needed=(
  "get budgetsweeps.budgetsweep.dev" "list budgetsweeps.budgetsweep.dev"
  "watch budgetsweeps.budgetsweep.dev" "update budgetsweeps.budgetsweep.dev"
  "patch budgetsweeps.budgetsweep.dev" "update budgetsweeps.budgetsweep.dev/status"
  "patch budgetsweeps.budgetsweep.dev/status" "update budgetsweeps.budgetsweep.dev/finalizers"
  "create budgetsweeptrials.budgetsweep.dev" "delete budgetsweeptrials.budgetsweep.dev"
  "watch budgetsweeptrials.budgetsweep.dev"
  "get budgetpools.budgetsweep.dev" "list budgetpools.budgetsweep.dev"
  "watch budgetpools.budgetsweep.dev" "update budgetpools.budgetsweep.dev/status"
  "patch budgetpools.budgetsweep.dev/status"
  "create pods" "delete pods" "patch pods" "watch pods" "get pods/log" "create events"
  "patch events" "create events.events.k8s.io"
)
forbidden=(
  "delete budgetsweeps.budgetsweep.dev" "create budgetsweeps.budgetsweep.dev"
  "create budgetpools.budgetsweep.dev" "update budgetpools.budgetsweep.dev"
  "delete budgetpools.budgetsweep.dev"
  "get secrets" "list configmaps" "create pods/exec" "update pods" "create deployments.apps"
  "delete events" "create serviceaccounts/token"
)
check_rbac() {   # label sa where-allowed [where-not]
  local label=$1 sa=$2 allowed=$3 denied=${4:-} v bad=()
  for v in "${needed[@]}"; do
    read -r verb res <<<"$v"
    [ "$(can "$sa" "$allowed" "$verb" "$res")" = yes ] || bad+=("cannot $v in $allowed")
    [ -z "$denied" ] || [ "$(can "$sa" "$denied" "$verb" "$res")" = no ] || bad+=("can $v in $denied")
  done
  for v in "${forbidden[@]}"; do
    read -r verb res <<<"$v"
    [ "$(can "$sa" "$allowed" "$verb" "$res")" = no ] || bad+=("can $v in $allowed")
  done
  if [ ${#bad[@]} -eq 0 ]; then
    pass "$label: ${#needed[@]} needed verbs allowed in $allowed${denied:+, not in $denied};" \
      "${#forbidden[@]} others denied"
  else
    fail "$label"; printf '%s\n' "${bad[@]}" | indent
  fi
}
render "$REL" "$NS" "${common[@]}" --set "watchNamespace=$WATCH" --set leaderElection.enabled=true \
  --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml | k apply -f - >/dev/null
check_rbac "scope namespace RBAC" "$REL-budgetsweep" "$WATCH" "$OTHER"
# The reviews of metrics.secure and creatorCheck (both on by default): cluster kinds, so a
# ClusterRoleBinding, which answers for any namespace.
reviews="$(can "$REL-budgetsweep" "$OTHER" create tokenreviews.authentication.k8s.io)"
reviews+=" $(can "$REL-budgetsweep" "$OTHER" create subjectaccessreviews.authorization.k8s.io)"
reviews+=" $(can "$REL-budgetsweep" "$OTHER" get tokenreviews.authentication.k8s.io)"
[ "$reviews" = "yes yes no" ] &&
  pass "reviews: create tokenreviews and subjectaccessreviews (ClusterRole $REL-budgetsweep-auth), nothing more" ||
  fail "reviews: $reviews (want yes yes no)"
lease() { can "$REL-budgetsweep" "$1" "$2" leases.coordination.k8s.io; }
if [ "$(lease "$NS" create)" = yes ] && [ "$(lease "$NS" update)" = yes ] &&
   [ "$(lease "$NS" delete)" = no ] && [ "$(lease "$WATCH" create)" = no ]; then
  pass "leader election: leases get/create/update in $NS only"
else
  fail "leader election lease permissions"
fi
render "$REL-c" "$NS" "${common[@]}" --set scope=cluster \
  --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml | k apply -f - >/dev/null
check_rbac "scope cluster RBAC" "$REL-c-budgetsweep" "$OTHER"
check_rbac "scope cluster RBAC" "$REL-c-budgetsweep" "$WATCH"
[ "$(can "$REL-c-budgetsweep" "$OTHER" create leases.coordination.k8s.io)" = no ] &&
  pass "scope cluster without leader election: no lease permission" ||
  fail "scope cluster: lease permission without leader election"
k delete -n "$NS" role,rolebinding,serviceaccount -l "app.kubernetes.io/instance=$REL" >/dev/null
k delete clusterrole,clusterrolebinding -l "app.kubernetes.io/instance=$REL" >/dev/null
k delete -n "$WATCH" role,rolebinding -l "app.kubernetes.io/instance=$REL" >/dev/null
k delete -n "$NS" serviceaccount -l "app.kubernetes.io/instance=$REL-c" >/dev/null
k delete clusterrole,clusterrolebinding -l "app.kubernetes.io/instance=$REL-c" >/dev/null

# ---- a real install: ReplicaSet → operator pod under restricted, then uninstall ----------------
if out=$("$HELM" install "$REL" "$CHART" -n "$NS" "${common[@]}" --set "watchNamespace=$WATCH" \
    --wait=false 2>&1); then
  pass "helm install $REL"
else
  fail "helm install"; indent <<<"$out"
fi
sel=app.kubernetes.io/instance=$REL,app.kubernetes.io/component=operator
pod=""
for _ in $(seq 1 120); do
  pod=$(k get pods -n "$NS" -l "$sel" -o name 2>/dev/null | head -1 || true)
  [ -n "$pod" ] && break; sleep 0.5
done
if [ -n "$pod" ]; then
  owner=$(k get -n "$NS" "$pod" -o jsonpath='{.metadata.ownerReferences[0].kind}')
  pass "the ReplicaSet created $pod (owner $owner) under enforce=restricted"
else
  fail "no operator pod within 60 s"
  k get events -n "$NS" 2>&1 | tail -5 | indent
fi
"$HELM" uninstall "$REL" -n "$NS" >/dev/null && pass "helm uninstall $REL"
left=""
for _ in $(seq 1 120); do
  left=$(k get deployment,replicaset,pod,service,serviceaccount,configmap,role,rolebinding -n "$NS" \
    -l "app.kubernetes.io/instance=$REL" -o name 2>/dev/null)
  left+=$(k get role,rolebinding -n "$WATCH" -l "app.kubernetes.io/instance=$REL" -o name 2>/dev/null)
  [ -z "$left" ] && break; sleep 0.5
done
[ -z "$left" ] && pass "after uninstall: no Deployment, ReplicaSet, pod or RBAC object left" ||
  { fail "left after uninstall"; indent <<<"$left"; }
k get crd budgetsweeps.budgetsweep.dev >/dev/null 2>&1 && pass "the CRD stays after uninstall" ||
  fail "the CRD went with the release"

finish
