# Shared by the cluster e2e tests that run the operator as users do (sourced after chart_lib.sh,
# with NS and REL set): the namespace and curve-sweep helpers, k() (kubectl with this test's cache)
# and field(); installs the operator with Helm on the test node, and SIGKILLs it so that kubelet
# restarts it.

# shellcheck source=namespace_lib.sh
. "$HERE/namespace_lib.sh"
# shellcheck source=curve_sweep.sh
. "$HERE/curve_sweep.sh"
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }
# field OBJECT JSONPATH: one field of an object in $NS, empty when it has none.
field() { k -n "$NS" get "$1" -o "jsonpath={$2}" 2>/dev/null || true; }

# start_operator CRD: applies the project's CRDs, waits until CRD (a name such as
# budgetsweeps.budgetsweep.dev) is established, creates NS and installs the operator into it.
start_operator() {
  k apply -f "$ROOT/crds/" >/dev/null
  k wait --for=condition=Established --timeout=60s "crd/$1" >/dev/null
  k create namespace "$NS" >/dev/null
  install_operator
}

# install_operator: helm install REL into NS, pinned to the test node; passes once the operator
# pod is Ready, else fails and ends the test.
install_operator() {
  if "$HELM" install "$REL" "$CHART" -n "$NS" --wait --timeout 180s \
    --set-string "nodeSelector.kubernetes\.io/hostname=$BSW_NODE_NAME" >"$TMP/helm.log" 2>&1; then
    pass "helm install: the operator pod is Ready"
  else
    fail "helm install: $(tail -5 "$TMP/helm.log")"
    finish
  fi
}

# node_pressure: the test node's conditions that evict pods (a disk nearly full evicts the
# operator, and its new pod waits for the taint to go), and the namespace's recent events.
node_pressure() {
  k get node "$BSW_NODE_NAME" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {end}{"\n"}'
  k -n "$NS" get events --sort-by=.lastTimestamp | tail -15
}

# wait_trial_pods_released: waits up to 60 s until every trial pod in NS has ended and let go of
# its charge (the last segments' pods are let go of once their ends are journaled, just after the
# sweep's finish), and prints how many have not.
wait_trial_pods_released() {
  local left
  for _ in $(seq 1 60); do
    left=$(k -n "$NS" get pods -l budgetsweep.dev/sweep -o json | python3 -c '
import json, sys
print(sum(1 for p in json.load(sys.stdin)["items"]
          if p["status"].get("phase") not in ("Succeeded", "Failed")
          or "budgetsweep.dev/accounting" in p["metadata"].get("finalizers", [])))')
    [ "$left" -eq 0 ] && break
    sleep 1
  done
  echo "$left"
}

operator_pid() { pgrep -f -- "budgetsweep operator --namespace=$NS" | head -1 || true; }
operator_restarts() {
  k -n "$NS" get pods -l app.kubernetes.io/name=budgetsweep \
    -o jsonpath='{.items[0].status.containerStatuses[0].restartCount}' 2>/dev/null || true
}

# kill_operator N: SIGKILLs the operator process and waits until kubelet has restarted it for
# the Nth time (after its crash-loop back-off).
kill_operator() {
  local pid
  pid=$(operator_pid)
  if [ -n "$pid" ]; then
    kill -KILL "$pid" && pass "SIGKILL $1 of the operator (pid $pid)"
  else
    fail "no operator process to kill ($1)"
  fi
  for _ in $(seq 1 120); do
    [ "$(operator_restarts)" = "$1" ] && [ -n "$(operator_pid)" ] && break
    sleep 1
  done
}
