#!/usr/bin/env bash
# kubectl-bsw as a user runs it: the real kubectl finds the plugin on PATH (`kubectl bsw ...`),
# against the test cluster. A BudgetSweep with five BudgetSweepTrial records as the operator
# writes them (a completed trial, one cut at a rung, one failed twice with its output, one
# diverged, one running) and its status, then: ls (-n, -A), trials (the failure's output lines),
# top (--once, into a pipe, and on a terminal: redrawn every interval until the sweep ends),
# report (HTML and PNG), --context of a copied kubeconfig whose second context has another
# namespace, $KUBECONFIG, and the errors for a missing sweep, a missing context and bad usage.
# Every command's output is printed, indented, as docs/kubernetes.md's examples are taken from it.
#
#   eval "$(tests/cluster/up.sh | tail -1)"
#   KUBECTL_BSW=build/operator/cmd/kubectl/kubectl-bsw tests/cluster/kubectl_plugin_test.sh
#
# ctest runs it under the cluster fixture (label cluster). Without KUBECONFIG it skips (exit 77).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PLUGIN=${KUBECTL_BSW:-$ROOT/build/operator/cmd/kubectl/kubectl-bsw}
BUDGETSWEEP=${BUDGETSWEEP:-$ROOT/build/operator/cmd/budgetsweep}

if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set (eval \"\$(tests/cluster/up.sh | tail -1)\")"
  exit 77
fi
[ -x "$PLUGIN" ] || { echo "FAIL: no kubectl-bsw at $PLUGIN (set KUBECTL_BSW)"; exit 1; }
[ "$(basename "$PLUGIN")" = kubectl-bsw ] || { echo "FAIL: $PLUGIN is not named kubectl-bsw"; exit 1; }
# kubectl's plugin convention: an executable named kubectl-<name> on PATH.
export PATH="$(cd "$(dirname "$PLUGIN")" && pwd):$PATH"

TMP=$(mktemp -d)
NS=bsw-plugin-$(date +%s)-$$
NS2=$NS-b
# A private discovery cache: nothing written under $HOME.
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }
cleanup() {
  k delete namespace "$NS" "$NS2" --wait=false >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT

failures=0
pass() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
indent() { sed 's/^/       | /'; }

# bsw ARGS...: runs `kubectl bsw ARGS...`; its stdout in $TMP/out, stderr in $TMP/err, exit status
# in $rc; prints all three.
bsw() {
  rc=0
  kubectl bsw "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  printf '$ kubectl bsw %s   (exit %s)\n' "$*" "$rc"
  indent <"$TMP/out"
  [ ! -s "$TMP/err" ] || indent <"$TMP/err"
}
# expect_line DESCRIPTION ERE: a line of the last command's stdout matches.
expect_line() {
  if grep -Eq -- "$2" "$TMP/out"; then pass "$1"; else fail "$1: no line matches /$2/"; fi
}
expect_text() {
  if grep -Fq -- "$2" "$TMP/out"; then pass "$1"; else fail "$1: no \"$2\""; fi
}
expect_rc() {
  if [ "$rc" = "$2" ]; then pass "$1"; else fail "$1: exit $rc, expected $2"; fi
}

k apply -f "$ROOT/crds/" >/dev/null
k wait --for=condition=Established --timeout=60s \
  crd/budgetsweeps.budgetsweep.dev crd/budgetsweeptrials.budgetsweep.dev >/dev/null
k create namespace "$NS" >/dev/null
k create namespace "$NS2" >/dev/null

sweep() {
  cat <<EOF
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata: {name: $1}
spec:
  budget: {gpuHours: 2}
  objective: {metric: validation_accuracy}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  parallelism: 2
  searchSpace:
    lr: {type: logUniform, min: 0.001, max: 1}
    optimizer: {type: choice, values: [adamw, sgd]}
  trial:
    template:
      spec:
        containers:
        - {name: trainer, image: "budgetsweep/trainer:0.1.0", command: [budgetsweep-trainer]}
EOF
}
sweep mnist | k apply -n "$NS" -f - >/dev/null
sweep cifar | k apply -n "$NS2" -f - >/dev/null
UID_=$(k get bsw mnist -n "$NS" -o jsonpath='{.metadata.uid}')

# The records as the operator writes them (kube::TrialLog): one per trial, labelled with and owned
# by the sweep, the events with their sweep-wide sequence numbers. Started an hour ago; t0004 runs.
NOW=$(date +%s)
T=$((NOW - 3600))
record() {  # record INDEX LR OPTIMIZER SEQ AT EVENTS...: SEQ and AT of its TrialCreated
  local index=$1 lr=$2 optimizer=$3
  shift 3
  cat <<EOF
---
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweepTrial
metadata:
  name: mnist-t000$index
  labels: {budgetsweep.dev/sweep: mnist}
  ownerReferences:
  - {apiVersion: budgetsweep.dev/v1alpha1, kind: BudgetSweep, name: mnist, uid: $UID_,
     controller: true, blockOwnerDeletion: false}
spec: {sweep: mnist, index: $index, params: {lr: $lr, optimizer: $optimizer}}
status:
  events:
  - {seq: $1, event: TrialCreated, at: $2, trial: $index, params: [[lr, $lr], [optimizer, $optimizer]]}
EOF
  shift 2
  local e
  for e in "$@"; do printf '  - %s\n' "$e"; done
}
OOM='RuntimeError: CUDA error: out of memory'
{
  record 0 0.01 adamw 0 "$T" \
    "{seq: 1, event: SegmentLaunched, at: $T, trial: 0, segment: 0, from: 0, until: 9, deadline: $((T + 3300))}" \
    "{seq: 4, event: ValueRecorded, at: $((T + 300)), trial: 0, resource: 1, value: 0.71, seconds: 295, units: 1}" \
    "{seq: 15, event: ValueRecorded, at: $((T + 900)), trial: 0, resource: 3, value: 0.80, seconds: 895, units: 3}" \
    "{seq: 17, event: ValueRecorded, at: $((T + 2400)), trial: 0, resource: 9, value: 0.86, seconds: 2395, units: 9}" \
    "{seq: 18, event: SegmentEnded, at: $((T + 2401)), trial: 0, segment: 0, reason: '', message: '', started: $((T + 5)), finished: $((T + 2401)), devices: 1}"
  record 1 0.003 sgd 2 "$((T + 1))" \
    "{seq: 3, event: SegmentLaunched, at: $((T + 1)), trial: 1, segment: 0, from: 0, until: 9, deadline: $((T + 3300))}" \
    "{seq: 5, event: ValueRecorded, at: $((T + 310)), trial: 1, resource: 1, value: 0.42, seconds: 305, units: 1}" \
    "{seq: 6, event: TrialStopped, at: $((T + 310)), trial: 1, reason: RungCutoff, message: 'value 0.42 at rung 0 (epochs 1) is not in the top 1/3 of the 2 values recorded there'}" \
    "{seq: 7, event: SegmentEnded, at: $((T + 330)), trial: 1, segment: 0, reason: Stopped, message: stopped at rung 0, started: $((T + 3)), finished: $((T + 330)), devices: 1}"
  record 2 0.3 adamw 8 "$((T + 331))" \
    "{seq: 9, event: SegmentLaunched, at: $((T + 331)), trial: 2, segment: 0, from: 0, until: 9, deadline: $((T + 3600))}" \
    "{seq: 10, event: SegmentEnded, at: $((T + 400)), trial: 2, segment: 0, reason: Error, message: exit code 1, output: \"epoch 1/9\\nTraceback (most recent call last):\\n$OOM\", started: $((T + 335)), finished: $((T + 400)), devices: 1}" \
    "{seq: 11, event: SegmentLaunched, at: $((T + 401)), trial: 2, segment: 1, from: 0, until: 9, deadline: $((T + 3600))}" \
    "{seq: 12, event: SegmentEnded, at: $((T + 460)), trial: 2, segment: 1, reason: Error, message: exit code 1, output: \"resuming from checkpoint\\n$OOM\", started: $((T + 405)), finished: $((T + 460)), devices: 1}"
  record 3 0.9 sgd 13 "$((T + 461))" \
    "{seq: 14, event: SegmentLaunched, at: $((T + 461)), trial: 3, segment: 0, from: 0, until: 9, deadline: $((T + 3600))}" \
    "{seq: 16, event: SegmentEnded, at: $((T + 700)), trial: 3, segment: 0, reason: Diverged, message: the trainer reported a non-finite loss (exit code 3), output: \"step 40 loss 3.2\\nstep 60 loss nan\", started: $((T + 465)), finished: $((T + 700)), devices: 1}"
  record 4 0.02 adamw 19 "$((T + 2402))" \
    "{seq: 20, event: SegmentLaunched, at: $((T + 2402)), trial: 4, segment: 0, from: 0, until: 9, deadline: $((NOW + 1800))}" \
    "{seq: 21, event: ValueRecorded, at: $((T + 3300)), trial: 4, resource: 1, value: 0.74, seconds: 895, units: 1}"
} >"$TMP/records.yaml"
k apply -n "$NS" -f "$TMP/records.yaml" >/dev/null

# The status the operator would write for these records (the trial CRD has no status subresource,
# so the records' status went in with them; the sweep's goes through /status).
k patch bsw mnist -n "$NS" --subresource=status --type=merge -p "$(cat <<EOF
{"status": {
  "observedGeneration": 1, "phase": "Running",
  "budget": {"gpuHours": 2, "used": 0.94, "reserved": 0.5, "remaining": 0.56},
  "trials": {"created": 5, "running": 1, "paused": 0, "completed": 1, "stopped": 2, "failed": 1},
  "rungs": [{"resource": 1, "reached": 3, "promoted": 1}, {"resource": 3, "reached": 1, "promoted": 1},
            {"resource": 9}],
  "best": {"trial": "mnist-t0000", "value": 0.86, "resource": 9,
           "params": {"lr": 0.01, "optimizer": "adamw"}},
  "runningTrials": ["mnist-t0004"],
  "recentFailures": [
    {"trial": "mnist-t0002", "segment": 1, "reason": "Error", "message": "exit code 1",
     "output": "resuming from checkpoint\n$OOM"},
    {"trial": "mnist-t0003", "segment": 0, "reason": "Diverged",
     "message": "the trainer reported a non-finite loss (exit code 3)",
     "output": "step 40 loss 3.2\nstep 60 loss nan"}]}}
EOF
)" >/dev/null

bsw --help
expect_rc "kubectl finds the plugin on PATH" 0
expect_text "--help names the commands" "trials"

bsw ls -n "$NS"
expect_rc "ls -n" 0
expect_line "ls: header as kubectl get" '^NAME +PHASE +BUDGET +BEST +TRIALS +AGE$'
expect_line "ls: phase, budget bar, best, running/created, age" \
  '^mnist +Running +\[#####\+\+\.\.\.\] 0\.94\+0\.50/2\.00 GPU-h +0\.86 \(mnist-t0000\) +1/5 +[0-9]+(s|m[0-9]*s?)$'
if grep -q cifar "$TMP/out"; then fail "ls -n shows only its namespace"; else pass "ls -n shows only its namespace"; fi

bsw ls -A
expect_rc "ls -A" 0
expect_line "ls -A: NAMESPACE first" '^NAMESPACE +NAME +PHASE +BUDGET +BEST +TRIALS +AGE$'
expect_line "ls -A: the sweep with a status" "^$NS +mnist +Running +\\[#####"
expect_line "ls -A: the sweep without one" "^$NS2 +cifar +- +\\[\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\] 0\\.00\\+0\\.00/2\\.00 GPU-h +- +- +"

bsw trials mnist -n "$NS"
expect_rc "trials" 0
expect_line "trials: header" '^TRIAL +PHASE +RESOURCE +VALUE +PARAMS$'
expect_line "trials: completed" '^mnist-t0000 +Completed +9 +0\.86 +lr=0\.01 optimizer=adamw$'
expect_line "trials: cut at a rung" '^mnist-t0001 +Stopped \(RungCutoff\) +1 +0\.42 +lr=0\.003 optimizer=sgd$'
expect_line "trials: failed" '^mnist-t0002 +Failed \(Error\) +- +- +lr=0\.3 optimizer=adamw$'
expect_line "trials: diverged" '^mnist-t0003 +Stopped \(Diverged\) +- +- +lr=0\.9 optimizer=sgd$'
expect_line "trials: running" '^mnist-t0004 +Running +1 +0\.74 +lr=0\.02 optimizer=adamw$'
if grep -A2 -x 'mnist-t0002: Error in segment 1: exit code 1' "$TMP/out" |
  tail -2 | diff - <(printf '    resuming from checkpoint\n    %s\n' "$OOM") >/dev/null; then
  pass "trials: the failed trial's last output lines, indented under its name"
else
  fail "trials: the failed trial's last output lines, indented under its name"
fi
expect_line "trials: the diverged trial's output" '^    step 60 loss nan$'

bsw top mnist -n "$NS" --once
expect_rc "top --once" 0
expect_line "top: phase" "^budgetsweep $NS/mnist  Running  \\(asha/stop, parallelism 2\\)$"
expect_line "top: budget" '^budget \[#+\++\.+\] 0\.94\+0\.50/2\.00 GPU-h, 0\.56 remaining$'
expect_text "top: counts" "trials: 5 created, 1 running, 0 paused, 1 completed, 2 stopped, 1 failed"
expect_text "top: rungs" "rungs: epochs 1: 3 reached, 1 continued; epochs 3: 1 reached, 1 continued"
expect_text "top: best" "best: mnist-t0000 validation_accuracy=0.86 at epochs 9  (lr=0.01 optimizer=adamw)"
expect_line "top: the running trial" '^mnist-t0004 +0 +1 +0\.74 +(19|20)m +in (29|30)m +lr=0\.02 optimizer=adamw$'
expect_line "top: recent failures" '^      step 60 loss nan$'
# Not a terminal: one frame, as with --once.
rc=0
timeout 60 kubectl bsw top mnist -n "$NS" >"$TMP/out" 2>&1 || rc=$?
expect_rc "top into a pipe prints one frame and exits" 0
expect_text "top into a pipe: the frame" "budgetsweep $NS/mnist  Running"

bsw report mnist -n "$NS" -o "$TMP/mnist.html" --png "$TMP/mnist.png"
expect_rc "report" 0
if [ -s "$TMP/mnist.html" ] && grep -q 'mnist' "$TMP/mnist.html"; then
  pass "report: the HTML file names the sweep"
else
  fail "report: the HTML file names the sweep"
fi
rows=$(grep -o '<tr class="trial">' "$TMP/mnist.html" | wc -l || true)
if [ "$rows" = 5 ]; then pass "report: a row per trial"; else fail "report: $rows trial rows, expected 5"; fi
if [ "$(head -c 4 "$TMP/mnist.png" | tail -c 3)" = PNG ]; then pass "report --png"; else fail "report --png"; fi
# The same report from `budgetsweep report --kubeconfig F NAMESPACE/SWEEP`: the same trial records
# read through the kubeconfig file, so the same rows and the same best value.
rc=0
"$BUDGETSWEEP" report --kubeconfig "$KUBECONFIG" "$NS/mnist" -o "$TMP/direct.html" >"$TMP/out" 2>&1 || rc=$?
expect_rc "budgetsweep report --kubeconfig F $NS/mnist" 0
best_of() { grep -o 'id="best-value">[^<]*' "$1" | cut -d">" -f2 || true; }
rows=$(grep -o '<tr class="trial">' "$TMP/direct.html" | wc -l || true)
if [ "$rows" = 5 ] && [ -n "$(best_of "$TMP/direct.html")" ] &&
  [ "$(best_of "$TMP/direct.html")" = "$(best_of "$TMP/mnist.html")" ]; then
  pass "budgetsweep report --kubeconfig: 5 trial rows, best $(best_of "$TMP/direct.html")"
else
  fail "budgetsweep report --kubeconfig: $rows rows, best '$(best_of "$TMP/direct.html")'"
fi

# On a terminal (a pseudo-terminal from script(1)): the frame redrawn in place every interval,
# until the sweep ends.
CLEAR=$'\e[H\e[2J'
top_on_tty() {
  rc=0
  timeout "$1" script -qefc "kubectl bsw top mnist -n $NS --interval 1" /dev/null \
    >"$TMP/tty" 2>&1 || rc=$?
  frames=$(grep -oF "$CLEAR" "$TMP/tty" | wc -l || true)
}
top_on_tty 5
if [ "$rc" = 124 ] && [ "$frames" -ge 3 ]; then
  pass "top on a terminal redraws every second ($frames frames in 5 s)"
else
  fail "top on a terminal: exit $rc, $frames frames in 5 s"; indent <"$TMP/tty"
fi
k patch bsw mnist -n "$NS" --subresource=status --type=merge \
  -p '{"status": {"phase": "Completed", "runningTrials": []}}' >/dev/null
top_on_tty 60
if [ "$rc" = 0 ] && [ "$frames" = 1 ] && grep -qF "mnist  Completed" "$TMP/tty"; then
  pass "top on a terminal exits after drawing an ended sweep"
else
  fail "top on a terminal of an ended sweep: exit $rc, $frames frames"; indent <"$TMP/tty"
fi

# A second context in a copy of the kubeconfig: the same cluster and user, another namespace.
kubectl config view --raw >"$TMP/config"
CLUSTER=$(kubectl config view --minify -o jsonpath='{.contexts[0].context.cluster}')
USER_=$(kubectl config view --minify -o jsonpath='{.contexts[0].context.user}')
kubectl config --kubeconfig "$TMP/config" set-context other --cluster="$CLUSTER" \
  --user="$USER_" --namespace="$NS2" >/dev/null

bsw ls --kubeconfig "$TMP/config" --context other
expect_rc "ls --context" 0
expect_line "ls --context: the context's namespace" '^cifar +- +\[\.\.\.\.\.\.\.\.\.\.\] '
if grep -q mnist "$TMP/out"; then fail "ls --context: not the other namespace"; else pass "ls --context: not the other namespace"; fi

rc=0
KUBECONFIG="$TMP/config" kubectl bsw trials mnist --context other -n "$NS" >"$TMP/out" 2>&1 || rc=$?
expect_rc "\$KUBECONFIG with --context, -n over the context's namespace" 0
expect_line "-n over the context's namespace: its trials" '^mnist-t0004 +Running'

bsw ls --kubeconfig "$TMP/config" --context nope
expect_rc "a missing context exits 1" 1
if grep -q -- "--context nope: kubeconfig $TMP/config: context 'nope' not found" "$TMP/err"; then
  pass "a missing context is named with its flag and file"
else
  fail "a missing context is named with its flag and file"
fi

bsw trials nope -n "$NS"
expect_rc "a missing sweep exits 1" 1
if grep -qx "error: budgetsweep \"nope\" not found in namespace $NS" "$TMP/err"; then
  pass "a missing sweep is named with its namespace"
else
  fail "a missing sweep is named with its namespace"
fi
bsw report nope -n "$NS" -o "$TMP/nope.html"
expect_rc "report of a missing sweep exits 1" 1
[ ! -e "$TMP/nope.html" ] && pass "report of a missing sweep writes nothing" ||
  fail "report of a missing sweep writes nothing"

bsw top -n "$NS"
expect_rc "bad usage (top without NAME) exits 2" 2

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
