#!/usr/bin/env bash
# The BudgetSweep CRD (crds/budgetsweeps.budgetsweep.dev.yaml) on a real kube-apiserver, side by
# side with `budgetsweep validate` (operator/core/api.cc, ParseSweep): both accept the same good
# sweeps and reject the same bad ones, each naming the field. On an existing sweep, an edit of an
# immutable field is refused naming the field, and one of the editable fields only (budget,
# parallelism, maxTrials, maxFailedTrials, metrics) is stored. Then the BudgetPool CRD
# (crds/budgetpools.budgetsweep.dev.yaml, issue #21): explain, short name, printer columns, the
# operator's status, bad pools refused naming the field, and sweeps drawing on a pool (poolRef
# without gpuHours accepted, a budget with neither refused, poolRef immutable).
#
#   eval "$(tests/cluster/up.sh | tail -1)"
#   BUDGETSWEEP=build/operator/cmd/budgetsweep tests/cluster/crd_test.sh
#
# ctest runs it under the cluster fixture (label cluster). Without KUBECONFIG it skips (exit 77).
#
# What the CLI rejects and the CRD cannot express (checked below as "cli-only" cases, so a change
# on either side shows up here):
#   - search-space `values` entries that are not a number, string or boolean (objects, lists,
#     null): the items are untyped in the schema (they may be any scalar), and CEL cannot see an
#     untyped list. The operator reports these as condition InvalidSpec.
#   - spec.throughput: a flag both probed and searched, and more than 64 candidate combinations.
# The limits that keep CEL's estimated cost bounded hold on both sides alike:
#   - at most 64 search-space parameters (searchSpace maxProperties);
#   - at most 1024 values in one choice/grid parameter (values maxItems).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CRD=$ROOT/crds/budgetsweeps.budgetsweep.dev.yaml
POOL_CRD=$ROOT/crds/budgetpools.budgetsweep.dev.yaml
BSW=${BUDGETSWEEP:-$ROOT/build/operator/cmd/budgetsweep}

if [ -z "${KUBECONFIG:-}" ]; then
  echo "SKIP: KUBECONFIG is not set (eval \"\$(tests/cluster/up.sh | tail -1)\")"
  exit 77
fi
[ -x "$BSW" ] || { echo "FAIL: no budgetsweep binary at $BSW (set BUDGETSWEEP)"; exit 1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# A private discovery cache: nothing written under $HOME, and no stale list of resources.
k() { kubectl --cache-dir="$TMP/kube-cache" --request-timeout=30s "$@"; }

failures=0
pass() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
indent() { sed 's/^/       | /'; }

# ---- the CRD --------------------------------------------------------------------------------------
k apply -f "$CRD" -f "$POOL_CRD" >/dev/null
k wait --for=condition=Established --timeout=60s crd/budgetsweeps.budgetsweep.dev \
  crd/budgetpools.budgetsweep.dev >/dev/null
pass "CRDs budgetsweeps and budgetpools applied and Established"
for crd in budgetsweeps.budgetsweep.dev budgetpools.budgetsweep.dev; do
  gen=$(k get crd "$crd" -o jsonpath='{.metadata.generation}')
  structural=$(k get crd "$crd" \
    -o jsonpath='{.status.conditions[?(@.type=="NonStructuralSchema")].status}')
  [ -z "$structural" ] && pass "$crd: schema is structural (generation $gen)" ||
    fail "$crd: NonStructuralSchema condition: $structural"
done

NS=crd-test-$(date +%s)-$$
k create namespace "$NS" >/dev/null
pass "namespace $NS"

# ---- kubectl explain (OpenAPI v3 is published a few seconds after the CRD changes) ----------------
explained=""
for _ in $(seq 1 60); do
  explained=$(k explain budgetsweep.spec.resource 2>&1) &&
    grep -q 'reductionFactor.*integer' <<<"$explained" && break
  sleep 0.5
done
if grep -q 'The first rung' <<<"$explained" && grep -q 'ASHA' <<<"$explained"; then
  pass "kubectl explain budgetsweep.spec.resource shows the field descriptions"
else
  fail "kubectl explain budgetsweep.spec.resource:"; indent <<<"$explained"
fi
# Every field of the spec and status has a description (python3 walks the schema; skipped without).
every_field_described() {   # every_field_described CRD_NAME
  local crd=$1 undescribed
  if ! command -v python3 >/dev/null; then
    echo "skip $crd: every schema field has a description: no python3"
    return
  fi
  undescribed=$(k get crd "$crd" -o json | python3 -c '
import json, sys
crd = json.load(sys.stdin)
root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
def walk(node, path):
    for name, child in node.get("properties", {}).items():
        p = path + "." + name
        if "description" not in child and p not in (".apiVersion", ".kind", ".metadata"):
            print(p)
        walk(child, p)
    if "additionalProperties" in node and isinstance(node["additionalProperties"], dict):
        child = node["additionalProperties"]
        if "description" not in child: print(path + ".<key>")
        walk(child, path + ".<key>")
    if "items" in node: walk(node["items"], path + "[]")
walk(root, "")
' 2>&1)
  [ -z "$undescribed" ] && pass "$crd: every schema field has a description" ||
    fail "$crd: fields without a description: $(echo $undescribed)"
}
every_field_described budgetsweeps.budgetsweep.dev

# ---- sweeps both sides accept ---------------------------------------------------------------------
BASE=$TMP/base.yaml
cat >"$BASE" <<'EOF'
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata:
  name: crd-base
spec:
  budget: {gpuHours: 2}
  objective: {metric: validation_accuracy, goal: maximize}
  resource: {unit: epochs, min: 1, max: 27, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 1}
  parallelism: 4
  maxTrials: 50
  maxFailedTrials: 2
  searchSpace:
    lr: {type: logUniform, min: 1.0e-4, max: 1.0e-1}
    warmup-fraction: {type: uniform, min: 0.0, max: 0.1}
    layers: {type: int, min: 1, max: 8, log: true}
    batch-size: {type: choice, values: [64, 128, 256]}
    optimizer: {type: grid, values: [adamw, sgd]}
    bf16: {type: choice, values: [true, false]}
  throughput:
    enabled: true
    targetUtilization: 0.9
    candidates: {workers: [0, 2], precision: [bf16]}
  trial:
    gpus: 1
    maxRetries: 2
    template:
      metadata: {labels: {team: ml}}
      spec:
        terminationGracePeriodSeconds: 20
        containers:
          - name: trainer
            image: budgetsweep/trainer:0.1.0
            command: [budgetsweep-trainer]
            args: [--dataset=fashion-mnist]
            env: [{name: OMP_NUM_THREADS, value: "1"}]
  metrics:
    prometheus: {url: http://prometheus.monitoring:9090}
    missingTimeoutSeconds: 120
EOF
cat >"$TMP/minimal.yaml" <<'EOF'
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata: {name: crd-minimal}
spec:
  budget: {gpuHours: 0.5}
  objective: {metric: loss}
  resource: {min: 1, max: 9}
  searchSpace:
    lr: {type: uniform, min: 0.001, max: 0.1}
  trial:
    template: {spec: {containers: [{name: t, image: x}]}}
EOF
cat >"$TMP/grid.yaml" <<'EOF'
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetSweep
metadata: {name: crd-grid}
spec:
  budget: {gpuHours: 1}
  objective: {metric: loss, goal: minimize}
  resource: {unit: steps, min: 100, max: 900, reductionFactor: 3}
  scheduler: {algorithm: grid}
  searchSpace:
    depth: {type: int, min: 2, max: 4}
    width: {type: grid, values: [32, 64]}
    act: {type: choice, values: [relu, gelu]}
  trial:
    gpus: 0
    template: {spec: {containers: [{name: t, image: x, command: [train]}]}}
EOF
# The longest name: 54 characters.
k patch --local -f "$TMP/minimal.yaml" --type=merge -o json \
  -p "{\"metadata\":{\"name\":\"$(printf 'n%.0s' $(seq 1 54))\"}}" >"$TMP/name54.json"

accept() {   # accept FILE: budgetsweep validate and kubectl apply (in $NS) both accept it
  local f=$1 out
  if out=$("$BSW" validate "$f" 2>&1); then pass "budgetsweep validate accepts ${f#"$ROOT"/}"
  else fail "budgetsweep validate rejects ${f#"$ROOT"/}:"; indent <<<"$out"; fi
  if out=$(k apply -n "$NS" -f "$f" 2>&1); then pass "kubectl apply accepts ${f#"$ROOT"/}"
  else fail "kubectl apply rejects ${f#"$ROOT"/}:"; indent <<<"$out"; fi
}
for f in "$ROOT"/examples/*.yaml "$BASE" "$TMP/minimal.yaml" "$TMP/grid.yaml" "$TMP/name54.json"; do
  accept "$f"
done

# ---- defaults: the same as api.cc's -------------------------------------------------------------
got=$(k get -n "$NS" bsw crd-minimal -o jsonpath='{.spec.objective.goal} {.spec.resource.unit} {.spec.resource.reductionFactor} {.spec.scheduler.algorithm} {.spec.scheduler.mode} {.spec.scheduler.seed} {.spec.parallelism} {.spec.maxFailedTrials} {.spec.trial.gpus} {.spec.trial.maxRetries} {.spec.metrics.missingTimeoutSeconds} [{.spec.maxTrials}]')
want="maximize epochs 3 asha stop 0 1 3 1 1 300 []"
[ "$got" = "$want" ] && pass "defaults: $got" || fail "defaults: got '$got', want '$want'"

# ---- short name, category, printer columns, status subresource ----------------------------------
# expect_columns WHAT HEADER ROW KUBECTL_GET_ARGS...: `kubectl get` prints the header HEADER and a
# first row that starts with ROW (runs of spaces squeezed; AGE varies).
expect_columns() {
  local what=$1 want_header=$2 want_row=$3 out header row
  shift 3
  out=$(k get "$@" 2>&1)
  header=$(head -1 <<<"$out" | tr -s ' ')
  row=$(sed -n 2p <<<"$out" | tr -s ' ')
  if [ "$header" = "$want_header" ] && [[ $row == "$want_row "* ]]; then
    pass "$what: $header / $row"
  else
    fail "$what:"; indent <<<"$out"
  fi
}
out=$(k get bsw -n "$NS" 2>&1) && grep -q crd-minimal <<<"$out" &&
  pass "kubectl get bsw (short name) lists the sweeps" || { fail "kubectl get bsw:"; indent <<<"$out"; }
out=$(k get budgetsweep -n "$NS" -o name 2>&1) && grep -q 'budgetsweep.budgetsweep.dev/crd-grid' <<<"$out" &&
  pass "kubectl get budgetsweep (category)" || { fail "kubectl get budgetsweep:"; indent <<<"$out"; }
# A status as operator/core/sweep_status.cc BuildStatus writes it.
status='{"status":{"observedGeneration":1,"phase":"Running",
  "conditions":[{"type":"Complete","status":"False","reason":"TrialsRunning","message":"4 trials running",
                 "lastTransitionTime":"2025-01-01T00:00:00Z","observedGeneration":1}],
  "budget":{"gpuHours":2,"used":0.75,"reserved":0.5,"remaining":0.75},
  "trials":{"created":12,"running":4,"paused":0,"completed":1,"stopped":7,"failed":0},
  "rungs":[{"resource":1,"reached":12,"promoted":4},{"resource":3,"reached":4,"promoted":1},{"resource":27}],
  "best":{"trial":"crd-base-t0003","value":0.9125,"resource":27,"params":{"lr":0.003,"batch-size":128,"optimizer":"sgd","bf16":true}},
  "runningTrials":["crd-base-t0008","crd-base-t0009","crd-base-t0010","crd-base-t0011"],
  "throughput":{"phase":"Decided","targetUtilization":0.9,"utilizationSource":"accelerator",
    "candidates":3,"budgetLimit":0.1,"budgetUsed":0.004,"targetMet":true,"reason":"TargetMet",
    "message":"workers=2 precision=bf16: 2363 samples/s","trialArgs":["--workers=2","--precision=bf16"],
    "baseline":{"settings":{},"samplesPerSecond":1835,"dataWaitRatio":0.12,"utilization":0.6},
    "chosen":{"settings":{"workers":2,"precision":"bf16"},"samplesPerSecond":2363,"dataWaitRatio":0.01,"utilization":0.93},
    "probes":[{"name":"crd-base-p0000","settings":{},"samplesPerSecond":1835,"dataWaitRatio":0.12,"utilization":0.6},
              {"name":"crd-base-p0001","settings":{"workers":0,"precision":"bf16"},"reason":"Error","message":"exited with code 2"}]}}}'
if out=$(k patch -n "$NS" bsw crd-base --subresource=status --type=merge -p "$status" 2>&1); then
  pass "status subresource accepts a BuildStatus-shaped status"
else
  fail "status patch:"; indent <<<"$out"
fi
got=$(k get -n "$NS" bsw crd-base -o jsonpath='{.status.best.params.optimizer} {.status.rungs[1].promoted} {.status.runningTrials[3]} {.status.throughput.chosen.settings.workers} {.status.throughput.probes[1].reason}')
[ "$got" = "sgd 1 crd-base-t0011 2 Error" ] && pass "status kept as written (params, rungs, runningTrials, throughput)" ||
  fail "status read back: '$got'"
expect_columns "printer columns" "NAME PHASE USED BUDGET BEST TRIALS RUNNING AGE" \
  "crd-base Running 0.75 2 0.9125 12 4" -n "$NS" bsw crd-base
out=$(k get -n "$NS" bsw crd-base -o wide 2>&1)
grep -q 'BEST-TRIAL' <<<"$out" && grep -q 'crd-base-t0003' <<<"$out" &&
  pass "-o wide adds BEST-TRIAL" || { fail "-o wide:"; indent <<<"$out"; }
# A spec write through /status is ignored; a status write through the main resource too.
k patch -n "$NS" bsw crd-base --subresource=status --type=merge -p '{"spec":{"parallelism":9}}' >/dev/null 2>&1 || true
k patch -n "$NS" bsw crd-base --type=merge -p '{"status":{"phase":"Failed"}}' >/dev/null 2>&1 || true
got=$(k get -n "$NS" bsw crd-base -o jsonpath='{.spec.parallelism} {.status.phase}')
[ "$got" = "4 Running" ] && pass "spec and status are written only through their own endpoints" ||
  fail "spec/status separation: '$got'"
# A non-finite best value is written as null.
out=$(k patch -n "$NS" bsw crd-base --subresource=status --type=merge -p '{"status":{"best":{"value":null}}}' 2>&1) &&
  pass "status.best.value may be null" || { fail "status.best.value null:"; indent <<<"$out"; }

# ---- safe spec edits: on an existing sweep only the editable fields may change -------------------
# The CEL transition rules (self == oldSelf) run on updates: `kubectl apply` of crd-base (created
# above) with an immutable field edited is rejected, naming the field, and stores nothing; the
# same with only editable fields edited is stored.
immutable() {   # immutable NAME FILE PATCH FIELD: kubectl apply of FILE edited by PATCH is refused
  local name=$1 file=$2 patch=$3 field=$4 f=$TMP/edit-$1.json out type=merge
  [[ $patch == \[* ]] && type=json
  k patch --local -f "$file" --type="$type" -p "$patch" -o json >"$f"
  if out=$(k apply -n "$NS" -f "$f" 2>&1); then
    fail "$name: kubectl apply accepted an edit of $field"
  elif ! grep -qF -- "$field: Forbidden: $field is immutable" <<<"$out"; then
    fail "$name: kubectl apply's error does not name $field as immutable:"; indent <<<"$out"
  else
    pass "$name: kubectl apply refuses it: $(grep -oF -- "$field: Forbidden: $field is immutable" <<<"$out" | head -1)"
  fi
}
immutable edit-param         "$BASE" '{"spec":{"searchSpace":{"lr":{"max":0.5}}}}'      spec.searchSpace
immutable edit-param-added   "$BASE" '{"spec":{"searchSpace":{"dropout":{"type":"uniform","min":0,"max":0.5}}}}' spec.searchSpace
immutable edit-values        "$BASE" '{"spec":{"searchSpace":{"batch-size":{"values":[64,128]}}}}' spec.searchSpace
immutable edit-resource      "$BASE" '{"spec":{"resource":{"max":81}}}'                  spec.resource
immutable edit-objective     "$BASE" '{"spec":{"objective":{"metric":"loss"}}}'           spec.objective
immutable edit-seed          "$BASE" '{"spec":{"scheduler":{"seed":2}}}'                  spec.scheduler
immutable edit-gpus          "$BASE" '{"spec":{"trial":{"gpus":2}}}'                      spec.trial
immutable edit-image         "$BASE" '[{"op":"replace","path":"/spec/trial/template/spec/containers/0/image","value":"budgetsweep/trainer:0.2.0"}]' spec.trial
immutable edit-throughput    "$BASE" '{"spec":{"throughput":{"targetUtilization":0.5}}}'  spec.throughput
immutable throughput-removed "$BASE" '{"spec":{"throughput":null}}'                       spec.throughput
immutable throughput-added   "$TMP/minimal.yaml" '{"spec":{"throughput":{"enabled":true}}}' spec.throughput
immutable edit-mixed         "$BASE" '{"spec":{"parallelism":2,"resource":{"max":81}}}'  spec.resource
got=$(k get -n "$NS" bsw crd-base -o jsonpath='{.spec.resource.max} {.spec.parallelism} {.spec.scheduler.seed} {.spec.trial.template.spec.containers[0].image} {.spec.throughput.targetUtilization}')
want="27 4 1 budgetsweep/trainer:0.1.0 0.9"
[ "$got" = "$want" ] && pass "refused edits changed nothing: $got" ||
  fail "crd-base after refused edits: '$got', want '$want'"

editable='{"spec":{"budget":{"gpuHours":0.5},"parallelism":2,"maxTrials":10,"maxFailedTrials":5,"metrics":{"prometheus":null,"missingTimeoutSeconds":60}}}'
k patch --local -f "$BASE" --type=merge -p "$editable" -o json >"$TMP/edit-editable.json"
if out=$(k apply -n "$NS" -f "$TMP/edit-editable.json" 2>&1); then
  got=$(k get -n "$NS" bsw crd-base -o jsonpath='{.spec.budget.gpuHours} {.spec.parallelism} {.spec.maxTrials} {.spec.maxFailedTrials} {.spec.metrics.missingTimeoutSeconds} [{.spec.metrics.prometheus}]')
  [ "$got" = "0.5 2 10 5 60 []" ] && pass "kubectl apply takes an edit of the editable fields: $got" ||
    fail "editable fields stored as '$got', want '0.5 2 10 5 60 []'"
else
  fail "kubectl apply refuses an edit of the editable fields only:"; indent <<<"$out"
fi
k patch --local -f "$TMP/edit-editable.json" --type=merge -p '{"spec":{"maxTrials":null}}' -o json >"$TMP/edit-no-max.json"
if out=$(k apply -n "$NS" -f "$TMP/edit-no-max.json" 2>&1); then
  got=$(k get -n "$NS" bsw crd-base -o jsonpath='[{.spec.maxTrials}]')
  [ "$got" = "[]" ] && pass "kubectl apply removes spec.maxTrials (editable)" || fail "spec.maxTrials stored as $got"
else
  fail "kubectl apply refuses removing spec.maxTrials:"; indent <<<"$out"
fi
# kubectl edit sends a patch: lowering the budget that way is taken too.
if out=$(k patch -n "$NS" bsw crd-minimal --type=merge -p '{"spec":{"budget":{"gpuHours":0.25}}}' 2>&1); then
  got=$(k get -n "$NS" bsw crd-minimal -o jsonpath='{.spec.budget.gpuHours}')
  [ "$got" = 0.25 ] && pass "kubectl patch lowers spec.budget.gpuHours" ||
    fail "spec.budget.gpuHours stored as $got after kubectl patch"
else
  fail "kubectl patch of spec.budget.gpuHours:"; indent <<<"$out"
fi

# ---- sweeps both sides reject, each naming the field ----------------------------------------------
# Each file below is a new sweep (crd-new, never created), so that the server checks it as a
# create: the transition rules above do not apply.
NEW=$TMP/new.json
k patch --local -f "$BASE" --type=merge -p '{"metadata":{"name":"crd-new"}}' -o json >"$NEW"
# reject NAME PATCH KUBE_FIELD CLI_FIELD: PATCH (a JSON merge patch, or a JSON patch when it starts
# with '[') applied to the base sweep must be rejected by kubectl apply (server-side dry run, strict
# field validation: kubectl's default) with a message naming KUBE_FIELD, and by budgetsweep
# validate (exit 2) naming CLI_FIELD. The API server spells map keys spec.searchSpace[lr].min in
# CEL errors and spec.searchSpace.lr.min in OpenAPI errors; the first is rewritten to the second
# (the CLI's spelling) before the check.
reject() {
  local name=$1 patch=$2 kfield=$3 cfield=$4 f=$TMP/bad-$1.json out rc type=merge
  [[ $patch == \[* ]] && type=json
  k patch --local -f "$NEW" --type="$type" -p "$patch" -o json >"$f"
  if out=$(k apply --dry-run=server -n "$NS" -f "$f" 2>&1); then
    fail "$name: kubectl apply accepted it"
  elif ! out=$(sed -E 's/\[([^]0-9][^]]*)\]/.\1/g' <<<"$out"); then
    fail "$name: sed"
  elif ! grep -qF -- "$kfield" <<<"$out"; then
    fail "$name: kubectl apply's error does not name $kfield:"; indent <<<"$out"
  else
    pass "$name: kubectl apply rejects it: $(tr '\n' ' ' <<<"$out" |
      awk -v f="$kfield" '{ i = index($0, "unknown field \"" f); if (!i) i = index($0, f); print substr($0, i, 150) }')"
  fi
  rc=0; out=$("$BSW" validate "$f" 2>&1) || rc=$?
  if [ "$rc" != 2 ]; then
    fail "$name: budgetsweep validate exit $rc, want 2:"; indent <<<"$out"
  elif ! grep -qF -- "$cfield" <<<"$out"; then
    fail "$name: budgetsweep validate's error does not name $cfield:"; indent <<<"$out"
  else
    pass "$name: budgetsweep validate rejects it: $(grep -F -- "$cfield" <<<"$out" | head -1 | sed 's/^ *//')"
  fi
}

long=$(printf 'a%.0s' $(seq 1 55))
# The bad inputs of issue 2 (and the issue 4 CRD list).
reject resource-min-eq-max  '{"spec":{"resource":{"min":9,"max":9}}}'          spec.resource.max spec.resource.max
reject resource-min-gt-max  '{"spec":{"resource":{"min":10,"max":9}}}'         spec.resource.max spec.resource.max
reject param-min-ge-max     '{"spec":{"searchSpace":{"lr":{"min":0.1,"max":0.01}}}}' spec.searchSpace.lr.max spec.searchSpace.lr.max
reject gpuhours-zero        '{"spec":{"budget":{"gpuHours":0}}}'                spec.budget.gpuHours spec.budget.gpuHours
reject gpuhours-negative    '{"spec":{"budget":{"gpuHours":-1}}}'               spec.budget.gpuHours spec.budget.gpuHours
reject reductionfactor-1    '{"spec":{"resource":{"reductionFactor":1}}}'       spec.resource.reductionFactor spec.resource.reductionFactor
reject searchspace-empty    '[{"op":"replace","path":"/spec/searchSpace","value":{}}]' spec.searchSpace spec.searchSpace
reject loguniform-min-zero  '{"spec":{"searchSpace":{"lr":{"min":0}}}}'         spec.searchSpace.lr.min spec.searchSpace.lr.min
reject parallelism-string   '{"spec":{"parallelism":"four"}}'                    spec.parallelism spec.parallelism
reject unknown-field        '{"spec":{"colour":"blue"}}'                         spec.colour spec.colour
reject unknown-nested-field '{"spec":{"resource":{"maximum":27}}}'               spec.resource.maximum spec.resource.maximum
reject grid-with-uniform    '{"spec":{"scheduler":{"algorithm":"grid"}}}'        spec.searchSpace spec.searchSpace.lr.type
reject sampler-unknown      '{"spec":{"scheduler":{"sampler":"bohb"}}}'          spec.scheduler.sampler spec.scheduler.sampler
reject tpe-with-grid        '[{"op":"replace","path":"/spec/searchSpace","value":{"optimizer":{"type":"grid","values":["adamw","sgd"]}}},{"op":"add","path":"/spec/scheduler/algorithm","value":"grid"},{"op":"add","path":"/spec/scheduler/sampler","value":"tpe"}]' spec.scheduler.sampler spec.scheduler.sampler
reject pbt-stop-mode        '{"spec":{"scheduler":{"algorithm":"pbt","mode":"stop"},"searchSpace":{"lr":{"mutable":true}}}}' spec.scheduler.mode spec.scheduler.mode
reject pbt-nothing-mutable  '{"spec":{"scheduler":{"algorithm":"pbt","mode":"pause"}}}' spec.searchSpace spec.searchSpace
reject pb2-no-population    '{"spec":{"scheduler":{"algorithm":"pb2","mode":"pause"},"maxTrials":null,"searchSpace":{"lr":{"mutable":true}}}}' spec.maxTrials spec.maxTrials
reject mutable-under-asha   '{"spec":{"searchSpace":{"lr":{"mutable":true}}}}'   spec.searchSpace spec.searchSpace.lr.mutable
reject interval-under-asha  '{"spec":{"scheduler":{"perturbationInterval":3}}}'  spec.scheduler.perturbationInterval spec.scheduler.perturbationInterval
reject name-too-long        "{\"metadata\":{\"name\":\"$long\"}}"                metadata.name metadata.name
# More of what api.cc checks.
reject name-not-dns-label   '{"metadata":{"name":"crd.base"}}'                   metadata.name metadata.name
reject resource-min-zero    '{"spec":{"resource":{"min":0}}}'                    spec.resource.min spec.resource.min
reject resource-max-missing '{"spec":{"resource":{"max":null}}}'                 spec.resource.max spec.resource.max
reject budget-missing       '{"spec":{"budget":null}}'                           spec.budget spec.budget
reject metric-empty         '{"spec":{"objective":{"metric":""}}}'               spec.objective.metric spec.objective.metric
reject goal-unknown         '{"spec":{"objective":{"goal":"biggest"}}}'          spec.objective.goal spec.objective.goal
reject algorithm-unknown    '{"spec":{"scheduler":{"algorithm":"bayes"}}}'       spec.scheduler.algorithm spec.scheduler.algorithm
reject mode-unknown         '{"spec":{"scheduler":{"mode":"freeze"}}}'           spec.scheduler.mode spec.scheduler.mode
reject seed-negative        '{"spec":{"scheduler":{"seed":-1}}}'                 spec.scheduler.seed spec.scheduler.seed
reject reductionfactor-real '{"spec":{"resource":{"reductionFactor":2.5}}}'     spec.resource.reductionFactor spec.resource.reductionFactor
reject parallelism-zero     '{"spec":{"parallelism":0}}'                         spec.parallelism spec.parallelism
reject maxtrials-zero       '{"spec":{"maxTrials":0}}'                           spec.maxTrials spec.maxTrials
reject maxfailed-zero       '{"spec":{"maxFailedTrials":0}}'                     spec.maxFailedTrials spec.maxFailedTrials
reject gpus-negative        '{"spec":{"trial":{"gpus":-1}}}'                     spec.trial.gpus spec.trial.gpus
reject retries-negative     '{"spec":{"trial":{"maxRetries":-1}}}'               spec.trial.maxRetries spec.trial.maxRetries
reject template-missing     '{"spec":{"trial":{"template":null}}}'               spec.trial.template spec.trial.template
reject containers-empty     '{"spec":{"trial":{"template":{"spec":{"containers":[]}}}}}' spec.trial.template.spec.containers spec.trial.template.spec.containers
reject grace-negative       '{"spec":{"trial":{"template":{"spec":{"terminationGracePeriodSeconds":-1}}}}}' spec.trial.template.spec.terminationGracePeriodSeconds spec.trial.template.spec.terminationGracePeriodSeconds
reject args-not-strings     '[{"op":"replace","path":"/spec/trial/template/spec/containers/0/args","value":[1]}]' 'spec.trial.template.spec.containers[0].args[0]' 'spec.trial.template.spec.containers[0].args[0]'
reject missing-timeout-zero '{"spec":{"metrics":{"missingTimeoutSeconds":0}}}'   spec.metrics.missingTimeoutSeconds spec.metrics.missingTimeoutSeconds
reject prometheus-no-url    '{"spec":{"metrics":{"prometheus":{"url":null}}}}'   spec.metrics.prometheus.url spec.metrics.prometheus.url
reject param-type-missing   '{"spec":{"searchSpace":{"lr":{"type":null}}}}'      spec.searchSpace.lr.type spec.searchSpace.lr.type
reject param-type-unknown   '{"spec":{"searchSpace":{"lr":{"type":"normal"}}}}'  spec.searchSpace.lr.type spec.searchSpace.lr.type
reject param-max-missing    '{"spec":{"searchSpace":{"lr":{"max":null}}}}'       spec.searchSpace.lr.max spec.searchSpace.lr.max
reject param-name-bad       '{"spec":{"searchSpace":{"learning rate":{"type":"uniform","min":0,"max":1}}}}' spec.searchSpace 'spec.searchSpace.learning rate'
reject int-log-min-zero     '{"spec":{"searchSpace":{"layers":{"min":0}}}}'      spec.searchSpace.layers.min spec.searchSpace.layers.min
reject int-min-not-integer  '{"spec":{"searchSpace":{"layers":{"min":1.5}}}}'    spec.searchSpace.layers.min spec.searchSpace.layers.min
reject int-max-not-integer  '{"spec":{"searchSpace":{"layers":{"max":7.5}}}}'    spec.searchSpace.layers.max spec.searchSpace.layers.max
reject log-on-uniform       '{"spec":{"searchSpace":{"warmup-fraction":{"log":true}}}}' spec.searchSpace.warmup-fraction.log spec.searchSpace.warmup-fraction.log
reject values-on-uniform    '{"spec":{"searchSpace":{"warmup-fraction":{"values":[1]}}}}' spec.searchSpace.warmup-fraction.values spec.searchSpace.warmup-fraction.values
reject minmax-on-choice     '{"spec":{"searchSpace":{"batch-size":{"min":1,"max":2}}}}' spec.searchSpace.batch-size spec.searchSpace.batch-size.m
reject choice-no-values     '{"spec":{"searchSpace":{"batch-size":{"values":null}}}}' spec.searchSpace.batch-size.values spec.searchSpace.batch-size.values
reject choice-empty-values  '{"spec":{"searchSpace":{"batch-size":{"values":[]}}}}' spec.searchSpace.batch-size.values spec.searchSpace.batch-size.values
reject grid-empty-values    '{"spec":{"searchSpace":{"optimizer":{"values":[]}}}}' spec.searchSpace.optimizer.values spec.searchSpace.optimizer.values
# spec.throughput (issue 6).
reject throughput-unknown   '{"spec":{"throughput":{"target":0.9}}}'             spec.throughput.target spec.throughput.target
reject target-above-one     '{"spec":{"throughput":{"targetUtilization":1.5}}}'  spec.throughput.targetUtilization spec.throughput.targetUtilization
reject fraction-one         '{"spec":{"throughput":{"maxBudgetFraction":1}}}'    spec.throughput.maxBudgetFraction spec.throughput.maxBudgetFraction
reject probe-steps-zero     '{"spec":{"throughput":{"probeSteps":0}}}'           spec.throughput.probeSteps spec.throughput.probeSteps
reject below-target-unknown '{"spec":{"throughput":{"onBelowTarget":"retry"}}}'  spec.throughput.onBelowTarget spec.throughput.onBelowTarget
reject workers-negative     '{"spec":{"throughput":{"candidates":{"workers":[2,-1]}}}}' 'spec.throughput.candidates.workers[1]' 'spec.throughput.candidates.workers[1]'
reject prefetch-repeated    '{"spec":{"throughput":{"candidates":{"prefetch":[4,4]}}}}' 'spec.throughput.candidates.prefetch[1]' 'spec.throughput.candidates.prefetch[1]'
reject precision-unknown    '{"spec":{"throughput":{"candidates":{"precision":["int8"]}}}}' 'spec.throughput.candidates.precision[0]' 'spec.throughput.candidates.precision[0]'
reject microbatch-no-size   '{"spec":{"throughput":{"candidates":{"microBatches":[{"accumulationSteps":2}]}}}}' 'spec.throughput.candidates.microBatches[0].batchSize' 'spec.throughput.candidates.microBatches[0].batchSize'

# ---- CLI-only: the CRD cannot express these (see the top of this file) ----------------------------
cli_only() {   # cli_only NAME PATCH CLI_FIELD: kubectl accepts, budgetsweep validate rejects
  local name=$1 patch=$2 cfield=$3 f=$TMP/cli-$1.json out rc
  k patch --local -f "$NEW" --type=merge -p "$patch" -o json >"$f"
  if out=$(k apply --dry-run=server -n "$NS" -f "$f" 2>&1); then
    pass "$name: the CRD accepts it (cannot express it; the operator reports InvalidSpec)"
  else
    fail "$name: kubectl apply now rejects it; move it to the reject list:"; indent <<<"$out"
  fi
  rc=0; out=$("$BSW" validate "$f" 2>&1) || rc=$?
  [ "$rc" = 2 ] && grep -qF -- "$cfield" <<<"$out" &&
    pass "$name: budgetsweep validate rejects it: $(grep -F -- "$cfield" <<<"$out" | head -1 | sed 's/^ *//')" ||
    { fail "$name: budgetsweep validate exit $rc:"; indent <<<"$out"; }
}
cli_only value-object '{"spec":{"searchSpace":{"batch-size":{"values":[64,{"n":128}]}}}}' 'spec.searchSpace.batch-size.values[1]'
cli_only value-list   '{"spec":{"searchSpace":{"batch-size":{"values":[[64]]}}}}' 'spec.searchSpace.batch-size.values[0]'
cli_only value-null   '{"spec":{"searchSpace":{"batch-size":{"values":[64,null]}}}}' 'spec.searchSpace.batch-size.values[1]'
cli_only probed-and-searched '{"spec":{"throughput":{"enabled":true,"candidates":{"microBatches":[{"batchSize":64}]}}}}' 'spec.throughput.candidates.microBatches'
cli_only too-many-candidates '{"spec":{"throughput":{"candidates":{"workers":[0,1,2,3,4,5,6,7,8],"prefetch":[1,2,4,8,16,32,64,128]}}}}' 'spec.throughput.candidates'
cli_only host-path-volume '{"spec":{"trial":{"template":{"spec":{"volumes":[{"name":"scratch","emptyDir":{}},{"name":"logs","hostPath":{"path":"/var/log"}}]}}}}}' 'spec.trial.template.spec.volumes[1].hostPath: not allowed'
cli_only host-network '{"spec":{"trial":{"template":{"spec":{"hostNetwork":true}}}}}' 'spec.trial.template.spec.hostNetwork: not allowed'

# ---- the limits that bound CEL's cost (see the top of this file), the same on both sides ---------
params() {   # params N: a searchSpace of N uniform parameters, as a JSON patch
  local i sep="" out=""
  for i in $(seq 1 "$1"); do out+="$sep\"p$i\":{\"type\":\"uniform\",\"min\":0,\"max\":1}"; sep=,; done
  echo "[{\"op\":\"replace\",\"path\":\"/spec/searchSpace\",\"value\":{$out}}]"
}
values() {   # values N: a choice parameter with N values, as a JSON patch
  echo "[{\"op\":\"replace\",\"path\":\"/spec/searchSpace/batch-size/values\",\"value\":[$(seq -s, 1 "$1")]}]"
}
limit() {   # limit NAME PATCH OK FIELD: kubectl and the CLI accept it iff OK=yes; a refusal names FIELD
  local name=$1 patch=$2 want=$3 field=$4 f=$TMP/limit-$1.json out got=no
  k patch --local -f "$NEW" --type=json -p "$patch" -o json >"$f"
  out=$(k apply --dry-run=server -n "$NS" -f "$f" 2>&1) && got=yes
  [ "$got" = "$want" ] && { [ "$got" = yes ] || [[ $out == *"$field"* ]]; } &&
    pass "$name: kubectl apply accepts it: $got" ||
    { fail "$name: kubectl apply accepts it: $got, want $want naming $field"; indent <<<"$out"; }
  got=no
  out=$("$BSW" validate "$f" 2>&1) && got=yes
  [ "$got" = "$want" ] && { [ "$got" = yes ] || [[ $out == *"$field:"* ]]; } &&
    pass "$name: budgetsweep validate accepts it: $got" ||
    { fail "$name: budgetsweep validate accepts it: $got, want $want naming $field"; indent <<<"$out"; }
}
limit 64-parameters "$(params 64)" yes spec.searchSpace
limit 65-parameters "$(params 65)" no spec.searchSpace
limit 1024-values "$(values 1024)" yes spec.searchSpace.batch-size.values
limit 1025-values "$(values 1025)" no spec.searchSpace.batch-size.values

# ---- unknown fields without strict validation are dropped, never stored ---------------------------
k patch --local -f "$TMP/minimal.yaml" --type=merge -o json \
  -p '{"metadata":{"name":"crd-pruned"},"spec":{"colour":"blue"}}' >"$TMP/pruned.json"
if out=$(k create -n "$NS" --validate=false -f "$TMP/pruned.json" 2>&1); then
  got=$(k get -n "$NS" bsw crd-pruned -o jsonpath='{.spec.colour}')
  [ -z "$got" ] && pass "with --validate=false an unknown field is pruned, not stored" ||
    fail "unknown field stored: spec.colour=$got"
else
  fail "kubectl create --validate=false:"; indent <<<"$out"
fi

# ---- BudgetPool (issue #21) -----------------------------------------------------------------------
explained=""
for _ in $(seq 1 60); do
  explained=$(k explain budgetpool.spec.gpuHours 2>&1) && grep -q 'device-hours' <<<"$explained" && break
  sleep 0.5
done
if grep -q "The pool's budget per period, in device-hours" <<<"$explained" &&
  grep -q 'poolRef' <<<"$explained"; then
  pass "kubectl explain budgetpool.spec.gpuHours shows the description"
else
  fail "kubectl explain budgetpool.spec.gpuHours:"; indent <<<"$explained"
fi
out=$(k explain bsp.spec.period 2>&1) && grep -q 'calendarMonth' <<<"$out" && grep -q 'UTC' <<<"$out" &&
  pass "kubectl explain bsp.spec.period (short name) shows the description" ||
  { fail "kubectl explain bsp.spec.period:"; indent <<<"$out"; }
every_field_described budgetpools.budgetsweep.dev

POOL=$TMP/pool.yaml
cat >"$POOL" <<'EOF'
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetPool
metadata: {name: crd-pool}
spec:
  gpuHours: 10
  maxPerSweepGpuHours: 4
  period: calendarMonth
EOF
if out=$(k apply -n "$NS" -f "$POOL" 2>&1); then pass "kubectl apply accepts a BudgetPool"
else fail "kubectl apply rejects a BudgetPool:"; indent <<<"$out"; fi
for f in "$ROOT"/examples/pool/*.yaml; do
  grep -q '^kind: BudgetPool' "$f" || continue
  out=$(k apply --dry-run=server -n "$NS" -f "$f" 2>&1) && pass "kubectl apply accepts ${f#"$ROOT"/}" ||
    { fail "kubectl apply rejects ${f#"$ROOT"/}:"; indent <<<"$out"; }
done
# A status as the operator writes it (issue #21: the pool's ledger).
pool_status='{"status":{"observedGeneration":1,"usedGpuHours":2.5,"reservedGpuHours":1.5,
  "remainingGpuHours":6,"activeSweeps":2,
  "period":{"start":"2026-12-01T00:00:00Z","end":"2027-01-01T00:00:00Z"},
  "previousPeriods":[{"start":"2026-11-01T00:00:00Z","end":"2026-12-01T00:00:00Z","usedGpuHours":9.5}],
  "sweeps":[{"key":"0b6f3c1e-uid-1","sweep":"lr-search","usedDeviceSeconds":5400,"reservedDeviceSeconds":5400,
             "carriedDeviceSeconds":0,"active":true,"starved":false},
            {"key":"0b6f3c1e-uid-2","sweep":"mlp-search","usedDeviceSeconds":3600,"reservedDeviceSeconds":0,
             "carriedDeviceSeconds":7200,"active":true,"starved":true}],
  "conditions":[{"type":"Available","status":"True","reason":"BudgetRemains","message":"6 of 10 GPU-hours remain",
                 "lastTransitionTime":"2026-12-01T00:00:00Z","observedGeneration":1}]}}'
if out=$(k patch -n "$NS" bsp crd-pool --subresource=status --type=merge -p "$pool_status" 2>&1); then
  pass "the pool's status subresource accepts the operator's status"
else
  fail "pool status patch:"; indent <<<"$out"
fi
got=$(k get -n "$NS" bsp crd-pool -o jsonpath='{.status.sweeps[1].sweep} {.status.sweeps[1].starved} {.status.sweeps[1].carriedDeviceSeconds} {.status.previousPeriods[0].usedGpuHours} {.status.period.end} {.status.conditions[0].reason}')
[ "$got" = "mlp-search true 7200 9.5 2027-01-01T00:00:00Z BudgetRemains" ] &&
  pass "pool status kept as written (sweeps, previousPeriods, period, conditions)" ||
  fail "pool status read back: '$got'"
expect_columns "kubectl get bsp (short name), printer columns" \
  "NAME BUDGET USED RESERVED REMAINING SWEEPS AGE" "crd-pool 10 2.5 1.5 6 2" bsp -n "$NS"
out=$(k get -n "$NS" bsp crd-pool -o wide 2>&1)
grep -q 'PERIOD' <<<"$out" && grep -q 'calendarMonth' <<<"$out" &&
  pass "-o wide adds PERIOD" || { fail "bsp -o wide:"; indent <<<"$out"; }
# The status is the operator's: a status write through the main resource is dropped.
k patch -n "$NS" bsp crd-pool --type=merge -p '{"status":{"usedGpuHours":0}}' >/dev/null 2>&1 || true
got=$(k get -n "$NS" bsp crd-pool -o jsonpath='{.status.usedGpuHours}')
[ "$got" = 2.5 ] && pass "the pool's status is written only through /status" ||
  fail "pool status after a write through the main resource: $got"
# sweeps is a map keyed by the sweep's uid: one account per sweep.
dup='{"status":{"sweeps":[{"key":"u","sweep":"a"},{"key":"u","sweep":"b"}]}}'
out=$(k patch -n "$NS" bsp crd-pool --subresource=status --type=merge -p "$dup" 2>&1) &&
  fail "two accounts with one key accepted" ||
  { grep -q 'status.sweeps\[1\]' <<<"$out" && pass "two accounts with one key refused: $(grep -o 'status.sweeps\[1\][^,]*' <<<"$out" | head -1)" ||
    { fail "duplicate account key not refused naming status.sweeps[1]:"; indent <<<"$out"; }; }
periods=$(python3 -c 'import json; print(json.dumps({"status": {"previousPeriods": [{"usedGpuHours": i} for i in range(13)]}}))')
out=$(k patch -n "$NS" bsp crd-pool --subresource=status --type=merge -p "$periods" 2>&1) &&
  fail "13 previous periods accepted" ||
  { grep -q 'status.previousPeriods' <<<"$out" && pass "13 previous periods refused (at most 12)" ||
    { fail "13 previous periods not refused naming status.previousPeriods:"; indent <<<"$out"; }; }

pool_reject() {   # pool_reject NAME PATCH FIELD: the pool edited by PATCH is refused naming FIELD
  local name=$1 patch=$2 field=$3 f=$TMP/bad-pool-$1.json out
  k patch --local -f "$POOL" --type=merge -p "$patch" -o json >"$f"
  if out=$(k apply --dry-run=server -n "$NS" -f "$f" 2>&1); then
    fail "$name: kubectl apply accepted the pool"
  elif ! grep -qF -- "$field" <<<"$out"; then
    fail "$name: kubectl apply's error does not name $field:"; indent <<<"$out"
  else
    pass "$name: kubectl apply refuses it: $(tr '\n' ' ' <<<"$out" |
      awk -v f="$field" '{ i = index($0, "unknown field \"" f); if (!i) i = index($0, f); print substr($0, i, 150) }')"
  fi
}
pool_reject gpuhours-zero       '{"metadata":{"name":"crd-bad"},"spec":{"gpuHours":0}}'          spec.gpuHours
pool_reject gpuhours-negative   '{"metadata":{"name":"crd-bad"},"spec":{"gpuHours":-1}}'         spec.gpuHours
pool_reject gpuhours-missing    '{"metadata":{"name":"crd-bad"},"spec":{"gpuHours":null}}'       spec.gpuHours
pool_reject gpuhours-string     '{"metadata":{"name":"crd-bad"},"spec":{"gpuHours":"10"}}'       spec.gpuHours
pool_reject per-sweep-zero      '{"metadata":{"name":"crd-bad"},"spec":{"maxPerSweepGpuHours":0}}' spec.maxPerSweepGpuHours
pool_reject period-monthly      '{"metadata":{"name":"crd-bad"},"spec":{"period":"monthly"}}'    spec.period
pool_reject period-zero         '{"metadata":{"name":"crd-bad"},"spec":{"period":"0d"}}'         spec.period
pool_reject period-weeks        '{"metadata":{"name":"crd-bad"},"spec":{"period":"4w"}}'         spec.period
pool_reject unknown-field       '{"metadata":{"name":"crd-bad"},"spec":{"colour":"blue"}}'       spec.colour
pool_reject name-not-dns-label  '{"metadata":{"name":"crd.pool"}}'                               metadata.name
for period in 30d 720h 90m; do
  k patch --local -f "$POOL" --type=merge -p "{\"spec\":{\"period\":\"$period\"}}" -o json >"$TMP/pool-$period.json"
  out=$(k apply --dry-run=server -n "$NS" -f "$TMP/pool-$period.json" 2>&1) &&
    pass "period $period accepted" || { fail "period $period refused:"; indent <<<"$out"; }
done

# Sweeps drawing on a pool: poolRef alone is a budget; a budget with neither is refused.
k patch --local -f "$NEW" --type=merge -o json \
  -p '{"metadata":{"name":"crd-pooled"},"spec":{"budget":{"gpuHours":null,"poolRef":{"name":"crd-pool"}}}}' \
  >"$TMP/pooled.json"
if out=$(k apply -n "$NS" -f "$TMP/pooled.json" 2>&1); then
  got=$(k get -n "$NS" bsw crd-pooled -o jsonpath='{.spec.budget}')
  pass "a sweep with budget.poolRef and no gpuHours is accepted: $got"
else
  fail "a sweep with budget.poolRef and no gpuHours is refused:"; indent <<<"$out"
fi
k patch --local -f "$NEW" --type=json -o json \
  -p '[{"op":"replace","path":"/spec/budget","value":{}}]' >"$TMP/no-budget.json"
if out=$(k apply --dry-run=server -n "$NS" -f "$TMP/no-budget.json" 2>&1); then
  fail "a sweep with budget {} is accepted"
elif grep -qF 'spec.budget: set gpuHours, poolRef or both' <<<"$out"; then
  pass "a sweep with budget {} is refused: $(grep -oF 'spec.budget.gpuHours: Required value: spec.budget: set gpuHours, poolRef or both' <<<"$out" || grep -o 'spec.budget[^ ]*: .*' <<<"$out" | head -1)"
else
  fail "a sweep with budget {}: the error lacks the CEL message:"; indent <<<"$out"
fi
# On an existing sweep: gpuHours may be added to a pooled sweep (editable); poolRef may not be
# removed, added or changed (the pool holds the sweep's charge).
if out=$(k patch -n "$NS" bsw crd-pooled --type=merge -p '{"spec":{"budget":{"gpuHours":1}}}' 2>&1); then
  got=$(k get -n "$NS" bsw crd-pooled -o jsonpath='{.spec.budget.gpuHours} {.spec.budget.poolRef.name}')
  [ "$got" = "1 crd-pool" ] && pass "gpuHours added to a pooled sweep: $got" || fail "pooled sweep's budget: '$got'"
else
  fail "adding gpuHours to a pooled sweep refused:"; indent <<<"$out"
fi
pool_immutable() {   # pool_immutable NAME SWEEP PATCH: the merge patch of SWEEP's spec is refused
  local name=$1 sweep=$2 patch=$3 out before after
  before=$(k get -n "$NS" bsw "$sweep" -o jsonpath='{.spec.budget}')
  if out=$(k patch -n "$NS" bsw "$sweep" --type=merge -p "$patch" 2>&1); then
    fail "$name: accepted"
  elif grep -q 'spec.budget.poolRef.*spec.budget.poolRef is immutable' <<<"$out"; then
    after=$(k get -n "$NS" bsw "$sweep" -o jsonpath='{.spec.budget}')
    [ "$before" = "$after" ] && pass "$name: refused: $(grep -o 'spec.budget.poolRef: [A-Za-z]*' <<<"$out" | head -1)" ||
      fail "$name: refused, but the budget changed: $before -> $after"
  else
    fail "$name: the error does not name spec.budget.poolRef as immutable:"; indent <<<"$out"
  fi
}
pool_immutable poolref-removed crd-pooled  '{"spec":{"budget":{"poolRef":null}}}'
pool_immutable poolref-renamed crd-pooled  '{"spec":{"budget":{"poolRef":{"name":"other"}}}}'
pool_immutable poolref-added   crd-minimal '{"spec":{"budget":{"poolRef":{"name":"crd-pool"}}}}'

echo
if [ "$failures" -gt 0 ]; then
  echo "crd_test: $failures FAILED"
  exit 1
fi
echo "crd_test: all ok"
