#!/usr/bin/env bash
# With spec.metrics.prometheus.url set, `budgetsweep run` decides from a real Prometheus (Debian's
# package) that scrapes the trials, instead of scraping them itself: every rung value arrives
# through the Prometheus HTTP API and the sweep completes with rung cuts.
source "$(dirname "$0")/lib.sh"

command -v prometheus >/dev/null || fail "prometheus is not installed (make deps installs it)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo '[]' >"$WORK/targets.json"
cat >"$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: trials
    file_sd_configs: [{files: ["$WORK/targets.json"], refresh_interval: 1s}]
YAML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$port" >"$WORK/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null || { cat "$WORK/prometheus.log" >&2; fail "prometheus did not start"; }

# The service discovery of this test: every running segment's metrics endpoint becomes a target.
(
  while kill -0 "$prom_pid" 2>/dev/null; do
    python3 - "$WORK/state" "$WORK/targets.json" <<'PY'
import glob, json, os, sys
targets = []
for f in glob.glob(os.path.join(sys.argv[1], "trials/*/seg-*/status.json")):
    try:
        s = json.load(open(f))
    except ValueError:
        continue
    if s.get("state") == "running":
        targets.append(s["metrics_url"].split("//")[1].split("/")[0])
tmp = sys.argv[2] + ".tmp"
json.dump([{"targets": targets}], open(tmp, "w"))
os.replace(tmp, sys.argv[2])
PY
    sleep 0.3
  done
) &

curve_sweep "$WORK/sweep.yaml" promsource "  budget: {gpuHours: 0.05}
  resource: {unit: epochs, min: 1, max: 3, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 2}
  parallelism: 2
  maxTrials: 4
  metrics:
    prometheus: {url: \"http://127.0.0.1:$port\"}
    missingTimeoutSeconds: 60" '"--seconds-per-epoch=2"'

"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "run exited $?"; }
cat "$WORK/status.json"
# Prometheus itself scraped the objective series of all four trials (a finished trial's series
# is stale at once, so count the samples of the last minutes).
scraped=$(curl -sf "http://127.0.0.1:$port/api/v1/query" \
  --data-urlencode 'query=count(count by (trial) (count_over_time(budgetsweep_trainer_objective{sweep="promsource"}[10m])))' |
  python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
kill "$prom_pid"
wait "$prom_pid" 2>/dev/null || true

[ "$(json_get "$WORK/status.json" 's["phase"]')" = Completed ] || fail "phase is not Completed"
[ "$(json_get "$WORK/status.json" 's["rungs"][0]["reached"]')" -eq 4 ] \
  || fail "not every rung-1 value arrived through Prometheus"
[ "$(json_get "$WORK/status.json" 's["trials"]["stopped"]')" -ge 1 ] || fail "no trial was cut at the rung"
[ "$scraped" = 4 ] || fail "prometheus scraped the objective of $scraped trials, want 4"
if grep -q MetricsMissing "$WORK/state/journal.jsonl"; then fail "a trial was stopped for missing metrics"; fi
assert_journal_sane "$WORK/state" 3
assert_no_trial_processes
