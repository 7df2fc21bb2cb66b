#!/usr/bin/env bash
# Reproduces bench/results/roi-easy.{md,json,png} (ROI_TASK=easy) or bench/results/roi-hard.*
# (ROI_TASK=hard), then bench/results/roi.md, the page for both tasks: budgetsweep's grid, then the
# task's contenders (config.py: budgetsweep random, ASHA, ASHA + TPE, Hyperband, PBT, PB2; Optuna
# with SuccessiveHalvingPruner; Ray Tune with ASHAScheduler or PB2), all driving
# budgetsweep-trainer on Fashion-MNIST, two trials at a time, under the same device-hour budget
# (bench/roi/README.md).
#   ROI_STATE_ROOT=/dev/shm/bsw-roi bench/roi/run.sh     the published easy run (17 minutes)
#   ROI_TASK=hard ROI_STATE_ROOT=/dev/shm/bsw-roi-hard bench/roi/run.sh
#                                                    the published hard run (101 minutes)
#   ROI_SIZE=tiny [ROI_TASK=hard] bench/roi/run.sh   a few-minute try of the whole pipeline
# Environment: BUILD_DIR (default build), ROI_VENV (default ~/.cache/budgetsweep/venv-roi),
# ROI_WORK (raw runs, default /tmp/bsw-roi-SIZE for easy, /tmp/bsw-roi-hard-SIZE for hard),
# ROI_OUT (default bench/results/roi-TASK for the full size, ROI_WORK/roi otherwise),
# ROI_ONLY (space-separated contenders to run; default the grid and all the task's),
# ROI_STATE_ROOT (where budgetsweep's state directories go; default ROI_WORK).
set -euo pipefail
cd "$(dirname "$0")/../.."

export ROI_SIZE=${ROI_SIZE:-full} ROI_TASK=${ROI_TASK:-easy}
build_dir=${BUILD_DIR:-build}
venv=${ROI_VENV:-$HOME/.cache/budgetsweep/venv-roi}
if [[ $ROI_TASK == easy ]]; then suffix=""; else suffix="-$ROI_TASK"; fi
work=${ROI_WORK:-/tmp/bsw-roi$suffix-$ROI_SIZE}
results=bench/results/roi # the page for both tasks; each task's full report is results-TASK
if [[ $ROI_SIZE == full ]]; then out=${ROI_OUT:-$results-$ROI_TASK}; else out=${ROI_OUT:-$work/roi}; fi
contenders=$(python3 -c 'import sys; sys.path.insert(0, "bench/roi"); import config
print(*config.task()["contenders"])')
only=${ROI_ONLY:-grid $contenders}
command="bench/roi/run.sh   # ROI_TASK=$ROI_TASK ROI_SIZE=$ROI_SIZE${ROI_STATE_ROOT:+ ROI_STATE_ROOT=$ROI_STATE_ROOT}"
mkdir -p "$work"
notes="$work/notes.md"
: > "$notes"

# Python peers, pinned; Ray Tune and PB2's GP libraries are optional so that a failed install is
# reported, not fatal.
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet 'optuna==5.0.0' 'matplotlib==3.11.2'
if ! "$venv/bin/python" -m pip install --quiet 'ray[tune]==2.60.0' > "$work/ray-install.log" 2>&1; then
  echo "- Ray Tune could not be installed: $(tail -n 1 "$work/ray-install.log")" >> "$notes"
fi
if [[ " $only " == *" ray-pb2 "* ]] &&
  ! "$venv/bin/python" -m pip install --quiet 'GPy==1.15.0' 'scikit-learn==1.9.1' \
    > "$work/pb2-install.log" 2>&1; then
  echo "- GPy and scikit-learn (Ray Tune's PB2) could not be installed: $(tail -n 1 "$work/pb2-install.log")" >> "$notes"
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
    ray) cmd=("$venv/bin/python" bench/roi/ray_peer.py "${peer[@]}" --scheduler asha) ;;
    ray-pb2) cmd=("$venv/bin/python" bench/roi/ray_peer.py "${peer[@]}" --scheduler pb2) ;;
    *)
      py bench/roi/sweep.py "$name" "$seed" "$trainer" "$budget" > "$dir/sweep.json"
      state="${ROI_STATE_ROOT:-$work}/$name/s$seed/state"
      rm -rf "$state"
      cmd=("$bsw" run "$dir/sweep.json" --state-dir "$state" -o json)
      ;;
  esac
  if [[ $name == ray* ]] && ! "$venv/bin/python" -c 'import ray.tune' 2> /dev/null; then
    rm -rf "$dir"
    return
  fi
  if [[ $name == ray-pb2 ]] && ! "$venv/bin/python" -c 'import GPy, sklearn' 2> /dev/null; then
    rm -rf "$dir"
    return
  fi
  # A sweep file `budgetsweep` refuses (a scheduler this build does not have yet) is recorded
  # once, and the contender left out.
  if [[ -n ${state:-} ]] && ! "$bsw" validate "$dir/sweep.json" > "$dir/validate.log" 2>&1; then
    echo "- $name: budgetsweep refused its sweep file, so it did not run: $(tail -n 1 "$dir/validate.log" | sed 's/^ *//')" >> "$notes"
    refused+=("$name")
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
  if [[ -f $dir/notes.md ]]; then cat "$dir/notes.md" >> "$notes"; fi
  if [[ -n ${state:-} ]]; then
    py bench/roi/collect_budgetsweep.py "$state" "$dir/segments"
  fi
}

refused=()
wants() { [[ " $only " == *" $1 "* && " ${refused[*]} " != *" $1 "* ]]; }

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
  for name in $contenders; do
    if wants "$name"; then run_contender "$name" "$seed"; fi
  done
done
echo "all contenders: $(( $(date +%s) - start )) s"

versions=$(py -c '
import importlib, json, sys
v = {"budgetsweep": sys.argv[1].split()[-1]}
for name in ("optuna", "matplotlib", "ray", "GPy", "sklearn"):
    try:
        v[name] = importlib.import_module(name).__version__
    except ImportError:
        v[name] = "not installed"
print(json.dumps(v))' "$("$bsw" --version | head -n 1)")
state_root=${ROI_STATE_ROOT:-$work}
mkdir -p "$state_root"
py bench/roi/report.py --raw "$work" --out "$out" --command "$command" --versions "$versions" \
  --notes "$notes" --state-filesystem "$(stat -f -c %T "$state_root")"
cat "$out.md"
if [[ $ROI_SIZE == full && -z ${ROI_OUT:-} ]]; then
  py bench/roi/index.py --prefix "$results"
fi
