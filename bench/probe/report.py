"""Turns bench/probe/run.sh's two sweeps into bench/results/probe.{json,md}."""
import json
import os
import platform
import subprocess
import sys


def segments(state):
    """Every segment of a sweep: trial name, start, finish (local supervisor records), summary."""
    out = []
    trials = os.path.join(state, "trials")
    for trial in sorted(os.listdir(trials)):
        for seg in sorted(os.listdir(os.path.join(trials, trial))):
            if not seg.startswith("seg-"):
                continue
            d = os.path.join(trials, trial, seg)
            record = json.load(open(os.path.join(d, "status.json")))
            summary = None
            for line in open(os.path.join(d, "trainer.log"), errors="replace"):
                if line.startswith("{"):
                    summary = json.loads(line)
            out.append({"trial": trial, "start": record["started_unix_seconds"],
                        "finish": record["finished_unix_seconds"],
                        "devices": max(1, record["devices"]), "summary": summary})
    return out


def sweep(work, name):
    status = json.load(open(os.path.join(work, f"{name}.status.json")))
    segs = segments(os.path.join(work, name))
    best = status["best"]["trial"]
    best_segs = [s for s in segs if s["trial"] == best]
    test = [s["summary"]["test_accuracy"] for s in best_segs
            if s["summary"] and s["summary"].get("test_accuracy") is not None]
    reached = max(s["finish"] for s in best_segs)
    # Device-seconds charged up to the moment the best trial finished, probes included.
    charged = sum(s["devices"] * max(0.0, min(s["finish"], reached) - s["start"]) for s in segs)
    probes = [s for s in segs if "-p" in s["trial"]]
    trials = [s for s in segs if "-p" not in s["trial"]]
    rates = [s["summary"]["samples_per_second"] for s in trials if s["summary"]]
    waits = [s["summary"]["data_wait_ratio"] for s in trials if s["summary"]]
    return {
        "phase": status["phase"],
        "best_trial": best,
        "best_validation_accuracy": status["best"]["value"],
        "best_test_accuracy": test[-1] if test else None,
        "budget_used_gpu_hours": status["budget"]["used"],
        "budget_to_best_gpu_hours": round(charged / 3600, 5),
        "probe_gpu_hours": round(sum(s["devices"] * (s["finish"] - s["start"]) for s in probes) / 3600, 5),
        "trial_segments": len(trials),
        "mean_trial_samples_per_second": sum(rates) / len(rates) if rates else None,
        "mean_trial_data_wait_ratio": sum(waits) / len(waits) if waits else None,
        "throughput": status.get("throughput"),
    }


def main():
    work, command = sys.argv[1], sys.argv[2]
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    results = os.path.join(root, "bench", "results")
    naive, probe = sweep(work, "naive"), sweep(work, "probe")
    same = naive["best_test_accuracy"] == probe["best_test_accuracy"]
    saving = 1 - probe["budget_to_best_gpu_hours"] / naive["budget_to_best_gpu_hours"]
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    data = {"command": command, "machine": f"{cpu}, {os.cpu_count()} cores, {platform.system()}",
            "naive": naive, "probe": probe, "same_best_test_accuracy": same,
            "budget_to_best_saving": saving}
    with open(os.path.join(results, "probe.json"), "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")

    t = probe["throughput"]
    chosen, baseline = t.get("chosen", {}), t.get("baseline", {})
    measured = [p for p in t.get("probes", []) if "samplesPerSecond" in p]
    fastest = max(measured, key=lambda p: p["samplesPerSecond"])
    speedup = probe["mean_trial_samples_per_second"] / naive["mean_trial_samples_per_second"]
    if abs(speedup - 1) < 0.05:
        speed_note = (
            "The steps took as long: a loader worker adds throughput only when a core is free to "
            "decode while the training thread computes, and this machine's two cores were shared "
            "with other work, so the budget difference is the probe phase's own cost plus noise.")
    else:
        speed_note = f"Trials ran {speedup:.2f}x as fast with the probe's settings."
    gate_note = []
    if fastest["samplesPerSecond"] > chosen.get("samplesPerSecond", 0):
        gate_note = [
            "",
            f"The gate passed over a faster candidate: {fastest['name']} "
            f"({' '.join(f'{k}={v}' for k, v in fastest['settings'].items()) or 'baseline'}, "
            f"{fastest['samplesPerSecond']:.0f} samples/s, utilization "
            f"{fastest['utilization']:.3f}) missed the target "
            f"{t['targetUtilization']} that the chosen one "
            f"({chosen.get('samplesPerSecond', 0):.0f} samples/s) met. On CPU the gate's "
            "figure is 1 - data-wait ratio, which rises with more workers even when the step "
            "does not get faster.",
        ]
    lines = [
        "# The probe phase: budget to reach the same best test accuracy",
        "",
        f"Reproduce: `{command}` (writes this file and probe.json).",
        f"Machine: {data['machine']}; shared with other sessions' builds and tests while measured, "
        "so rates vary by tens of percent between runs.",
        "",
        "Two ASHA sweeps (stop mode, 6 configurations, epochs 1/3/9, one trial at a time) of the "
        "`mlp` trainer on Fashion-MNIST exported as 128x128 JPEGs (6000 training samples, decoded, "
        "cropped, flipped and resized to 28x28 in the loader; 1 intra-op thread). They differ only "
        "in `spec.throughput.enabled`. The template's loader settings are the naive ones "
        "(`--workers=0 --prefetch=1`); the probe phase tries workers 0, 1 and 2 with prefetch 4. "
        "The same seed gives the same configurations, and the loader's batches do not depend on the "
        "worker count, so both sweeps compute the same values and keep the same trials.",
        "",
        "| sweep | best test accuracy | device-hours to reach it | device-hours used | "
        "probing | trial samples/s (mean) | trial data wait (mean) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in (("naive loader settings", naive), ("with the probe phase", probe)):
        lines.append(
            f"| {name} | {s['best_test_accuracy']} | {s['budget_to_best_gpu_hours']:.4f} | "
            f"{s['budget_used_gpu_hours']:.4f} | {s['probe_gpu_hours']:.4f} | "
            f"{s['mean_trial_samples_per_second']:.0f} | {s['mean_trial_data_wait_ratio']:.3f} |")
    lines += [
        "",
        f"Same best test accuracy: {'yes' if same else 'no'} "
        f"({naive['best_trial']} and {probe['best_trial']}). "
        f"With the probe phase it took {100 * abs(saving):.0f}% "
        f"{'less' if saving >= 0 else 'more'} budget to reach it, its own probing included.",
        "",
        f"Trials ran at {probe['mean_trial_samples_per_second']:.0f} samples/s (mean over "
        f"segments) with the probe's settings and {naive['mean_trial_samples_per_second']:.0f} "
        f"with the naive ones, waiting on data {probe['mean_trial_data_wait_ratio']:.0%} vs "
        f"{naive['mean_trial_data_wait_ratio']:.0%} of step time. " + speed_note,
    ] + gate_note + [
        "",
        f"Probe phase: {t.get('reason')}; trials ran with `{' '.join(t.get('trialArgs', []))}`. "
        f"Chosen: {chosen.get('samplesPerSecond', 0):.0f} samples/s, data wait "
        f"{chosen.get('dataWaitRatio', 0):.3f}, utilization {chosen.get('utilization', 0):.3f}; "
        f"baseline: {baseline.get('samplesPerSecond', 0):.0f} samples/s, data wait "
        f"{baseline.get('dataWaitRatio', 0):.3f}, utilization {baseline.get('utilization', 0):.3f} "
        f"({t.get('utilizationSource')}).",
        "",
        "| probe run | settings | samples/s | data wait | utilization |",
        "|---|---|---|---|---|",
    ]
    for p in t.get("probes", []):
        settings = " ".join(f"{k}={v}" for k, v in p["settings"].items()) or "baseline (template)"
        if "samplesPerSecond" in p:
            lines.append(f"| {p['name']} | {settings} | {p['samplesPerSecond']:.0f} | "
                         f"{p['dataWaitRatio']:.3f} | {p['utilization']:.3f} |")
        else:
            lines.append(f"| {p['name']} | {settings} | {p.get('reason')} | | |")
    with open(os.path.join(results, "probe.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
