"""Joins scheduler_bench's Google Benchmark JSON and optuna_bench.py's JSON into
bench/results/scheduler.{md,json}, with the machine and the command that made them."""

import argparse
import json
import os
import platform
import subprocess


def machine():
    cpu = "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    compiler = subprocess.run(["c++", "--version"], capture_output=True,
                              text=True).stdout.splitlines()[0]
    return {
        "cpu": cpu,
        "cores_online": os.cpu_count(),
        "memory_gib": round(mem_gib, 1),
        "os": platform.platform(),
        "compiler": compiler,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpp", required=True)
    parser.add_argument("--optuna", required=True)
    parser.add_argument("--python-version", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    cpp_raw = json.load(open(args.cpp))
    optuna = json.load(open(args.optuna))

    cpp = {}
    for b in cpp_raw["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        n = b["run_name"].split("trials:")[1]
        cpp[n] = {
            "decisions": int(b["decisions"]),
            "decisions_per_second": b["decisions_per_second"],
            "ns_per_decision": 1e9 / b["decisions_per_second"],
            "agreement_with_stream": b["agreement"],
        }
    sizes = sorted(cpp, key=int)
    rows = {}
    for n in sizes:
        o = optuna["sizes"][n]
        rows[n] = {"budgetsweep": cpp[n], "optuna": o,
                   "speedup": cpp[n]["decisions_per_second"] / o["decisions_per_second"]}
    flat = cpp[sizes[-1]]["ns_per_decision"] / cpp[sizes[0]]["ns_per_decision"]
    result = {
        "benchmark": "ASHA stop-mode decisions on one seeded report stream per size",
        "command": args.command,
        "machine": machine(),
        "python": args.python_version,
        "optuna_version": optuna["optuna_version"],
        "optuna_time_cap_seconds": optuna["time_cap_seconds"],
        "cpp_statistic": "median of 5 repetitions (Google Benchmark)",
        "sizes": rows,
        "speedup_at_10k": rows["10000"]["speedup"],
        "ns_per_decision_ratio_100k_over_1k": flat,
    }
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    m = result["machine"]
    lines = [
        "# Scheduler benchmark: ASHA decisions, budgetsweep vs Optuna",
        "",
        "Stop-mode ASHA (η = 3, decision rungs at 1, 3 and 9 epochs) fed one report stream per",
        "size: 32 asynchronous workers, a seeded synthetic learning curve per trial, and a trial",
        "reports at the next rung only while ASHA keeps it. Every report is one decision:",
        "`AshaScheduler::Record` on the budgetsweep side, `trial.report` + `trial.should_prune`",
        "with `SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)` and in-memory storage",
        "on the Optuna side. Both read the same stream file.",
        "",
        "| trials | decisions | budgetsweep decisions/s | budgetsweep ns/decision | "
        "Optuna decisions/s | Optuna ns/decision | speedup |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        b, o = rows[n]["budgetsweep"], rows[n]["optuna"]
        note = (f" (capped: {o['decisions']} of {o['decisions_in_stream']} decisions, "
                f"{o['trials_created']} trials)") if o["capped"] else ""
        lines.append(f"| {int(n):,} | {b['decisions']:,} | {b['decisions_per_second']:,.0f} | "
                     f"{b['ns_per_decision']:,.0f} | {o['decisions_per_second']:,.0f}{note} | "
                     f"{o['ns_per_decision']:,.0f} | {rows[n]['speedup']:,.0f}× |")
    lines += [
        "",
        f"- Speedup at 10k trials: **{result['speedup_at_10k']:,.0f}×** (target ≥ 100×).",
        f"- budgetsweep ns/decision, 100k over 1k: **{flat:.1f}×** for 100× more trials "
        "(O(log n) binary heaps per rung, no scans; the growth is the log factor and cache misses of the larger heaps on a machine shared with builds).",
        "- Decisions agree with the stream's recorded ASHA decisions: budgetsweep "
        + ", ".join(f"{float(rows[n]['budgetsweep']['agreement_with_stream']):.4f}" for n in sizes)
        + "; Optuna " + ", ".join(f"{rows[n]['optuna']['agreement']:.4f}" for n in sizes) + ".",
    ]
    for n in sizes:
        o = rows[n]["optuna"]
        if o["capped"]:
            lines.append(
                f"- Optuna at {int(n):,} trials was stopped after {o['seconds']:.0f} s of decision "
                f"time (cap {optuna['time_cap_seconds']:.0f} s); its rate is measured on the "
                f"{o['decisions']:,} decisions it finished, from the start of the stream when only "
                f"{o['trials_created']:,} trials existed, so it overstates Optuna's rate at that "
                "size (each Optuna decision scans every trial).")
    lines += [
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores_online']} cores online (single-threaded benchmark)",
        f"- Memory: {m['memory_gib']} GiB; OS: {m['os']}",
        f"- Compiler: {m['compiler']}, RelWithDebInfo (-O2)",
        f"- Python {args.python_version}, Optuna {optuna['optuna_version']}",
        "",
        "## Reproduce",
        "",
        "```",
        args.command,
        "```",
        "",
    ]
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
