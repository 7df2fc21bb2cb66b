"""Turns bench/trainer/run.sh's raw records into bench/results/trainer.{json,md}."""
import json
import os
import platform
import subprocess
import sys


def main():
    raw_path, threads, command = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    records = [json.loads(line) for line in open(raw_path) if line.strip()]
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    results = os.path.join(root, "bench", "results")
    os.makedirs(results, exist_ok=True)

    def trainer(bench, case):
        return next(r for r in records if r["bench"] == bench and r["case"] == case)

    def pytorch_best(case):
        return next(r for r in records if r["case"] == case and r.get("best"))

    b1 = {}
    for precision in ("bf16", "fp32"):
        ours = trainer("1", f"budgetsweep-trainer {precision}")["samples_per_second"]
        default = pytorch_best(f"pytorch {precision}")
        cl = pytorch_best(f"pytorch {precision} channels_last")
        b1[precision] = {
            "budgetsweep_samples_per_second": ours,
            "pytorch_samples_per_second": default["samples_per_second"],
            "pytorch_best_workers": default["workers"],
            "pytorch_channels_last_samples_per_second": cl["samples_per_second"],
            "pytorch_channels_last_best_workers": cl["workers"],
            "speedup_vs_pytorch": ours / default["samples_per_second"],
            "speedup_vs_pytorch_channels_last": ours / cl["samples_per_second"],
        }
    b2 = [r for r in records if r["bench"] == "2"]
    naive = next(r for r in b2 if r["case"] == "workers 0 prefetch 0")
    b2_rows = [{
        "case": r["case"], "workers": r["workers"], "samples_per_second": r["samples_per_second"],
        "data_wait_ratio": r["data_wait_ratio"],
        "epoch_speedup_vs_naive": r["samples_per_second"] / naive["samples_per_second"],
    } for r in b2]
    b3 = {"bf16_over_fp32": b1["bf16"]["budgetsweep_samples_per_second"] /
          b1["fp32"]["budgetsweep_samples_per_second"]}
    threads_rows = [{
        "case": r["case"], "samples_per_second": r["samples_per_second"],
        "train_seconds_per_epoch": 5000 / r["samples_per_second"], "wall_seconds": r["wall_seconds"],
    } for r in records if r["bench"] == "T"]
    q = trainer("4", "cnn2 defaults, 10 epochs")
    b4 = {"test_accuracy": q["test_accuracy"], "validation_accuracy": q["validation_accuracy"],
          "epochs": q["epochs"], "wall_seconds": q["wall_seconds"], "target": 0.91}

    cpu = subprocess.run(["sh", "-c", "lscpu | grep 'Model name' | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    out = {"command": command, "threads": threads, "machine": f"{cpu}, {os.cpu_count()} cores",
           "python": platform.python_version(), "bench1_throughput": b1, "bench2_loader": b2_rows,
           "bench3_precision": b3, "bench4_quality": b4, "threads": threads_rows,
           "bench5_h200": "not run: this task had no accelerator machine", "records": records}
    with open(os.path.join(results, "trainer.json"), "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")

    md = [
        "# budgetsweep-trainer benchmarks",
        "",
        f"Reproduce: `{command}` (THREADS={threads}; writes this file and trainer.json).",
        f"Machine: {cpu}, {os.cpu_count()} cores, shared with other sessions' builds and benchmarks "
        "while measured (load average about 3), so rates vary by tens of percent between runs; "
        f"both sides use {threads} intra-op threads. PyTorch is Debian's python3-torch 1.13, "
        "the same LibTorch the trainer links.",
        "",
        "## 1. cnn2 throughput vs PyTorch (one epoch, 20k samples, batch 128)",
        "",
        "PyTorch tries DataLoader num_workers 0 and 1 (persistent workers, prefetch 4) and keeps "
        "the best; it runs once as a plain script (NCHW) and once with channels_last, which "
        "budgetsweep-trainer uses for conv nets.",
        "",
        "| precision | budgetsweep samples/s | PyTorch samples/s (workers) | ratio | "
        "PyTorch channels_last samples/s (workers) | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for p, r in b1.items():
        md.append(f"| {p} | {r['budgetsweep_samples_per_second']:.0f} | "
                  f"{r['pytorch_samples_per_second']:.0f} ({r['pytorch_best_workers']}) | "
                  f"{r['speedup_vs_pytorch']:.2f}x | "
                  f"{r['pytorch_channels_last_samples_per_second']:.0f} "
                  f"({r['pytorch_channels_last_best_workers']}) | "
                  f"{r['speedup_vs_pytorch_channels_last']:.2f}x |")
    def verdict(ok):
        return "met" if ok else "not met"

    md += ["", "Target >= 1.3x: " + "; ".join(
        f"{p} {verdict(r['speedup_vs_pytorch'] >= 1.3)} against the plain script, "
        f"{verdict(r['speedup_vs_pytorch_channels_last'] >= 1.3)} against channels_last"
        for p, r in b1.items()) + ". On this shared machine one configuration's rate varies by tens of percent "
        "between runs (compare budgetsweep bf16 here with the Threads table), so ratios near "
        "1.3x are not decisive."]
    md += ["", "## 2. Loader on the decode-heavy image folder (96x96 JPEG, 10k train samples)", "",
           "| setting | samples/s | data-wait ratio | vs naive |", "|---|---|---|---|"]
    for r in b2_rows:
        md.append(f"| {r['case']} | {r['samples_per_second']:.0f} | "
                  f"{r['data_wait_ratio']:.3f} | {r['epoch_speedup_vs_naive']:.2f}x |")
    tuned = [r for r in b2_rows if r["workers"] > 0]
    best = min(tuned, key=lambda r: r["data_wait_ratio"])
    md += ["", f"Target data-wait < 5% when tuned: {verdict(best['data_wait_ratio'] < 0.05)} "
           f"(best tuned setting: {best['case']}, {best['data_wait_ratio']:.1%})."]
    md += ["", "The widely cited 4.7x (workers 0 to 8 plus pinned memory) needs cores to spare; "
           f"this machine has {os.cpu_count()}, shared by the loader workers and the "
           f"{threads} compute thread(s), so the table above is what it gives.",
           "", "## 3. bf16 vs fp32 on CPU (cnn2, from benchmark 1)", "",
           f"bf16 autocast runs at {b3['bf16_over_fp32']:.2f}x the fp32 rate.",
           "", "## Threads (the quickstart trial: cnn2, 5000 samples, batch 128, one epoch)", "",
           "Wall seconds include process start, loading Fashion-MNIST and evaluating 5000 "
           "validation and 10000 test samples.", "",
           "| case | samples/s | training s/epoch | wall s |", "|---|---|---|---|"]
    for r in threads_rows:
        md.append(f"| {r['case']} | {r['samples_per_second']:.0f} | "
                  f"{r['train_seconds_per_epoch']:.1f} | {r['wall_seconds']:.1f} |")
    rate = {r["case"]: r["samples_per_second"] for r in threads_rows}
    active = rate.get("threads 2 bf16 OMP_WAIT_POLICY=ACTIVE")
    if active:
        md += ["", f"With libgomp's default spinning (OMP_WAIT_POLICY=ACTIVE) two threads ran at "
               f"{active / rate['threads 2 bf16']:.2f}x the rate with passive waiting, which the "
               "trainer sets for itself unless the environment names a policy: other processes "
               "kept a core busy during these runs, and a spinning OpenMP thread without a free "
               "core stalls the other at every barrier."]
    md += ["", "## 4. Quality: cnn2 with default settings, 10 epochs", "",
           f"Test accuracy {q['test_accuracy']:.4f} (target 0.91); validation accuracy per epoch "
           f"{', '.join(f'{v:.4f}' for v in q['validation_accuracy'])}; "
           f"{q['wall_seconds']:.0f} s wall.",
           "", "## 5. H200", "", "See bench/results/gpu.md (bench/gpu/run.sh, run on an "
           "accelerator machine when a task is lent one).", ""]
    # Section 6 comes from bench/trainer/current.sh; keep it.
    page = os.path.join(results, "trainer.md")
    kept = ""
    if os.path.exists(page):
        with open(page) as f:
            old = f.read()
        marker = "## 6. Against current PyTorch"
        if marker in old:
            kept = "\n" + old[old.index(marker):]
    with open(page, "w") as f:
        f.write("\n".join(md) + kept)


if __name__ == "__main__":
    main()
