#!/usr/bin/env bash
# Bad input of every kind: exit 2, an error naming the field (or file and line), no trial started.
source "$(dirname "$0")/lib.sh"

good='  budget: {gpuHours: 1}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  parallelism: 2'

check() {
  local label=$1 file=$2 expect=$3
  local state="$WORK/state-$label"
  set +e
  "$BSW" validate "$file" >"$WORK/out" 2>"$WORK/err"
  local validate_rc=$?
  "$BSW" run "$file" --state-dir "$state" >"$WORK/out" 2>"$WORK/err2"
  local run_rc=$?
  set -e
  [ "$validate_rc" -eq 2 ] || fail "$label: validate exited $validate_rc, want 2"
  [ "$run_rc" -eq 2 ] || fail "$label: run exited $run_rc, want 2"
  grep -qF -- "$expect" "$WORK/err" || { cat "$WORK/err" >&2; fail "$label: validate error lacks '$expect'"; }
  grep -qF -- "$expect" "$WORK/err2" || { cat "$WORK/err2" >&2; fail "$label: run error lacks '$expect'"; }
  [ ! -e "$state/trials" ] || fail "$label: a trial was started"
  echo "ok: $label -> $(grep -F -- "$expect" "$WORK/err" | head -1 | sed 's/^ *//')"
}

curve_sweep "$WORK/valid.yaml" valid "$good"
"$BSW" validate "$WORK/valid.yaml" >/dev/null || fail "the valid sweep does not validate"

printf 'apiVersion: budgetsweep.dev/v1alpha1\nkind: BudgetSweep\nspec: {budget: [1, 2\n' >"$WORK/malformed.yaml"
check malformed-yaml "$WORK/malformed.yaml" "malformed.yaml:"

curve_sweep "$WORK/unknown.yaml" bad "$good
  budgett: {gpuHours: 1}"
check unknown-field "$WORK/unknown.yaml" "spec.budgett: unknown field"

curve_sweep "$WORK/nested-unknown.yaml" bad "  budget: {gpuHours: 1, gpuHour: 2}
  resource: {unit: epochs, min: 1, max: 9}"
check nested-unknown-field "$WORK/nested-unknown.yaml" "spec.budget.gpuHour: unknown field"

curve_sweep "$WORK/type.yaml" bad "$good
  maxTrials: four"
check wrong-type "$WORK/type.yaml" "spec.maxTrials: must be a number"

curve_sweep "$WORK/minmax.yaml" bad "  budget: {gpuHours: 1}
  resource: {unit: epochs, min: 9, max: 3}"
check min-not-below-max "$WORK/minmax.yaml" "spec.resource.max: must be greater than spec.resource.min (9)"

curve_sweep "$WORK/zero-budget.yaml" bad "  budget: {gpuHours: 0}
  resource: {unit: epochs, min: 1, max: 9}"
check zero-budget "$WORK/zero-budget.yaml" "spec.budget.gpuHours: must be greater than 0"

curve_sweep "$WORK/negative-budget.yaml" bad "  budget: {gpuHours: -2}
  resource: {unit: epochs, min: 1, max: 9}"
check negative-budget "$WORK/negative-budget.yaml" "spec.budget.gpuHours: must be greater than 0"

curve_sweep "$WORK/eta.yaml" bad "  budget: {gpuHours: 1}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 1}"
check reduction-factor "$WORK/eta.yaml" "spec.resource.reductionFactor: must be between 2 and 1000, got 1"

curve_sweep "$WORK/empty-space.yaml" bad "$good"
python3 - "$WORK/empty-space.yaml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"  searchSpace:\n(    .*\n)+", "  searchSpace: {}\n", s)
open(p, "w").write(s)
PY
check empty-search-space "$WORK/empty-space.yaml" "spec.searchSpace: must define at least one parameter"

curve_sweep "$WORK/log-min.yaml" bad "$good"
sed -i 's/lr: {type: logUniform, min: 1.0e-4/lr: {type: logUniform, min: 0/' "$WORK/log-min.yaml"
check log-uniform-min "$WORK/log-min.yaml" "spec.searchSpace.lr.min: must be greater than 0 on a log scale"

# Issue 39 point 6 and issue 40 point 5: numbers out of range are refused with the limit named,
# and written readably; a budget of 1e305 once validated and then looped on a null deadline.
curve_sweep "$WORK/huge-budget.yaml" bad "  budget: {gpuHours: 1e305}
  resource: {unit: epochs, min: 1, max: 9}"
check budget-above-limit "$WORK/huge-budget.yaml" \
  "spec.budget.gpuHours: out of range: must be at most 1000000 (the largest budget a sweep may have), got 1e+305"
curve_sweep "$WORK/infinite-budget.yaml" bad "  budget: {gpuHours: 1e309}
  resource: {unit: epochs, min: 1, max: 9}"
check budget-not-finite "$WORK/infinite-budget.yaml" \
  "spec.budget.gpuHours: out of range: must be a finite number"
curve_sweep "$WORK/huge-min.yaml" bad "  budget: {gpuHours: 1}
  resource: {unit: epochs, min: 1.7e308, max: 9}"
check number-written-readably "$WORK/huge-min.yaml" \
  "spec.resource.min: out of range: must be at most 1e+15 (the largest resource a trial may train for), got 1.7e+308"
curve_sweep "$WORK/huge-eta.yaml" bad "  budget: {gpuHours: 1}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 9223372036854775807}"
check reduction-factor-out-of-range "$WORK/huge-eta.yaml" \
  "spec.resource.reductionFactor: out of range: must be between 2 and 1000, got 9223372036854775807"
curve_sweep "$WORK/rungs.yaml" bad "  budget: {gpuHours: 1}
  resource: {unit: epochs, min: 1e-300, max: 9}"
check too-many-rungs "$WORK/rungs.yaml" \
  "spec.resource: 1e-300 to 9 with reductionFactor 3 makes 632 rungs; at most 64 are allowed"
curve_sweep "$WORK/huge-max.yaml" bad "  budget: {gpuHours: 1}
  resource: {unit: epochs, min: 1e-300, max: 1e300}"
check resource-above-limit "$WORK/huge-max.yaml" "spec.resource.max: out of range: must be at most 1e+15"
curve_sweep "$WORK/grace.yaml" bad "$good"
sed -i 's/terminationGracePeriodSeconds: 2$/terminationGracePeriodSeconds: 100000/' "$WORK/grace.yaml"
check grace-above-limit "$WORK/grace.yaml" \
  "spec.trial.template.spec.terminationGracePeriodSeconds: must be an integer from 0 to 3600 (an hour), got 100000"
curve_sweep "$WORK/timeout.yaml" bad "$good
  metrics: {missingTimeoutSeconds: 1e300}"
check missing-timeout-above-limit "$WORK/timeout.yaml" \
  "spec.metrics.missingTimeoutSeconds: out of range: must be at most 604800 (a week), got 1e+300"

# Issue 40 point 5: what kubectl reads, budgetsweep reads: a UTF-8 byte-order mark, a trailing
# `---`, merge keys. UTF-16 is refused with what to do about it.
accepted() {
  local label=$1 file=$2
  "$BSW" validate "$file" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err" >&2; fail "$label: not valid"; }
  echo "ok: $label -> $(cat "$WORK/out")"
}
{ printf '\xef\xbb\xbf'; cat "$WORK/valid.yaml"; } >"$WORK/utf8-bom.yaml"
accepted utf8-byte-order-mark "$WORK/utf8-bom.yaml"
{ cat "$WORK/valid.yaml"; printf -- '---\n'; } >"$WORK/trailing-separator.yaml"
accepted trailing-document-separator "$WORK/trailing-separator.yaml"
curve_sweep "$WORK/merge.yaml" valid "$good"
sed -i -e 's/    lr: {type: logUniform,/    lr: \&lr {type: logUniform,/' \
  -e 's/    weight-decay: {type: logUniform, min: 1.0e-4, max: 1.0e-1}/    weight-decay: {<<: *lr, min: 1.0e-5}/' \
  "$WORK/merge.yaml"
grep -qF '<<: *lr' "$WORK/merge.yaml" || fail "merge-keys: the test file has no merge key"
accepted merge-keys "$WORK/merge.yaml"
python3 -c 'import sys; open(sys.argv[2], "w", encoding="utf-16").write(open(sys.argv[1]).read())' \
  "$WORK/valid.yaml" "$WORK/utf16.yaml"
check utf16 "$WORK/utf16.yaml" "utf16.yaml is UTF-16; save it as UTF-8"

check missing-file "$WORK/does-not-exist.yaml" "does-not-exist.yaml: cannot open"
mkdir "$WORK/a-directory.yaml"
check directory "$WORK/a-directory.yaml" "a-directory.yaml: is a directory"

# Hostile input is bounded: a nine-level alias bomb ("billion laughs", 10^9 scalars expanded) is
# rejected in under 1 s and 100 MB of peak resident memory. Each command runs under a 1 GiB
# address-space cap and a 20 s timeout, so an unbounded reader fails here instead of exhausting
# the machine.
{
  printf 'apiVersion: budgetsweep.dev/v1alpha1\nkind: BudgetSweep\nmetadata: {name: bomb}\n'
  printf 'spec:\n  objective: {metric: &a0 [lol]}\n'
  for level in 1 2 3 4 5 6 7 8 9; do
    printf '  l%d: &a%d [' "$level" "$level"
    for i in 0 1 2 3 4 5 6 7 8 9; do printf '%s*a%d' "$([ "$i" -eq 0 ] || echo ', ')" $((level - 1)); done
    printf ']\n'
  done
} >"$WORK/bomb.yaml"
bomb_limit="bomb.yaml:10:27: the document has more than 100000 nodes with its aliases expanded"
check alias-bomb "$WORK/bomb.yaml" "$bomb_limit"
# Prints "rc wall_seconds peak_rss_kb" of one command (the peak of the child alone).
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
start = time.monotonic()
try:
    rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        preexec_fn=cap, timeout=20).returncode
except subprocess.TimeoutExpired:
    rc = 124
wall = time.monotonic() - start
print(rc, f"{wall:.3f}", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
# The bounds are the release build's: under a sanitizer (BSW_SANITIZE, set by a sanitizer build)
# the runtime reserves terabytes of address space, which the cap refuses, and the checks slow the
# reader down and grow its memory.
if [ -n "${BSW_SANITIZE:-}" ]; then
  echo "skipped: alias-bomb time and memory bounds (built with -fsanitize=$BSW_SANITIZE)"
else
  for verb in validate run; do
    args=("$BSW" "$verb" "$WORK/bomb.yaml")
    [ "$verb" = validate ] || args+=(--state-dir "$WORK/state-bomb-measured")
    read -r rc wall rss_kb < <(measure "${args[@]}")
    [ "$rc" -eq 2 ] || fail "alias-bomb: $verb exited $rc, want 2"
    python3 -c "import sys; sys.exit(0 if float('$wall') < 1.0 else 1)" ||
      fail "alias-bomb: $verb took $wall s, limit 1 s"
    [ "$rss_kb" -lt $((100 * 1024)) ] || fail "alias-bomb: $verb peaked at $rss_kb KB, limit 100 MB"
    echo "ok: alias-bomb $verb -> exit $rc in $wall s, peak RSS $rss_kb KB"
  done
fi

# Preflight, `run` only (`validate` knows nothing of the machine the trials would run on): a
# trial command that is not there, or not executable, fails before any trial starts.
run_only() {
  local label=$1 file=$2 expect=$3
  set +e
  "$BSW" run "$file" --state-dir "$WORK/state-$label" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$label: run exited $rc, want 2"
  grep -qF -- "$expect" "$WORK/err" || { cat "$WORK/err" >&2; fail "$label: run error lacks '$expect'"; }
  [ ! -e "$WORK/state-$label/trials" ] || fail "$label: a trial was started"
  echo "ok: $label -> $(head -1 "$WORK/err")"
}
curve_sweep "$WORK/no-trainer.yaml" no-trainer "$good"
sed -i 's|command: \[.*\]|command: ["no-such-trainer"]|' "$WORK/no-trainer.yaml"
"$BSW" validate "$WORK/no-trainer.yaml" >/dev/null || fail "validate rejects a sweep for its machine"
run_only trainer-not-on-path "$WORK/no-trainer.yaml" \
  "no-trainer.yaml: spec.trial.template.spec.containers[0].command[0]: no-such-trainer not found on PATH"
curve_sweep "$WORK/no-trainer-path.yaml" no-trainer "$good"
sed -i "s|command: \\[.*\\]|command: [\"$WORK/missing/trainer\"]|" "$WORK/no-trainer-path.yaml"
run_only trainer-path-missing "$WORK/no-trainer-path.yaml" \
  "spec.trial.template.spec.containers[0].command[0]: $WORK/missing/trainer: no such file"
printf '#!/bin/sh\n' >"$WORK/not-executable"
curve_sweep "$WORK/not-executable.yaml" no-trainer "$good"
sed -i "s|command: \\[.*\\]|command: [\"$WORK/not-executable\"]|" "$WORK/not-executable.yaml"
run_only trainer-not-executable "$WORK/not-executable.yaml" \
  "spec.trial.template.spec.containers[0].command[0]: $WORK/not-executable: not an executable file"
curve_sweep "$WORK/no-data-dir.yaml" no-data "$good" '"--seconds-per-epoch=0.2", "--data-dir", "'"$WORK"'/no-such-data"'
run_only data-dir-missing "$WORK/no-data-dir.yaml" \
  "spec.trial.template.spec.containers[0].args[2]: --data-dir $WORK/no-such-data: no such directory"
touch "$WORK/state-is-a-file"
set +e
"$BSW" run "$WORK/valid.yaml" --state-dir "$WORK/state-is-a-file" >"$WORK/out" 2>"$WORK/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "state-dir-is-a-file: run exited $rc, want 2"
grep -qF -- "--state-dir $WORK/state-is-a-file:" "$WORK/err" || { cat "$WORK/err" >&2; fail "state-dir-is-a-file: the error does not name --state-dir"; }
echo "ok: state-dir-is-a-file -> $(head -1 "$WORK/err")"

# Several problems are all reported at once.
curve_sweep "$WORK/many.yaml" bad "  budget: {gpuHours: -1}
  resource: {unit: epochs, min: 9, max: 3, reductionFactor: 1}"
set +e
"$BSW" validate "$WORK/many.yaml" 2>"$WORK/err"
set -e
for want in spec.budget.gpuHours spec.resource.max spec.resource.reductionFactor; do
  grep -qF "$want" "$WORK/err" || fail "many-errors: $want not reported"
done
echo "ok: many-errors -> $(grep -c ': ' "$WORK/err") lines"
assert_no_trial_processes
