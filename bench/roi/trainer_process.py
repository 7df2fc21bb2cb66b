"""Runs one budgetsweep-trainer process for the Python peers and records it as a segment.

The peers see the trainer the way budgetsweep does: they read the validation accuracy of each
epoch from its Prometheus endpoint, polled every config.POLL_SECONDS, and stop it with SIGTERM.
Each process leaves two files in the run's segments/ folder: <id>.start.json when it starts and
<id>.json when it has been reaped (start and end time, parameters, the trainer's summary line).
A driver killed before it could write the second leaves the first and the trainer's log; the
collector then takes the log's last write as the end.

The peers get the same hard device-hour budget as budgetsweep's contenders (--budget-hours):
DeviceBudget sums the device time of those records, running processes up to now, so that Ray's
trial processes and its driver see the same figure. Once it is spent a running trainer is stopped,
as budgetsweep's deadline stops its trials, and the peer starts no new trial.
"""

import argparse
import glob
import json
import os
import re
import signal
import subprocess
import time
import urllib.request

import config

_OBJECTIVE = re.compile(
    r'^budgetsweep_trainer_objective\{([^}]*)\}\s+(\S+)', re.MULTILINE)


def _alive(pid):
    """Whether the process exists and has not exited (a zombie has exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class DeviceBudget:
    """The device time spent by the trainer processes recorded in a segments folder."""

    def __init__(self, segments_dir, hours):
        self.segments_dir = segments_dir
        self.seconds = hours * 3600
        self._ended = {}  # start record path -> seconds, for processes already reaped

    def spent_seconds(self):
        now, spent = time.time(), 0.0
        for path in glob.glob(os.path.join(self.segments_dir, "*.start.json")):
            if path in self._ended:
                spent += self._ended[path]
                continue
            end_path = path[:-len(".start.json")] + ".json"
            try:
                with open(path) as f:
                    record = json.load(f)
                if os.path.exists(end_path):
                    with open(end_path) as f:
                        self._ended[path] = max(0.0, json.load(f)["end"] - record["start"])
                elif not _alive(record["pid"]):
                    # Its driver died before recording the end (Ray ended the trial's actor):
                    # as in report.load_segments, the log's last write is the trainer's exit.
                    log = path[:-len(".start.json")] + ".log"
                    self._ended[path] = max(0.0, os.path.getmtime(log) - record["start"])
                else:
                    spent += max(0.0, now - record["start"])
                    continue
                spent += self._ended[path]
            except (OSError, ValueError):
                continue  # being renamed into place; it counts at the next look
        return spent

    def exhausted(self):
        return self.spent_seconds() >= self.seconds


def peer_setup(extra_flags=None):
    """The peers' command line (--trainer, --seed, --out, --budget-hours, and extra_flags: flag
    -> add_argument keywords): returns the arguments, the absolute trainer path and the run's
    DeviceBudget, which keeps its segment records in DIR/segments/ (created)."""
    extra_flags = extra_flags or {}
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-hours", type=float, required=True)
    for flag, kwargs in extra_flags.items():
        ap.add_argument(flag, **kwargs)
    args = ap.parse_args()
    segments = os.path.abspath(os.path.join(args.out, "segments"))
    os.makedirs(segments, exist_ok=True)
    return args, os.path.abspath(args.trainer), DeviceBudget(segments, args.budget_hours)


def _labels(text):
    return dict(re.findall(r'(\w+)="([^"]*)"', text))


def validation_accuracies(metrics_text):
    """Maps epoch -> validation accuracy from a Prometheus text exposition."""
    out = {}
    for labels, value in _OBJECTIVE.findall(metrics_text):
        lab = _labels(labels)
        if lab.get("metric") == "validation_accuracy":
            out[int(float(lab["resource"]))] = float(value)
    return out


class TrainerProcess:
    """One trainer run to the full resource; iterate epochs() and call stop() to prune."""

    def __init__(self, trainer, params, budget, segment_id, extra_args=()):
        """extra_args: further trainer flags (--until, --checkpoint-dir) after the parameters."""
        self.params = params
        self.budget = budget
        segments_dir = budget.segments_dir
        self.segment_id = segment_id
        self.segments_dir = segments_dir
        self.log_path = os.path.join(segments_dir, f"{segment_id}.log")
        # setpriv execs the trainer with a parent-death signal: it gets SIGTERM if the thread
        # that started it dies (e.g. when Ray kills a trial's actor). Its own session keeps it
        # out of signals sent to the driver's process group.
        argv = ["setpriv", "--pdeathsig", "TERM", "--"] + config.trainer_args(trainer) + [
            f"--epochs={config.size()['epochs']}",
            "--metrics-host=127.0.0.1",
            "--metrics-port=0",
        ] + [f"--{name}={value}" for name, value in params.items()] + list(extra_args)
        with open(self.log_path, "w") as log:
            self.start = time.time()
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        self._write("start", {"segment": segment_id, "params": params, "start": self.start,
                              "pid": self.proc.pid})
        self.stopped = False
        self.stop_sent = None
        self._summary_at_exit = None

    def _write(self, kind, record):
        name = f"{self.segment_id}.{kind}.json" if kind == "start" else f"{self.segment_id}.json"
        path = os.path.join(self.segments_dir, name)
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(path + ".tmp", path)

    def _metrics_url(self):
        with open(self.log_path) as f:
            m = re.search(r"serving metrics on ([\d.]+):(\d+)", f.read())
        return f"http://{m.group(1)}:{m.group(2)}/metrics" if m else None

    def epochs(self):
        """Yields (epoch, validation accuracy) as the trainer reports them, until it exits;
        stops the trainer once the budget is spent."""
        url, seen = None, set()
        while True:
            running = self.proc.poll() is None
            if running and not self.stopped and self.budget.exhausted():
                self.stop()
            url = url or self._metrics_url()
            values = {}
            if url:
                try:
                    with urllib.request.urlopen(url, timeout=2) as r:
                        values = validation_accuracies(r.read().decode())
                except OSError:
                    pass  # not serving yet, or already gone
            for epoch in sorted(set(values) - seen):
                seen.add(epoch)
                yield epoch, values[epoch]
            if not running:
                break
            time.sleep(config.POLL_SECONDS)
        # An epoch that ended too close to the exit to be scraped is still in the summary line.
        history = self._summary().get("validation_accuracy", [])
        for epoch, value in enumerate(history, start=1):
            if epoch not in seen:
                yield epoch, value

    def _summary(self):
        summary = {}
        with open(self.log_path) as f:
            for line in f:
                if line.startswith("{"):
                    summary = json.loads(line)
        return summary

    def stop(self):
        """Asks a running trainer to stop (it exits within its grace period)."""
        if self.proc.poll() is None:
            self.stopped = True
            self.stop_sent = time.time()
            self.proc.send_signal(signal.SIGTERM)

    def finish(self):
        """Reaps the trainer, records the segment, and returns the trainer's summary (or {})."""
        if self._summary_at_exit is not None:
            return self._summary_at_exit
        exit_code = self.proc.wait()
        end = time.time()
        summary = self._summary()
        self._write("end", {"segment": self.segment_id, "params": self.params,
                            "start": self.start, "end": end, "exit_code": exit_code,
                            "stopped": self.stopped, "stop_sent": self.stop_sent,
                            "summary": summary})
        self._summary_at_exit = summary
        return summary
