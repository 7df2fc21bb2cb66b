#!/usr/bin/env bash
# Three local sweeps share one BudgetPool file (`budgetsweep run --pool`), run at once; one runner
# is killed with kill -9 mid-sweep and resumed. The sum of every sweep's charge (from the
# supervisors' own start and finish times) stays within the pool, the pool's ledger agrees, and
# each sweep's summary says why it stopped.
source "$(dirname "$0")/lib.sh"

# 0.006 GPU-hours = 21.6 device-seconds for the three; each sweep's own cap is larger, so the pool
# is what stops them. Each epoch sleeps 0.2 s.
cat >"$WORK/pool.yaml" <<'YAML'
apiVersion: budgetsweep.dev/v1alpha1
kind: BudgetPool
metadata: {name: team-a}
spec: {gpuHours: 0.006}
YAML
# Gamma has no gpuHours of its own: the pool's caps it.
for name in alpha beta gamma; do
  own=$([ "$name" = gamma ] || echo "gpuHours: 0.02, ")
  curve_sweep "$WORK/$name.yaml" "$name" "  budget: {${own}poolRef: {name: team-a}}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 5}
  parallelism: 2"
done

# Bad input is refused before anything runs, naming the file and the field.
expect_refusal() {  # WANT ARGS...
  local want=$1 rc=0
  shift
  "$BSW" run "$@" --state-dir "$WORK/state-refused" >"$WORK/refused.log" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || { cat "$WORK/refused.log" >&2; fail "exit $rc, not 2, for: $*"; }
  grep -qF -- "$want" "$WORK/refused.log" || { cat "$WORK/refused.log" >&2; fail "no \"$want\""; }
}
printf 'apiVersion: budgetsweep.dev/v1alpha1\nkind: BudgetPool\nmetadata: {name: team-a}\nspec: {gpuHour: 1}\n' \
  >"$WORK/bad-pool.yaml"
expect_refusal "$WORK/bad-pool.yaml is not a valid BudgetPool:" "$WORK/alpha.yaml" --pool "$WORK/bad-pool.yaml"
expect_refusal "spec.gpuHours: required" "$WORK/alpha.yaml" --pool "$WORK/bad-pool.yaml"
expect_refusal "spec.gpuHour: unknown field" "$WORK/alpha.yaml" --pool "$WORK/bad-pool.yaml"
sed 's/team-a/team-b/' "$WORK/pool.yaml" >"$WORK/other-pool.yaml"
expect_refusal 'the pool is "team-b", but spec.budget.poolRef.name of sweep "alpha" is "team-a"' \
  "$WORK/alpha.yaml" --pool "$WORK/other-pool.yaml"
expect_refusal 'spec.budget.poolRef.name is "team-a": run it with --pool FILE' "$WORK/alpha.yaml"
[ ! -e "$WORK/pool.yaml.ledger.json" ] || fail "a refused run wrote the pool's ledger"

run_sweep() {  # NAME LOG (run in the background: exec makes $! the runner itself)
  exec "$BSW" run "$WORK/$1.yaml" --pool "$WORK/pool.yaml" --state-dir "$WORK/state-$1" >"$2" 2>&1
}
run_sweep alpha "$WORK/alpha.log" &
alpha=$!
run_sweep beta "$WORK/beta-killed.log" &
beta=$!
run_sweep gamma "$WORK/gamma.log" &
gamma=$!

# Beta's runner is killed once it has launched a trial (its part of the pool is kept for it, so
# it does as soon as the first reservations come back), while that trial runs.
for _ in $(seq 600); do
  grep -qs SegmentLaunched "$WORK/state-beta/journal.jsonl" && break
  sleep 0.1
done
kill -9 "$beta"
wait "$beta" 2>/dev/null || true
launched=$(grep -cs SegmentLaunched "$WORK/state-beta/journal.jsonl" || true)
echo "killed beta's runner: $launched segments launched so far"
[ "$launched" -gt 0 ] || fail "beta launched nothing in 60 s: nothing to resume"
sleep 1
rc=0
timeout 150 "$BSW" run "$WORK/beta.yaml" --pool "$WORK/pool.yaml" --state-dir "$WORK/state-beta" \
  >"$WORK/beta.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/beta.log" >&2; fail "resumed beta exited $rc"; }
for pid in "$alpha" "$gamma"; do
  rc=0
  wait "$pid" || rc=$?
  [ "$rc" -eq 0 ] || { cat "$WORK"/*.log >&2; fail "a sweep exited $rc"; }
done
grep -q "resuming sweep beta" "$WORK/beta.log" || fail "beta was not resumed"

for name in alpha beta gamma; do
  echo "--- $name"
  cat "$WORK/$name.log" | tail -n 8
  # Why it stopped: the pool (or its own budget) refused more, or it ran out of trials.
  grep -Eq "^sweep $name: (BudgetExhausted \((Pool[A-Za-z]+: )?requested|Completed)" \
    "$WORK/$name.log" || fail "$name's summary does not say why it stopped"
  grep -q "^pool team-a ($WORK/pool.yaml): " "$WORK/$name.log" || fail "$name's summary has no pool line"
  assert_journal_sane "$WORK/state-$name" 9
done
grep -q "^sweep [a-z]*: BudgetExhausted (Pool" "$WORK"/{alpha,beta,gamma}.log ||
  fail "no sweep was stopped by the pool"

python3 - "$WORK" <<'PY'
import glob, json, sys
work = sys.argv[1]
pool_hours = 0.006
total = 0.0
for name in ("alpha", "beta", "gamma"):
    charge = 0.0
    for f in glob.glob(f"{work}/state-{name}/trials/*/seg-*/status.json"):
        s = json.load(open(f))
        charge += s["finished_unix_seconds"] - s["started_unix_seconds"]
    print(f"{name}: {charge:.2f} device-seconds")
    total += charge
ledger = json.load(open(f"{work}/pool.yaml.ledger.json"))
used = sum(a["usedDeviceSeconds"] for a in ledger["sweeps"])
reserved = sum(a["reservedDeviceSeconds"] for a in ledger["sweeps"])
print(f"sum of charges {total:.2f} of {pool_hours * 3600:.1f} device-seconds; "
      f"ledger: used {used:.2f}, reserved {reserved:.2f}, {len(ledger['sweeps'])} sweeps")
assert total <= pool_hours * 3600, "the sweeps' charges exceed the pool"
assert total >= 0.5 * pool_hours * 3600, "less than half the pool was used"
assert len(ledger["sweeps"]) == 3, "the ledger does not hold one account per sweep"
assert reserved == 0, "finished sweeps still hold reservations"
assert not any(a["active"] for a in ledger["sweeps"]), "a finished sweep is active"
assert abs(used - total) < 0.05, "the ledger disagrees with the segments' times"
PY
assert_no_trial_processes

# The report of gamma, which has no gpuHours of its own, shows the pool's as its budget: the run
# recorded the pool it was bound to in the state directory.
"$BSW" report "$WORK/state-gamma" -o "$WORK/gamma.html" >/dev/null
grep -o '<span class="figure" id="budget-gpuHours">[^<]*' "$WORK/gamma.html" | grep -q '>0.006$' ||
  fail "gamma's report does not show the pool's 0.006 GPU-hours as its budget"
