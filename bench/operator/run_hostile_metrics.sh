#!/usr/bin/env bash
# Issue 40: the scrape's caps under hostile trainers, no cluster. One sweep through
# SweepController with 10% of its trials' endpoints serving a gzip bomb, a 200 MiB body or a
# label flood (hung_metrics_bench.cc, --misbehaving=hostile), against the same sweep with none:
# each run in a process of its own, the two kinds taking turns, so that each peak RSS is its own.
# Writes bench/results/operator-hostile-metrics.md.
#
#   bench/operator/run_hostile_metrics.sh                      100 trials, parallelism 10, 4 runs each
#   TRIALS=30 REPEATS=1 bench/operator/run_hostile_metrics.sh  a quick look
#
# Environment: BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/../.."

build_dir=${BUILD_DIR:-build}
trials=${TRIALS:-100}
parallelism=${PARALLELISM:-10}
repeats=${REPEATS:-4}

if [[ ! -f "$build_dir/build.ninja" ]]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build_dir" -j2 --target hung_metrics_bench

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for repeat in $(seq "$repeats"); do
  for only in clean misbehaving; do
    "$build_dir/bench/operator/hung_metrics_bench" --trials="$trials" --parallelism="$parallelism" \
      --hung-percent=10 --misbehaving=hostile --only="$only" --repeats=1 >"$work/$only-$repeat.json"
  done
done
command="bench/operator/run_hostile_metrics.sh"
if [[ "$trials/$parallelism/$repeats" != "100/10/4" ]]; then
  command="TRIALS=$trials PARALLELISM=$parallelism REPEATS=$repeats $command"
fi
python3 bench/operator/report_hostile_metrics.py --command "$command" \
  --out bench/results/operator-hostile-metrics.md "$work"/*.json
cat bench/results/operator-hostile-metrics.md
