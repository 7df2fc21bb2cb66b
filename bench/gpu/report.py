"""Turns bench/gpu/run.sh's records into gpu.md and gpu.json in OUT."""
import csv
import json
import os
import statistics
import sys

H200_BF16_DENSE_PEAK = 989.4e12  # the H200 SXM spec sheet's dense bf16 tensor rate
GATE = 0.85


def utilization(path):
    """Mean NVML utilization over the samples from the first to the last busy one, so that process
    start-up and the final evaluation's tail count as little as possible."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        values = [float(row[0]) / 100 for row in csv.reader(f) if row and row[0].strip()]
    busy = [i for i, v in enumerate(values) if v > 0]
    if not busy:
        return None
    return statistics.mean(values[busy[0]:busy[-1] + 1])


def main():
    raw, out, dry, gpu, version, seconds = sys.argv[1:7]
    records = [json.loads(line) for line in open(raw) if line.strip()]
    by_case = {}
    for r in records:
        if r.get("side") == "pytorch" and "samples_per_second" in r and not r.get("best"):
            continue
        by_case[r["case"]] = r
    flops = by_case["flops"]["train_flops_per_sample"]
    matmul = by_case["matmul"]["bf16_flops_per_second"]
    rows = []
    for case, r in by_case.items():
        if "samples_per_second" not in r:
            continue
        rate = r["samples_per_second"]
        util = utilization(r["nvml_samples"])
        row = {"case": case, "samples_per_second": rate, "data_wait_ratio": r.get("data_wait_ratio"),
               "nvml_utilization": util, "gate_met": None if util is None else util >= GATE}
        if "cnn2" in case:
            row["mfu_of_measured_matmul"] = flops * rate / matmul
            row["mfu_of_spec_peak"] = flops * rate / H200_BF16_DENSE_PEAK
        rows.append(row)
    result = {"dry_run": dry == "1", "gpu": gpu, "trainer": version, "seconds": int(seconds),
              "train_flops_per_cnn2_sample": flops, "measured_bf16_matmul_flops_per_second": matmul,
              "rows": rows, "records": records}
    with open(os.path.join(out, "gpu.json"), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    def fmt(v, spec):
        return "n/a" if v is None else format(v, spec)
    md = ["# budgetsweep-trainer on a GPU", ""]
    if dry == "1":
        md += ["**Dry run on CPU** (BSW_GPU_DRY_RUN=1): checks the script; no figure here is a GPU "
               "result.", ""]
    md += [f"Reproduce: `bash bench/gpu/run.sh` on the accelerator machine ({seconds} s in all). "
           f"Device: {gpu}. Trainer: {version}.", "",
           f"cnn2 training FLOPs per sample (FlopCounterMode): {flops / 1e6:.1f} M; measured bf16 "
           f"matrix-product rate: {matmul / 1e12:.1f} TFLOP/s (spec dense peak "
           f"{H200_BF16_DENSE_PEAK / 1e12:.1f}).", "",
           "| case | samples/s | data wait | NVML utilization (gate 85%) | MFU of measured matmul "
           "| MFU of spec peak |", "|---|---|---|---|---|---|"]
    for r in rows:
        gate = "" if r["gate_met"] is None else (" met" if r["gate_met"] else " not met")
        md.append(f"| {r['case']} | {r['samples_per_second']:.0f} | "
                  f"{fmt(r['data_wait_ratio'], '.3f')} | {fmt(r['nvml_utilization'], '.0%')}{gate} | "
                  f"{fmt(r.get('mfu_of_measured_matmul'), '.2%')} | "
                  f"{fmt(r.get('mfu_of_spec_peak'), '.2%')} |")
    rate = {r["case"]: r["samples_per_second"] for r in rows}
    pairs = [(c, c.replace("bf16", "fp32")) for c in rate if "bf16" in c and c.replace("bf16", "fp32") in rate]
    md += [""] + [f"- {a}: bf16 at {rate[a] / rate[b]:.2f}x the fp32 rate." for a, b in pairs]
    ours = {c: v for c, v in rate.items() if c.startswith("ours cnn2")}
    for c, v in ours.items():
        peer = c.replace("ours", "pytorch")
        if peer in rate:
            md.append(f"- {c}: {v / rate[peer]:.2f}x PyTorch's rate with the same settings.")
    md.append("")
    with open(os.path.join(out, "gpu.md"), "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
