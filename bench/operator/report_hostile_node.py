"""Compares bench/operator/run.sh runs with hostile trial pods against clean ones
(run_hostile_node.sh): the operator's RSS peak and the healthy sweeps' kill latency."""

import argparse
import json
import os
import platform


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--command", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("runs", nargs="+", help="run.sh JSON results, named clean-* or hostile-*")
    a = p.parse_args()

    kinds = {"clean": [], "hostile": []}
    for path in a.runs:
        kinds[os.path.basename(path).split("-")[0]].append(json.load(open(path)))
    rows = {}
    for kind, runs in kinds.items():
        kills = [v for r in runs for v in r["kill_latency_seconds"]["values"]]
        rows[kind] = {
            "runs": len(runs),
            "rss_peak_mb": max(r["rss_mb"]["peak_hwm"] for r in runs),
            "kills": len(kills),
            "p50": percentile(kills, 0.50),
            "p99": percentile(kills, 0.99),
            "trials": sum(r["trials_created"] for r in runs),
            "hostile_failed": sum(r.get("hostile_trials_failed", 0) for r in runs),
        }
    clean, hostile = rows["clean"], rows["hostile"]
    rss_ratio = hostile["rss_peak_mb"] / clean["rss_peak_mb"]
    p99_ratio = hostile["p99"] / clean["p99"]
    enough = min(clean["kills"], hostile["kills"]) >= 200
    verdict = ("met" if rss_ratio <= 1.5 and p99_ratio <= 1.2 and enough else "NOT met")
    md = f"""# The operator beside hostile trial pods, on the real node (issue 40)

Command: `{a.command}` (root; {platform.node()}, {os.cpu_count()} cores). Each run is
`bench/operator/run.sh`: the test cluster and its real node, the operator on the host scraping the
trial pods at their pod IPs, healthy sweeps of curve-trainer pods (0.1 s an epoch, rungs 1/3/9,
ASHA stop mode). The hostile runs add a sweep whose trials serve, one kind per trial, a gzip bomb
(256 KiB inflating to 256 MiB), a 200 MiB body or 20,000 label sets (curve-trainer --hostile);
each of those trials fails ExitedShort. The two kinds of run take turns.

| | clean | hostile | ratio | target |
|---|---:|---:|---:|---:|
| runs | {clean['runs']} | {hostile['runs']} | | |
| healthy trials created | {clean['trials']} | {hostile['trials']} | | |
| hostile trials failed (ExitedShort) | - | {hostile['hostile_failed']} | | |
| operator RSS peak (VmHWM), MiB | {clean['rss_peak_mb']} | {hostile['rss_peak_mb']} | {rss_ratio:.2f} | <= 1.5 |
| kills (RungCutoff) | {clean['kills']} | {hostile['kills']} | | >= 200 each |
| kill latency p50, s | {clean['p50']:.3f} | {hostile['p50']:.3f} | | |
| kill latency p99, s | {clean['p99']:.3f} | {hostile['p99']:.3f} | {p99_ratio:.2f} | <= 1.2 |

Targets {verdict}. Kill latency: from the fixture exposing the rung value that decided a
RungCutoff stop to the operator's log line for that decision (bench/operator/README.md).
"""
    with open(a.out, "w") as f:
        f.write(md)


if __name__ == "__main__":
    main()
