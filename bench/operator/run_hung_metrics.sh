#!/usr/bin/env bash
# Kill latency with 10% of the trials' metric endpoints hung, against the same sweep with none
# hung; no cluster (hung_metrics_bench.cc says how). Writes bench/results/operator-hung-metrics.md.
#
#   bench/operator/run_hung_metrics.sh                      100 trials, parallelism 10, 3 runs each
#   TRIALS=40 REPEATS=1 bench/operator/run_hung_metrics.sh  a quick look
#
# Environment: BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/../.."

build_dir=${BUILD_DIR:-build}
trials=${TRIALS:-100}
parallelism=${PARALLELISM:-10}
repeats=${REPEATS:-3}

if [[ ! -f "$build_dir/build.ninja" ]]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build_dir" -j2 --target hung_metrics_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build_dir/bench/operator/hung_metrics_bench" --trials="$trials" --parallelism="$parallelism" \
  --hung-percent=10 --repeats="$repeats" > "$work/result.json"
command="bench/operator/run_hung_metrics.sh"
if [[ "$trials/$parallelism/$repeats" != "100/10/3" ]]; then
  command="TRIALS=$trials PARALLELISM=$parallelism REPEATS=$repeats $command"
fi
python3 bench/operator/report_hung_metrics.py --result "$work/result.json" --command "$command" \
  --out bench/results/operator-hung-metrics.md
cat bench/results/operator-hung-metrics.md
