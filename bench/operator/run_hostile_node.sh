#!/usr/bin/env bash
# Issue 40 on the test cluster's real node: the operator (on the host, scraping trial pods at
# their pod IPs) with hostile trial pods (curve-trainer --hostile: a gzip bomb, a 200 MiB body, a
# label flood) beside healthy sweeps, against the same healthy sweeps alone, in the same session:
# run.sh runs, the two kinds taking turns. Writes bench/results/operator-hostile-node.md.
#
#   bench/operator/run_hostile_node.sh        2 healthy sweeps x 150 trials, 2 runs of each kind
#   TRIALS=40 REPEATS=1 bench/operator/run_hostile_node.sh     a quick look
#
# Targets: the operator's RSS peak with hostile pods <= 1.5 x the clean runs'; the healthy sweeps'
# kill latency p99 <= 1.2 x, over >= 200 kills of each kind. Needs root (the test node).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export SWEEPS=${SWEEPS:-2} TRIALS=${TRIALS:-150} PARALLELISM=${PARALLELISM:-3}
export DURATION=${DURATION:-900}
repeats=${REPEATS:-2}

work=$(mktemp -d "${TMPDIR:-/tmp}/bsw-hostile-node.XXXXXX")
trap 'rm -rf "$work"' EXIT
for repeat in $(seq "$repeats"); do
  OUT=$work/clean-$repeat HOSTILE_SWEEPS=0 "$HERE/run.sh" >/dev/null
  OUT=$work/hostile-$repeat HOSTILE_SWEEPS=1 "$HERE/run.sh" >/dev/null
done
command="bench/operator/run_hostile_node.sh"
if [[ "$SWEEPS/$TRIALS/$PARALLELISM/$repeats" != "2/150/3/2" ]]; then
  command="SWEEPS=$SWEEPS TRIALS=$TRIALS PARALLELISM=$PARALLELISM REPEATS=$repeats $command"
fi
python3 "$HERE/report_hostile_node.py" --command "$command" \
  --out "$ROOT/bench/results/operator-hostile-node.md" "$work"/*.json
cat "$ROOT/bench/results/operator-hostile-node.md"
