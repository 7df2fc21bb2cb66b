#!/usr/bin/env bash
# The Helm chart (charts/budgetsweep) without a cluster: `helm lint --strict` in every mode,
# values.schema.json rejecting bad values, and what `helm template` renders: the operator's command
# line per scope, least-privilege RBAC without wildcards, Pod Security "restricted" settings, the
# optional ServiceMonitor/PodMonitor, and the dashboard ConfigMap. Builds helm on first use
# (tests/cluster/build.sh helm).
set -euo pipefail
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chart_lib.sh"

# ---- helm lint --------------------------------------------------------------------------------
modes=(
  "namespace|"
  "namespace, other watch namespace|--set watchNamespace=ml"
  "cluster|--set scope=cluster"
  "two replicas, leader election|--set replicaCount=2 --set leaderElection.enabled=true"
  "monitors on|--set serviceMonitor.enabled=true --set trialPodMonitor.enabled=true"
  "no users' ClusterRoles|--set rbac.aggregateClusterRoles=false"
  "plain metrics, no creator check|--set metrics.secure=false --set creatorCheck.enabled=false"
  "metrics certificate and readers|--set metrics.certSecret=op-tls --set metrics.readers[0].kind=ServiceAccount --set metrics.readers[0].name=prom --set metrics.readers[0].namespace=mon"
)
for mode in "${modes[@]}"; do
  name=${mode%%|*}; read -r -a flags <<<"${mode#*|}"
  if out=$("$HELM" lint --strict "$CHART" "${flags[@]}" 2>&1); then
    pass "helm lint --strict ($name)"
  else
    fail "helm lint --strict ($name)"; indent <<<"$out"
  fi
done

# ---- values.schema.json -------------------------------------------------------------------------
bad_values=(
  "--set scope=everywhere"
  "--set replicaCount=3 --set leaderElection.enabled=true"
  "--set replicaCount=2"
  "--set metrics.port=0"
  "--set watchNamespace=Not_A_Namespace"
  "--set unknownKey=1"
  "--set rbac.aggregateClusterRoles=yes"
  "--set metrics.secure=yes"
  "--set metrics.certSecret=Not_A_Secret"
  "--set metrics.readers[0].kind=Robot --set metrics.readers[0].name=x"
  "--set serviceAccount.tokenExpirationSeconds=300"
)
for flags in "${bad_values[@]}"; do
  read -r -a f <<<"$flags"
  if out=$(render r default "${f[@]}" 2>&1); then
    fail "schema accepted $flags"
  else
    grep -q 'values don.t meet the specifications of the schema' <<<"$out" &&
      pass "schema rejects $flags" || { fail "rejected $flags, not by the schema"; indent <<<"$out"; }
  fi
done

# ---- rendered objects ---------------------------------------------------------------------------
# Scope namespace: a Role and RoleBinding in the watched namespace, --namespace=<it>.
render rel ops --set watchNamespace=ml >"$TMP/ns.yaml"
check=$(objects_py '
kinds = sorted(d["kind"] for d in docs)
want = sorted(["ClusterRole"] * 4 + ["ClusterRoleBinding", "ConfigMap", "Deployment",
               "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "Role", "RoleBinding",
               "Service", "ServiceAccount"])
assert kinds == want, kinds
dep = next(d for d in docs if d["kind"] == "Deployment")
args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
assert args == ["operator", "--namespace=ml", "--metrics-addr=:8080", "--health-addr=:8081",
                "--collect-image=" + dep["spec"]["template"]["spec"]["containers"][0]["image"],
                "--metrics-secure",
                "--check-creator-rights"], args
role = next(d for d in docs if d["kind"] == "Role")
assert role["metadata"]["namespace"] == "ml", role["metadata"]
binding = next(d for d in docs if d["kind"] == "RoleBinding")
assert binding["metadata"]["namespace"] == "ml"
assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "rel-budgetsweep", "namespace": "ops"}]
print("ok")' <"$TMP/ns.yaml" 2>&1) || true
[ "$check" = ok ] && pass "scope namespace: Role+RoleBinding in ml, --namespace=ml" ||
  { fail "scope namespace"; indent <<<"$check"; }

# Scope cluster with two replicas: ClusterRole+Binding, --namespace= (all), --leader-elect, and a
# Role for the Lease in the release namespace only.
render rel ops --set scope=cluster --set replicaCount=2 --set leaderElection.enabled=true \
  >"$TMP/cluster.yaml"
check=$(objects_py '
kinds = sorted(d["kind"] for d in docs)
want = sorted(["ClusterRole"] * 5 + ["ClusterRoleBinding"] * 2 + ["ConfigMap", "Deployment",
               "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "Role", "RoleBinding",
               "Service", "ServiceAccount"])
assert kinds == want, kinds
dep = next(d for d in docs if d["kind"] == "Deployment")
assert dep["spec"]["replicas"] == 2
args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
assert args == ["operator", "--namespace=", "--metrics-addr=:8080", "--health-addr=:8081",
                "--collect-image=" + dep["spec"]["template"]["spec"]["containers"][0]["image"],
                "--metrics-secure",
                "--check-creator-rights", "--leader-elect", "--leader-election-namespace=ops"], args
lease = next(d for d in docs if d["kind"] == "Role")
assert lease["metadata"]["namespace"] == "ops"
assert lease["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                           "verbs": ["get", "create", "update"]}], lease["rules"]
print("ok")' <"$TMP/cluster.yaml" 2>&1) || true
[ "$check" = ok ] && pass "scope cluster: ClusterRole+Binding, --namespace=, --leader-elect in ops with its Role" ||
  { fail "scope cluster"; indent <<<"$check"; }

# Least privilege: exactly the operator's rules, no wildcard anywhere.
check=$(objects_py '
want = {
  ("budgetsweep.dev", "budgetsweeps"): {"get", "list", "watch", "update", "patch"},
  ("budgetsweep.dev", "budgetsweeps/status"): {"get", "update", "patch"},
  ("budgetsweep.dev", "budgetsweeps/finalizers"): {"update"},
  ("budgetsweep.dev", "budgetsweeptrials"): {"get", "list", "watch", "create", "update", "patch", "delete"},
  ("budgetsweep.dev", "budgetpools"): {"get", "list", "watch"},
  ("budgetsweep.dev", "budgetpools/status"): {"get", "update", "patch"},
  ("", "pods"): {"get", "list", "watch", "create", "delete", "patch"},
  ("", "pods/log"): {"get"},
  ("", "events"): {"create", "patch"},
  ("events.k8s.io", "events"): {"create", "patch"},
}
for d in docs:
    if d["kind"] not in ("Role", "ClusterRole") or "leader-election" in d["metadata"]["name"] or \
            d["metadata"]["name"].endswith(("-view", "-edit", "-auth", "-metrics-reader")):
        continue
    got = {}
    for r in d["rules"]:
        for field in ("apiGroups", "resources", "verbs"):
            assert "*" not in r[field], (d["kind"], r)
        for g in r["apiGroups"]:
            for res in r["resources"]:
                got.setdefault((g, res), set()).update(r["verbs"])
    assert got == want, (d["kind"], got)
print("ok")' < <(cat "$TMP/ns.yaml"; echo ---; cat "$TMP/cluster.yaml") 2>&1) || true
[ "$check" = ok ] && pass "RBAC: exactly the operator's verbs, no wildcards (Role and ClusterRole)" ||
  { fail "RBAC rules"; indent <<<"$check"; }

# Reviews and the metrics reader: the operator may create TokenReviews and SubjectAccessReviews
# (cluster-wide: they are cluster kinds) and nothing else through <fullname>-auth; the reader role
# grants get on /metrics only and is bound to metrics.readers. Without metrics.secure, no
# TokenReviews and no reader role; without the creator check too, no -auth at all.
render rel ops --set metrics.readers[0].kind=ServiceAccount --set metrics.readers[0].name=prom \
  --set metrics.readers[0].namespace=mon >"$TMP/readers.yaml"
render rel ops --set metrics.secure=false >"$TMP/plain.yaml"
render rel ops --set metrics.secure=false --set creatorCheck.enabled=false >"$TMP/neither.yaml"
check=$(objects_py '
def load(path):
    return [d for d in yaml.safe_load_all(open(path)) if d]
def named(ds, kind, name):
    return [d for d in ds if d["kind"] == kind and d["metadata"]["name"] == name]
auth = named(docs, "ClusterRole", "rel-budgetsweep-auth")[0]
assert auth["rules"] == [
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
], auth["rules"]
binding = named(docs, "ClusterRoleBinding", "rel-budgetsweep-auth")[0]
assert binding["roleRef"]["name"] == "rel-budgetsweep-auth"
assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "rel-budgetsweep", "namespace": "ops"}]
reader = named(docs, "ClusterRole", "rel-budgetsweep-metrics-reader")[0]
assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}], reader["rules"]
assert not named(docs, "ClusterRoleBinding", "rel-budgetsweep-metrics-reader"), "bound without readers"
readers = load(sys.argv[1])
rb = named(readers, "ClusterRoleBinding", "rel-budgetsweep-metrics-reader")[0]
assert rb["subjects"] == [{"kind": "ServiceAccount", "name": "prom", "namespace": "mon"}], rb
plain = load(sys.argv[2])
assert not named(plain, "ClusterRole", "rel-budgetsweep-metrics-reader")
assert named(plain, "ClusterRole", "rel-budgetsweep-auth")[0]["rules"] == auth["rules"][1:]
dep = next(d for d in plain if d["kind"] == "Deployment")
assert "--metrics-secure" not in dep["spec"]["template"]["spec"]["containers"][0]["args"]
neither = load(sys.argv[3])
assert not [d for d in neither if d["metadata"]["name"].endswith("-auth")]
print("ok")' "$TMP/readers.yaml" "$TMP/plain.yaml" "$TMP/neither.yaml" <"$TMP/ns.yaml" 2>&1) || true
[ "$check" = ok ] && pass "reviews: <fullname>-auth creates tokenreviews and subjectaccessreviews only; metrics-reader gets /metrics, bound to metrics.readers" ||
  { fail "review and reader roles"; indent <<<"$check"; }

# metrics.secure: HTTPS in the Service annotation and the ServiceMonitor, the Secret mounted and
# passed with metrics.certSecret; the projected API token of serviceAccount.tokenExpirationSeconds.
render rel ops --set serviceMonitor.enabled=true --set metrics.certSecret=op-tls \
  --set serviceAccount.tokenExpirationSeconds=3600 >"$TMP/cert.yaml"
check=$(objects_py '
plain = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
svc = next(d for d in docs if d["kind"] == "Service")
assert svc["metadata"]["annotations"]["prometheus.io/scheme"] == "https"
assert next(d for d in plain if d["kind"] == "Service")["metadata"]["annotations"]["prometheus.io/scheme"] == "http"
ep = next(d for d in docs if d["kind"] == "ServiceMonitor")["spec"]["endpoints"][0]
assert ep["scheme"] == "https" and ep["tlsConfig"] == {"insecureSkipVerify": True}, ep
assert ep["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token", ep
pod = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]
c = pod["containers"][0]
assert c["args"][5:8] == ["--metrics-secure", "--metrics-cert-file=/etc/budgetsweep/metrics-tls/tls.crt",
                          "--metrics-key-file=/etc/budgetsweep/metrics-tls/tls.key"], c["args"]
vols = {v["name"]: v for v in pod["volumes"]}
assert vols["metrics-tls"]["secret"]["secretName"] == "op-tls"
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
assert mounts["/etc/budgetsweep/metrics-tls"] == "metrics-tls"
assert pod["automountServiceAccountToken"] is False
api = vols[mounts["/var/run/secrets/kubernetes.io/serviceaccount"]]["projected"]["sources"]
assert api[0] == {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}, api
assert api[1]["configMap"]["name"] == "kube-root-ca.crt" and api[2]["downwardAPI"], api
print("ok")' "$TMP/plain.yaml" <"$TMP/cert.yaml" 2>&1) || true
[ "$check" = ok ] && pass "metrics.secure: https scheme, ServiceMonitor with token and tlsConfig, certSecret mounted; projected token lifetime" ||
  { fail "metrics.secure rendering"; indent <<<"$check"; }

# The users' roles, aggregated into view, edit and admin: reading for viewers, writing sweeps (not
# trial records, not status, not BudgetPools: a pool is a quota) for editors; none with
# rbac.aggregateClusterRoles=false.
render rel ops --set rbac.aggregateClusterRoles=false >"$TMP/no-user-roles.yaml"
check=$(objects_py '
off = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
roles = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ClusterRole"}
agg = "rbac.authorization.k8s.io/aggregate-to-"
view, edit = roles["rel-budgetsweep-view"], roles["rel-budgetsweep-edit"]
assert {k for k, v in view["metadata"]["labels"].items() if k.startswith(agg) and v == "true"} == \
    {agg + "view"}, view["metadata"]["labels"]
assert {k for k, v in edit["metadata"]["labels"].items() if k.startswith(agg) and v == "true"} == \
    {agg + "edit", agg + "admin"}, edit["metadata"]["labels"]
def grants(role):
    got = {}
    for r in role["rules"]:
        for field in ("apiGroups", "resources", "verbs"):
            assert "*" not in r[field], r
        for g in r["apiGroups"]:
            for res in r["resources"]:
                got.setdefault((g, res), set()).update(r["verbs"])
    return got
read = {"get", "list", "watch"}
assert grants(view) == {("budgetsweep.dev", "budgetsweeps"): read,
                        ("budgetsweep.dev", "budgetsweeptrials"): read,
                        ("budgetsweep.dev", "budgetpools"): read}, grants(view)
assert grants(edit) == {("budgetsweep.dev", "budgetsweeps"): read | {"create", "update", "patch", "delete"},
                        ("budgetsweep.dev", "budgetsweeptrials"): read,
                        ("budgetsweep.dev", "budgetpools"): read}, grants(edit)
assert not [d for d in off if d["kind"] == "ClusterRole" and
            d["metadata"]["name"].endswith(("-view", "-edit"))], "rbac.aggregateClusterRoles=false"
print("ok")' "$TMP/no-user-roles.yaml" <"$TMP/ns.yaml" 2>&1) || true
[ "$check" = ok ] && pass "users' ClusterRoles: view reads sweeps, trials and pools, edit writes sweeps only; off on request" ||
  { fail "users' ClusterRoles"; indent <<<"$check"; }

# Pod Security "restricted" on the operator pod, read-only root, probes on the health port.
check=$(objects_py '
pod = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]
sc = pod["securityContext"]
assert sc["runAsNonRoot"] is True and sc["runAsUser"] != 0, sc
assert sc["seccompProfile"] == {"type": "RuntimeDefault"}, sc
c = pod["containers"][0]
csc = c["securityContext"]
assert csc["allowPrivilegeEscalation"] is False and csc["readOnlyRootFilesystem"] is True, csc
assert csc["capabilities"] == {"drop": ["ALL"]}, csc
assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
assert ports == {"metrics": 8080, "health": 8081}, ports
print("ok")' <"$TMP/ns.yaml" 2>&1) || true
[ "$check" = ok ] && pass "operator pod: restricted securityContext, read-only root, probes" ||
  { fail "operator pod"; indent <<<"$check"; }

# The dashboard ConfigMap carries the sidecar label and exactly the dashboard file.
check=$(objects_py '
import json
cm = next(d for d in docs if d["kind"] == "ConfigMap")
assert cm["metadata"]["labels"]["grafana_dashboard"] == "1", cm["metadata"]["labels"]
shipped = json.loads(cm["data"]["budgetsweep.json"])
assert shipped == json.load(open(sys.argv[1])), "ConfigMap differs from the dashboard file"
print("ok")' "$CHART/dashboards/budgetsweep.json" <"$TMP/ns.yaml" 2>&1) || true
[ "$check" = ok ] && pass "dashboard ConfigMap: label grafana_dashboard=1, the dashboard JSON" ||
  { fail "dashboard ConfigMap"; indent <<<"$check"; }

# Monitors: off by default (above), rendered on request and pointed at the right targets.
render rel ops --set serviceMonitor.enabled=true --set trialPodMonitor.enabled=true \
  --set watchNamespace=ml >"$TMP/monitors.yaml"
check=$(objects_py '
sm = next(d for d in docs if d["kind"] == "ServiceMonitor")
svc = next(d for d in docs if d["kind"] == "Service")
assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
assert sm["spec"]["endpoints"][0]["port"] == svc["spec"]["ports"][0]["name"] == "metrics"
assert sm["spec"]["endpoints"][0]["honorLabels"] is True
pm = next(d for d in docs if d["kind"] == "PodMonitor")
assert pm["spec"]["namespaceSelector"] == {"matchNames": ["ml"]}, pm["spec"]
assert pm["spec"]["selector"]["matchExpressions"][0]["key"] == "budgetsweep.dev/sweep"
print("ok")' <"$TMP/monitors.yaml" 2>&1) || true
[ "$check" = ok ] && pass "ServiceMonitor selects the metrics Service; PodMonitor the trial pods of ml" ||
  { fail "monitors"; indent <<<"$check"; }

finish
