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
# The cluster's address: the API server listens on it, and it is the node's InternalIP, so that
# pods reach the API server through the `kubernetes` Service as on a real cluster. It sits on a
# bridge without ports (this kernel has no dummy links) that up.sh adds (as root) and down.sh
# removes once no cluster listens on it; without root the API server stays on loopback and no
# node can join.
CLUSTER_LINK=bsw-node0
CLUSTER_IP=10.213.0.1
ORDER=("${COMPONENTS[@]}")   # what ensure_comp restarts after a component (node_lib.sh: the node's)
READY_TIMEOUT=${BSW_CLUSTER_TIMEOUT:-120}

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
  [ "$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | head -1)" = "$exe" ] || return 0
  echo "$pid"
}

# exited <pid>: the process is gone (no /proc entry) or a zombie, so it holds no port or file any
# more.
exited() {
  local state
  state=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null) || true
  [ -z "$state" ] || [ "$state" = Z ]
}

# wait_exited <pid> <tenths of a second>: whether the process exited within that time.
wait_exited() {
  local i
  for i in $(seq 1 "$2"); do exited "$1" && return 0; sleep 0.1; done
  exited "$1"
}

# stop_comp <component>: SIGTERM, then SIGKILL after a grace period; returns once the process has
# exited, so that its ports are free for a restart (a killed process can take seconds to exit on
# a loaded machine); removes the pid file.
stop_comp() {
  local c=$1 pid
  pid=$(comp_pid "$c")
  if [ -n "$pid" ]; then
    say "stopping $c (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_exited "$pid" 200; then
      say "$c did not exit within 20s of SIGTERM; SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      wait_exited "$pid" 600 || fail "$c (pid $pid) still runs 60s after SIGKILL"
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

# ---- certificates (openssl) --------------------------------------------------------------------
write_openssl_cnf() {
  cat > "$1/openssl.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost,IP:127.0.0.1,IP:$CLUSTER_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
}
EC_KEY=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
mkca() {   # dir name subject
  openssl req -config "$1/openssl.cnf" -x509 "${EC_KEY[@]}" -keyout "$1/$2.key" -out "$1/$2.crt" \
    -days 3650 -subj "$3" -extensions ca 2>/dev/null
}
mkcert() { # dir name subject ca-name profile [extensions-file, default dir/openssl.cnf]
  local d=$1
  openssl req -config "$d/openssl.cnf" -new "${EC_KEY[@]}" -keyout "$d/$2.key" -out "$d/$2.csr" \
    -subj "$3" 2>/dev/null
  openssl x509 -req -in "$d/$2.csr" -CA "$d/$4.crt" -CAkey "$d/$4.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 3650 \
    -extfile "${6:-$d/openssl.cnf}" -extensions "$5" -out "$d/$2.crt" 2>/dev/null
  rm -f "$d/$2.csr"
}

# ---- starting components -----------------------------------------------------------------------
# ensure_comp <component> <fingerprint-extra> <argv...>: reuse the running process when its
# recorded command line and fingerprint match; otherwise (re)start it.
STARTED=() REUSED=()
ensure_comp() {
  local c=$1 extra=$2; shift 2
  local want pid
  want=$(printf '%s\n' "$@"; printf '#%s\n' "$extra")
  pid=$(comp_pid "$c")
  if [ -n "$pid" ] && [ "$want" = "$(cat "$RUN/$c.cmd" 2>/dev/null)" ]; then
    REUSED+=("$c"); return 0
  fi
  if [ -n "$pid" ]; then
    say "$c runs with another configuration; restarting it and what depends on it"
    local i j
    for i in "${!ORDER[@]}"; do [ "${ORDER[i]}" = "$c" ] && break; done
    for (( j=${#ORDER[@]}-1; j>=i; j-- )); do stop_comp "${ORDER[j]}"; done
  fi
  printf '%s\n' "$want" > "$RUN/$c.cmd"
  rm -f "$RUN/$c.pid"
  printf '=== %s starting %s\n' "$(date -u +%FT%TZ)" "$c" >> "$LOGS/$c.log"
  # Own session, no terminal, output to the log: survives the caller and never holds its pipe.
  # fd 8 (our lock) is closed so that the component never holds the lock.
  setsid bash -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$RUN/$c.pid" "$@" \
    >> "$LOGS/$c.log" 2>&1 < /dev/null 8>&- &
  # The pid file is written before the exec: until the exec, /proc/PID/cmdline is bash's and
  # comp_pid does not know the process, so wait for the exec (or the process's death) too.
  local i pid
  for i in $(seq 1 200); do
    if [ -s "$RUN/$c.pid" ]; then
      [ -n "$(comp_pid "$c")" ] && break
      pid=$(cat "$RUN/$c.pid")
      kill -0 "$pid" 2>/dev/null || break   # died: wait_healthy reports it with its log
    fi
    sleep 0.05
  done
  STARTED+=("$c")
}

# wait_healthy <component> <command...>: until the command succeeds; fail if the process dies.
wait_healthy() {
  local c=$1; shift
  local deadline=$(( $(date +%s) + READY_TIMEOUT ))
  while :; do
    "$@" >/dev/null 2>&1 && return 0
    if [ -z "$(comp_pid "$c")" ]; then
      tail -n 30 "$LOGS/$c.log" >&2 || true
      fail "$c exited; log: $LOGS/$c.log"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 30 "$LOGS/$c.log" >&2 || true
      fail "$c not healthy after ${READY_TIMEOUT}s; log: $LOGS/$c.log"
    fi
    sleep 0.2
  done
}

# write_env <file> NAME=value...: export lines for tests to source.
write_env() {
  local file=$1 kv
  shift
  for kv in "$@"; do printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}"; done > "$file"
}

# say_ready <what>: the time since $T0, and which components were started and which reused.
say_ready() {
  say "$1 in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s;" \
    "started: ${STARTED[*]:-none}; reused: ${REUSED[*]:-none}"
}
