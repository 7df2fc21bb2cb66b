# Shared by the chart tests (sourced): paths, the cached helm, a pass/fail tally, and a YAML reader.
# ROOT: the repository; CHART: charts/budgetsweep; HELM: helm from build.sh (built on first use).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CHART=$ROOT/charts/budgetsweep
HELM=$("$HERE/build.sh" helm | sed -n 's/^helm=//p')
[ -x "$HELM" ] || { echo "FAIL: build.sh did not produce helm"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# helm writes caches and its repository config under these; keep them out of $HOME.
export HELM_CACHE_HOME=$TMP/helm/cache HELM_CONFIG_HOME=$TMP/helm/config HELM_DATA_HOME=$TMP/helm/data

failures=0
pass() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
indent() { sed 's/^/       | /'; }
finish() {
  [ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
  echo "all checks passed"
}

# use_test_node: the test node's settings (node.env: BSW_NODE_NAME, ...) and VERSION, the tag of
# the images on it; fails the test when there is no node.
use_test_node() {
  [ -s "$BSW_CLUSTER_DIR/node/node.env" ] || { echo "FAIL no test node (node_fixture.sh up)"; exit 1; }
  # shellcheck source=/dev/null
  . "$BSW_CLUSTER_DIR/node/node.env"
  VERSION=$("$ROOT/scripts/project-version")
}

# render RELEASE NAMESPACE [helm template flags...]: the chart's objects as one YAML stream.
render() {
  local release=$1 ns=$2; shift 2
  "$HELM" template "$release" "$CHART" --namespace "$ns" "$@"
}

# objects_py 'python over `docs` (the YAML documents of stdin, None dropped)' [args...]: runs it
# with the args in sys.argv[1:].
objects_py() {
  local code=$1; shift
  python3 -c "import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
$code" "$@"
}

# sa_kubeconfig NAMESPACE SERVICEACCOUNT DIR: writes DIR/<sa>.kubeconfig, which reaches the
# cluster of the caller's k() (its server and CA) as that ServiceAccount, with a 1 h token in
# DIR/<sa>.token: for an operator run on the host with the chart's RBAC.
sa_kubeconfig() {
  local ns=$1 sa=$2 dir=$3 server
  server=$(k config view --minify --raw -o jsonpath='{.clusters[0].cluster.server}')
  k config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
    base64 -d >"$dir/cluster-ca.crt"
  k -n "$ns" create token "$sa" --duration=1h >"$dir/$sa.token"
  cat >"$dir/$sa.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
current-context: sa
contexts: [{name: sa, context: {cluster: c, user: sa, namespace: $ns}}]
clusters: [{name: c, cluster: {server: "$server", certificate-authority: $dir/cluster-ca.crt}}]
users: [{name: sa, user: {tokenFile: $dir/$sa.token}}]
KUBECONFIG
}
