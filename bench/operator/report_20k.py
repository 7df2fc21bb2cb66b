#!/usr/bin/env python3
"""Appends run_20k.sh's figures to bench/results/operator.md (see run_20k.sh for what each is)."""
import argparse
import datetime
import json
import os
import subprocess

OBJECT_TARGET = 64 * 1024
FIRST_DECISION_TARGET = 10.0
RSS_TARGET_MB = 64


def machine():
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((line.split(":", 1)[1].strip() for line in cpu.splitlines()
                  if line.startswith("Model name")), "unknown CPU")
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    return f"{model}, {os.cpu_count()} CPUs (nproc), {mem_kb / 1024 / 1024:.0f} GiB memory"


def compact_size(value):
    return len(json.dumps(value, separators=(",", ":")).encode())


def first_decision(log_path, start):
    with open(log_path) as f:
        for line in f:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("event") == "decision":
                ts = datetime.datetime.fromisoformat(entry["ts"].replace("Z", "+00:00"))
                return ts.timestamp() - start, entry["record"]
    return None, None


def log_time(log_path, event, start):
    with open(log_path) as f:
        for line in f:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("event") == event:
                ts = datetime.datetime.fromisoformat(entry["ts"].replace("Z", "+00:00"))
                return ts.timestamp() - start
    return None


def verdict(ok):
    return "met" if ok else "**missed**"


def main():
    p = argparse.ArgumentParser()
    for name in ["sim", "replay", "before", "after", "operator-log", "rss", "command", "out"]:
        p.add_argument("--" + name, required=True)
    p.add_argument("--start", type=float, required=True)
    p.add_argument("--hwm-kb", type=int, required=True)
    p.add_argument("--trial-records", type=int, required=True)
    a = p.parse_args()

    sim = json.load(open(a.sim))
    replay = json.load(open(a.replay))
    before = json.load(open(a.before))
    after = json.load(open(a.after))
    decision_s, record = first_decision(a.operator_log, a.start)
    loaded_s = log_time(a.operator_log, "sweep_loaded", a.start)
    hwm_mb = a.hwm_kb / 1024
    object_bytes = len(json.dumps(after, indent=4).encode())  # as `kubectl get -o json` prints it
    rss = [float(line.split("\t")[1]) / 1024 for line in open(a.rss) if "\t" in line]

    rows = []
    if sim:
        rows += [
            ("core simulation: trials / events / passes",
             f"{sim['trials']} / {sim['events']} / {sim['passes']} ({sim['phase']})", ""),
            ("core simulation: wall time (simulated "
             f"{sim['simulated_hours']:.1f} h)", f"{sim['wall_seconds']:.1f} s", ""),
            ("core simulation: peak RSS (the whole journal in memory)",
             f"{sim['peak_rss_mb']:.1f} MB", ""),
        ]
    if replay:
        rows.append(("replay: events recorded through TrialLog",
                     f"{replay['events']} in {replay['record_seconds']:.0f} s", ""))
    rows += [
        ("BudgetSweepTrial objects in the API server", f"{a.trial_records}", ""),
        ("BudgetSweep object, `kubectl get -o json` (after the operator's status write)",
         f"{object_bytes} B ({compact_size(after)} B compact; status "
         f"{compact_size(after.get('status', {}))} B)",
         f"< {OBJECT_TARGET} B: {verdict(object_bytes < OBJECT_TARGET)}"),
        ("BudgetSweep object as replayed (before the operator)",
         f"{len(json.dumps(before, indent=4).encode())} B (status "
         f"{compact_size(before.get('status', {}))} B)", ""),
        ("operator start to `sweep_loaded` (history read and replayed)",
         f"{loaded_s:.2f} s" if loaded_s is not None else "not reached", ""),
        ("operator start to its first decision",
         f"{decision_s:.2f} s ({record['event']})" if decision_s is not None else "not reached",
         f"< {FIRST_DECISION_TARGET:.0f} s: "
         f"{verdict(decision_s is not None and decision_s < FIRST_DECISION_TARGET)}"),
        ("operator RSS, peak (VmHWM)", f"{hwm_mb:.1f} MB",
         f"< {RSS_TARGET_MB} MB: {verdict(hwm_mb < RSS_TARGET_MB)}"),
        ("operator RSS at the end (VmRSS)", f"{rss[-1]:.1f} MB" if rss else "n/a", ""),
    ]

    out = [
        "",
        "# A 20,000-trial sweep (bench/operator/run_20k.sh)",
        "",
        f"Command: `{a.command}` (run "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC). Machine: "
        f"{machine()}, shared with other builds.",
        "",
        "| | measured | target |",
        "|---|---:|---:|",
    ]
    out += [f"| {what} | {value} | {target} |" for what, value, target in rows]
    with open(a.out, "a") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
