#!/usr/bin/env bash
# Reproduces bench/results/roi.{md,json,png}: budgetsweep grid, random, ASHA stop and ASHA pause
# against Optuna (SuccessiveHalvingPruner) and Ray Tune (ASHAScheduler), all driving
# budgetsweep-trainer on Fashion-MNIST, two trials at a time (bench/roi/README.md).
#   bench/roi/run.sh                   the published run (about 15 minutes on 2 idle cores)
#   ROI_SIZE=tiny bench/roi/run.sh     a few-minute try of the whole pipeline, results in ROI_WORK
# Environment: BUILD_DIR (default build), ROI_VENV (default ~/.cache/budgetsweep/venv-roi),
# ROI_WORK (raw runs, default /tmp/bsw-roi-SIZE), ROI_OUT (default bench/results/roi for the full
# size, ROI_WORK/roi otherwise), ROI_ONLY (space-separated contenders to run; default all),
# ROI_STATE_ROOT (where budgetsweep's state directories go; default ROI_WORK).
set -euo pipefail
cd "$(dirname "$0")/../.."

export ROI_SIZE=${ROI_SIZE:-full}
build_dir=${BUILD_DIR:-build}
venv=${ROI_VENV:-$HOME/.cache/budgetsweep/venv-roi}
work=${ROI_WORK:-/tmp/bsw-roi-$ROI_SIZE}
if [[ $ROI_SIZE == full ]]; then out=${ROI_OUT:-bench/results/roi}; else out=${ROI_OUT:-$work/roi}; fi
only=${ROI_ONLY:-grid random asha-stop asha-pause optuna ray}
command="bench/roi/run.sh   # ROI_SIZE=$ROI_SIZE"
mkdir -p "$work"
notes="$work/notes.md"
: > "$notes"

# Python peers, pinned; Ray is optional so that a failed install is reported, not fatal.
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet 'optuna==5.0.0' 'matplotlib==3.11.2'
if ! "$venv/bin/python" -m pip install --quiet 'ray[tune]==2.60.0' > "$work/ray-install.log" 2>&1; then
  echo "- Ray Tune could not be installed: $(tail -n 1 "$work/ray-install.log")" >> "$notes"
fi

if [[ ! -f "$build_dir/build.ninja" ]]; then
  make configure BUILD_DIR="$build_dir"
fi
nice -n 10 cmake --build "$build_dir" --target budgetsweep budgetsweep-trainer
bsw=$(realpath "$build_dir/operator/cmd/budgetsweep")
trainer=$(realpath "$build_dir/trainer-image/budgetsweep-trainer")

# Ray's workers import the peers' modules by name.
export PYTHONPATH="$PWD/bench/roi${PYTHONPATH:+:$PYTHONPATH}"
py() { "$venv/bin/python" "$@"; }

# run_contender NAME SEED [again]: one measured run into $work/NAME/sSEED, under the device-hour
# $budget; a run that outlasts $timeout is stopped and run once more ("again" marks that one).
run_contender() {
  local name=$1 seed=$2
  local dir="$work/$name/s$seed"
  rm -rf "$dir"
  mkdir -p "$dir"
  local cmd state peer=(--trainer "$trainer" --seed "$seed" --out "$dir" --budget-hours "$budget")
  case $name in
    optuna) cmd=("$venv/bin/python" bench/roi/optuna_peer.py "${peer[@]}") ;;
    ray) cmd=("$venv/bin/python" bench/roi/ray_peer.py "${peer[@]}") ;;
    *)
      py bench/roi/sweep.py "$name" "$seed" "$trainer" "$budget" > "$dir/sweep.json"
      state="${ROI_STATE_ROOT:-$work}/$name/s$seed/state"
      rm -rf "$state"
      cmd=("$bsw" run "$dir/sweep.json" --state-dir "$state" -o json)
      ;;
  esac
  if [[ $name == ray ]] && ! "$venv/bin/python" -c 'import ray.tune' 2> /dev/null; then
    rm -rf "$dir"
    return
  fi
  nice -n 10 python3 bench/roi/measure.py --out "$dir/run.json" --name "$name" --seed "$seed" \
    --timeout "$timeout" -- "${cmd[@]}" > "$dir/stdout.log" 2> "$dir/stderr.log" || true
  tail -n 1 "$dir/stdout.log" || true
  local rc timed_out
  read -r rc timed_out < <(py -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["exit_code"], r["timed_out"])' "$dir/run.json")
  if [[ $timed_out == True ]]; then
    if [[ ${3:-} == again ]]; then
      echo "- $name seed $seed did not end within ${timeout} s twice; its rows include that run." >> "$notes"
    else
      echo "- $name seed $seed did not end within ${timeout} s and was stopped; the seed was run once more." >> "$notes"
      run_contender "$name" "$seed" again
      return
    fi
  fi
  if [[ $rc != 0 ]]; then
    echo "- $name seed $seed exited $rc: $(tail -n 1 "$dir/stderr.log")" >> "$notes"
  fi
  if [[ $name != optuna && $name != ray ]]; then
    py bench/roi/collect_budgetsweep.py "$state" "$dir/segments"
  fi
}

wants() { [[ " $only " == *" $1 "* ]]; }

timeout=$(py -c 'import config; print(config.size()["timeout_seconds"])')
start=$(date +%s)
# The grid first: it is the reference. Then seed by seed, every contender in turn, so that the
# shared machine's load drifts over all contenders alike.
budget=100 # the grid runs to its end
wants grid && run_contender grid 0
if [[ ! -f $work/grid/s0/run.json ]]; then
  echo "run.sh: no grid run in $work/grid/s0: the other contenders' budget is a share of it" >&2
  exit 1
fi
# Every other contender gets the size's budget_fraction of the grid's device-hours (a grid run kept
# from an earlier invocation, when ROI_ONLY leaves the grid out).
budget=$(py -c 'import sys, config, report
print(config.size()["budget_fraction"] * report.device_seconds(sys.argv[1]) / 3600)' "$work/grid/s0")
echo "budget for each contender: $budget device-hours"
mapfile -t seeds < <(py -c 'import config; print(*config.size()["seeds"], sep="\n")')
for seed in "${seeds[@]}"; do
  for name in random asha-stop asha-pause optuna ray; do
    if wants "$name"; then run_contender "$name" "$seed"; fi
  done
done
echo "all contenders: $(( $(date +%s) - start )) s"

versions=$(py -c '
import json, sys, optuna, matplotlib
v = {"budgetsweep": sys.argv[1].split()[-1], "optuna": optuna.__version__, "matplotlib": matplotlib.__version__}
try:
    import ray
    v["ray"] = ray.__version__
except ImportError:
    v["ray"] = "not installed"
print(json.dumps(v))' "$("$bsw" --version | head -n 1)")
py bench/roi/report.py --raw "$work" --out "$out" --command "$command" --versions "$versions" \
  --notes "$notes"
cat "$out.md"
