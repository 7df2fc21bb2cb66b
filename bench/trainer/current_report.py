"""Turns bench/trainer/current.sh's records and traces into bench/results/trainer-current.{md,json}."""
import collections
import json
import os
import statistics
import subprocess
import sys

import torch

SIDES = ("budgetsweep-trainer 1.13", "budgetsweep-trainer 2.x", "pytorch 2.x channels_last")
TARGET = 1.3


def self_times(trace_path):
    """Seconds of self time per op name in a Chrome trace: each event's duration less the
    durations of the events nested directly inside it on the same thread."""
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    spans = sorted(((e.get("pid"), e.get("tid"), float(e["ts"]), float(e["dur"]), e["name"])
                    for e in events if e.get("ph") == "X" and "dur" in e),
                   key=lambda s: (s[0], s[1], s[2], -s[3]))
    totals = collections.Counter()
    stack = []  # (thread, end, name, child time)
    for pid, tid, ts, dur, name in spans:
        while stack and (stack[-1][0] != (pid, tid) or stack[-1][1] <= ts):
            thread, end, parent, children, start = stack.pop()
            totals[parent] += (end - start) - children
            if stack and stack[-1][0] == thread:
                stack[-1][3] += end - start
        stack.append([(pid, tid), ts + dur, name, 0.0, ts])
    while stack:
        thread, end, parent, children, start = stack.pop()
        totals[parent] += (end - start) - children
        if stack and stack[-1][0] == thread:
            stack[-1][3] += end - start
    return {name: us / 1e6 for name, us in totals.items()}


def top(times, n=8):
    total = sum(times.values())
    return [{"op": name, "seconds": s, "share": s / total}
            for name, s in sorted(times.items(), key=lambda kv: -kv[1])[:n]]


def main():
    raw_path, work, threads, command = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    records = [json.loads(line) for line in open(raw_path) if line.strip()]
    rates = collections.defaultdict(list)
    workers = collections.defaultdict(list)
    for r in records:
        if r["side"].startswith("pytorch"):
            if not r.get("best"):
                continue
            workers[(r["side"], r["precision"])].append(r["workers"])
        rates[(r["side"], r["precision"])].append(r["samples_per_second"])
    medians = {key: statistics.median(values) for key, values in rates.items()}

    rows = []
    for precision in ("bf16", "fp32"):
        best_pytorch = medians[("pytorch 2.x channels_last", precision)]
        row = {"precision": precision}
        for side in SIDES:
            values = rates[(side, precision)]
            row[side] = {"median": medians[(side, precision)], "min": min(values),
                         "max": max(values)}
        row["pytorch_workers"] = workers[("pytorch 2.x channels_last", precision)]
        row["ratio_113"] = medians[("budgetsweep-trainer 1.13", precision)] / best_pytorch
        row["ratio_2x"] = medians[("budgetsweep-trainer 2.x", precision)] / best_pytorch
        row["2x_over_113"] = (medians[("budgetsweep-trainer 2.x", precision)] /
                              medians[("budgetsweep-trainer 1.13", precision)])
        rows.append(row)

    profiles = {name: top(self_times(os.path.join(work, f"trace-{name}.json")))
                for name in ("ours", "ours-113", "pytorch")}
    cpu = subprocess.run(["sh", "-c", "lscpu | grep 'Model name' | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    rounds = len(rates[("budgetsweep-trainer 1.13", "bf16")])
    out = {"command": command, "machine": f"{cpu}, {os.cpu_count()} cores", "threads": threads,
           "rounds": rounds, "pytorch": torch.__version__, "rows": rows, "profiles": profiles,
           "records": records}
    results = os.path.join(os.path.dirname(__file__), "..", "results")
    with open(os.path.join(results, "trainer-current.json"), "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")

    md = ["# budgetsweep-trainer against current PyTorch", "",
          f"Reproduce: `{command}` (writes this file and trainer-current.json).",
          f"Machine: {cpu}, {os.cpu_count()} cores; {threads} intra-op thread(s) on every side, "
          f"{rounds} rounds with the cases alternating, medians (min-max). PyTorch "
          f"{torch.__version__} is the pinned PyPI wheel (scripts/torch-wheel.sh), the LibTorch "
          "that build-torch2's trainer links, at its best setting: channels_last and the better "
          "of DataLoader num_workers 0 and 1 (persistent, prefetch 4). The trainer uses one loader "
          "worker. cnn2, 20k Fashion-MNIST samples, one epoch, batch 128, AdamW with warmup and "
          "cosine decay on both sides.", "",
          "| precision | budgetsweep-trainer 1.13 | budgetsweep-trainer 2.x | PyTorch 2.x best "
          "(workers) | 1.13 / PyTorch | 2.x / PyTorch | 2.x / 1.13 |",
          "|---|---|---|---|---|---|---|"]

    def cell(r):
        return f"{r['median']:.0f} ({r['min']:.0f}-{r['max']:.0f})"
    for row in rows:
        md.append(f"| {row['precision']} | {cell(row[SIDES[0]])} | {cell(row[SIDES[1]])} | "
                  f"{cell(row[SIDES[2]])} ({','.join(map(str, row['pytorch_workers']))}) | "
                  f"{row['ratio_113']:.2f}x | {row['ratio_2x']:.2f}x | {row['2x_over_113']:.2f}x |")
    md += [""]
    for row in rows:
        best = max(row["ratio_113"], row["ratio_2x"])
        md.append(f"- {row['precision']}: target >= {TARGET}x against current PyTorch's best "
                  f"{'met' if best >= TARGET else 'not met'} ({best:.2f}x); the 2.x build "
                  f"{'is not slower than' if row['2x_over_113'] >= 0.97 else 'is slower than'} "
                  f"the 1.13 build ({row['2x_over_113']:.2f}x; within 3% counts as even).")
    md += ["", "## Where a step's time goes (bf16, first 60 steps, self time by op)", ""]
    titles = {"ours": "budgetsweep-trainer 2.x", "ours-113": "budgetsweep-trainer 1.13",
              "pytorch": "PyTorch 2.x channels_last, num_workers 0"}
    for name, title in titles.items():
        md += [f"{title}:", "", "| op | s | share |", "|---|---|---|"]
        md += [f"| `{p['op']}` | {p['seconds']:.3f} | {p['share']:.0%} |" for p in profiles[name]]
        md.append("")
    with open(os.path.join(results, "trainer-current.md"), "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
