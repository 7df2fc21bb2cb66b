# Shared by the cluster e2e tests (sourced): drop_namespace NS deletes a test namespace without
# waiting, and first releases our accounting finalizer on every pod left in it, so nothing of ours
# keeps the namespace alive. Uses the caller's k() (kubectl with its flags).
drop_namespace() {
  local pod
  k delete namespace "$1" --wait=false >/dev/null 2>&1
  for pod in $(k -n "$1" get pods -o name 2>/dev/null); do
    k -n "$1" patch "$pod" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  done
}
