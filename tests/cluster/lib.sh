# Shared by up.sh and down.sh (sourced, not run).
# State of one test cluster lives in one directory:
#   pki/                certificates and keys (openssl)
#   etcd-data/          etcd's data
#   run/<c>.pid         pid of each component; run/<c>.cmd its command line (one arg a line)
#   logs/<c>.log        stdout+stderr of each component
#   ports.env           the loopback ports in use
#   admin.kubeconfig    cluster-admin (CN=admin, O=system:masters)
#   scheduler.kubeconfig, controller-manager.kubeconfig
#   cluster.env         KUBECONFIG, the API server URL, ports, binaries (for tests to source)

BSW_CLUSTER_DIR=${BSW_CLUSTER_DIR:-$HOME/.cache/budgetsweep/cluster}
STATE=$BSW_CLUSTER_DIR
RUN=$STATE/run
LOGS=$STATE/logs
PKI=$STATE/pki
COMPONENTS=(etcd kube-apiserver kube-scheduler kube-controller-manager)   # start order; stop in reverse

say() { printf '[cluster] %s\n' "$*" >&2; }
fail() { printf '[cluster] error: %s\n' "$*" >&2; exit 1; }

# pid of a running component, or nothing. A pid counts only if the process still runs the
# binary recorded for it (guards against a reused pid).
comp_pid() {
  local c=$1 pid exe
  [ -f "$RUN/$c.pid" ] || return 0
  pid=$(cat "$RUN/$c.pid" 2>/dev/null) || return 0
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  exe=$(head -1 "$RUN/$c.cmd" 2>/dev/null) || return 0
  tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | head -1 | grep -qxF -- "$exe" || return 0
  echo "$pid"
}

# stop_comp <component>: SIGTERM, then SIGKILL after a grace period; removes the pid file.
stop_comp() {
  local c=$1 pid i
  pid=$(comp_pid "$c")
  if [ -n "$pid" ]; then
    say "stopping $c (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      say "$c did not exit within 20s of SIGTERM; SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  fi
  rm -f "$RUN/$c.pid"
}

# Processes of this cluster, found without pid files: one of our binaries whose command line
# names this state directory.
cluster_pids() {
  local pid exe
  for pid in $(pgrep -f -- "$STATE/" 2>/dev/null); do
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    case ${exe##*/} in etcd|kube-apiserver|kube-scheduler|kube-controller-manager) echo "$pid" ;; esac
  done
}
