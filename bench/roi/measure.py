"""Runs one contender's command and measures the tool around its trainers.

    python3 measure.py --out DIR/run.json --name NAME --seed N [--timeout S] -- COMMAND...

It records the command's wall time (start to exit) and the CPU time of every process the command
starts, trainers included; report.py subtracts the trainers' own CPU time (their summary lines).
The CPU time comes from a cgroup-v1 cpuacct group made for the run, which counts every
descendant however it detaches or is reaped (Ray's raylet reaps its workers without passing their
usage up). Where no cpuacct hierarchy can be written, it falls back to RUSAGE_CHILDREN, which
misses such processes, and says so in the record. It is also a child subreaper, so that it can
wait for (and at last kill) processes the command leaves behind. With --timeout, a command that
has not exited by then gets SIGTERM, and the record says it timed out.
"""

import argparse
import ctypes
import json
import os
import resource
import signal
import subprocess
import time

_PR_SET_CHILD_SUBREAPER = 36
_CPUACCT = "/sys/fs/cgroup/cpuacct"


def make_cgroup(name):
    """A fresh cpuacct group, or None when this machine has no writable cpuacct hierarchy."""
    path = os.path.join(_CPUACCT, "bsw-roi", f"{name}-{os.getpid()}")
    try:
        os.makedirs(path)
        return path
    except OSError:
        return None


def join_cgroup(path):
    with open(os.path.join(path, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))


def cgroup_cpu_seconds(path):
    with open(os.path.join(path, "cpuacct.usage")) as f:
        return int(f.read()) / 1e9


def children(pid):
    """Pids whose parent is `pid`."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def reap_leftovers(grace_seconds):
    """Waits for processes left behind by the command, then SIGKILLs those still there."""
    deadline = time.monotonic() + grace_seconds
    left = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return left
        if pid == 0 and time.monotonic() > deadline:
            for child in children(os.getpid()):
                left.append(child)
                os.kill(child, signal.SIGKILL)
            deadline = float("inf")
        elif pid == 0:
            time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds after which the command gets SIGTERM (and SIGKILL 30 s later)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    cgroup = make_cgroup(f"{args.name}-s{args.seed}")
    start = time.time()
    # join_cgroup runs in the child before exec; this process has no other thread.
    proc = subprocess.Popen(command, preexec_fn=(lambda: join_cgroup(cgroup)) if cgroup else None)
    timed_out = False
    try:
        exit_code = proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.terminate()
        try:
            exit_code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            exit_code = proc.wait()
    end = time.time()
    killed = reap_leftovers(grace_seconds=30)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    rusage_cpu = usage.ru_utime + usage.ru_stime
    tree_cpu = cgroup_cpu_seconds(cgroup) if cgroup else rusage_cpu
    if cgroup:
        try:
            os.rmdir(cgroup)
        except OSError:
            pass  # a process outlived the command and its killing; the group stays behind
    record = {
        "contender": args.name,
        "seed": args.seed,
        "command": command,
        "exit_code": exit_code,
        "timed_out": timed_out,
        "start": start,
        "end": end,
        "wall_seconds": end - start,
        "tree_cpu_seconds": tree_cpu,
        "cpu_source": "cgroup cpuacct" if cgroup else "RUSAGE_CHILDREN",
        "rusage_children_cpu_seconds": rusage_cpu,
        "leftover_processes_killed": len(killed),
    }
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)
    print(f"{args.name} seed {args.seed}: exit {exit_code}, {end - start:.1f} s wall"
          + (f" (timed out after {args.timeout:g} s)" if timed_out else ""))


if __name__ == "__main__":
    main()
