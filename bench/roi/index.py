"""Writes PREFIX.md, the ROI benchmark's page for both tasks, from PREFIX-easy.json and
PREFIX-hard.json (report.py's results): each task's setup, table, anytime curve and verdicts, and a
link to its full report. run.sh calls it after every full-size run.

    python index.py --prefix bench/results/roi
"""

import argparse
import json
import os

import config
import report


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", required=True)
    args = ap.parse_args()
    base = os.path.basename(args.prefix)
    lines = [
        "# ROI benchmark: device-hours to the grid's answer",
        "",
        "Both tasks of `bench/roi` (bench/roi/README.md): each contender gets a share of the "
        "grid's device-hours as a hard budget, and the question is how much of it it spends to "
        "reach the grid's best test accuracy, and where it ends. Each section below is the head "
        "of its task's full report, which adds how to read it, the definitions, the setup and "
        "the notes from the run.",
    ]
    for task in config.TASKS:
        path = f"{args.prefix}-{task}.json"
        lines += ["", f"## The {task} task", ""]
        if not os.path.exists(path):
            lines.append(f"Not run yet: `ROI_TASK={task} bench/roi/run.sh` writes {path}.")
            continue
        with open(path) as f:
            r = json.load(f)
        lines += report.overview(r, f"{base}-{task}.png", "###") + [
            "",
            f"Full report: [{base}-{task}.md]({base}-{task}.md); reproduce with `{r['command']}`.",
        ]
    with open(args.prefix + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
