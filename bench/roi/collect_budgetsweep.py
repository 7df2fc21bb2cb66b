"""Turns a `budgetsweep run --state-dir` folder into the benchmark's segment records.

    python3 collect_budgetsweep.py STATE_DIR SEGMENTS_DIR

One record per trial segment (a start or resume of a trainer process): its supervisor's start and
finish times (status.json), the parameters (appended to the trainer's argv in launch.json) and
the trainer's summary line (trainer.log), in the format trainer_process.py writes for the peers.
"""

import glob
import json
import os
import sys

import config


def params_from_argv(argv):
    params = {}
    for arg in argv:
        name, _, value = arg[2:].partition("=")
        if arg.startswith("--") and name in config.space():
            params[name] = json.loads(value)
    return params


def summary_from_log(path):
    summary = {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("{"):
                summary = json.loads(line)
    return summary


def collect(state_dir, segments_dir):
    os.makedirs(segments_dir, exist_ok=True)
    for seg_dir in sorted(glob.glob(os.path.join(state_dir, "trials", "*", "seg-*"))):
        with open(os.path.join(seg_dir, "launch.json")) as f:
            launch = json.load(f)
        with open(os.path.join(seg_dir, "status.json")) as f:
            status = json.load(f)
        segment_id = f"{launch['trial']}-seg{launch['segment']}"
        record = {
            "segment": segment_id,
            "params": params_from_argv(launch["argv"]),
            "start": status["started_unix_seconds"],
            "end": status["finished_unix_seconds"],
            "exit_code": status.get("exit_code"),
            "stopped": status.get("reason") == "Stopped",
            "summary": summary_from_log(os.path.join(seg_dir, "trainer.log")),
        }
        with open(os.path.join(segments_dir, segment_id + ".json"), "w") as f:
            json.dump(record, f)


if __name__ == "__main__":
    collect(sys.argv[1], sys.argv[2])
