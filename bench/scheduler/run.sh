#!/usr/bin/env bash
# Runs the scheduler benchmark: budgetsweep's ASHA against Optuna's SuccessiveHalvingPruner on the
# same report streams, and writes bench/results/scheduler.{md,json}.
# Environment: BUILD_DIR (default build), OPTUNA_TIME_CAP seconds per size (default 120),
# BSW_BENCH_VENV (default ~/.cache/budgetsweep/venv-bench).
set -euo pipefail
cd "$(dirname "$0")/../.."

build_dir=${BUILD_DIR:-build}
venv=${BSW_BENCH_VENV:-$HOME/.cache/budgetsweep/venv-bench}
time_cap=${OPTUNA_TIME_CAP:-120}

if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet 'optuna==5.0.0'

if [[ ! -f "$build_dir/build.ninja" ]]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build_dir" -j2 --target scheduler_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench="$build_dir/bench/scheduler/scheduler_bench"
"$bench" --generate "$work"
"$bench" --streams "$work" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$work/cpp.json" --benchmark_out_format=json
"$venv/bin/python" bench/scheduler/optuna_bench.py --streams "$work" --time-cap "$time_cap" \
  > "$work/optuna.json"
python3 bench/scheduler/report.py --cpp "$work/cpp.json" --optuna "$work/optuna.json" \
  --python-version "$("$venv/bin/python" -c 'import platform; print(platform.python_version())')" \
  --command "bench/scheduler/run.sh   # OPTUNA_TIME_CAP=$time_cap" \
  --out bench/results/scheduler
cat bench/results/scheduler.md
