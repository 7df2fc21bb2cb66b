#!/usr/bin/env python3
"""Checks that no function in operator/ is over 60 lines or cyclomatic complexity 15, as lizard
counts them (`lizard -l cpp -L 60 -C 15`, the version of scripts/lizard-venv.sh), unless the
allow-list names it (docs/testing.md, "Function size").

The allow-list (scripts/lizard-allow.txt) has one entry a line, `FILE:FUNCTION  # REASON`, with
FILE relative to the repository and FUNCTION as lizard names it; `#` starts a comment elsewhere.
Fails, naming each, on a function over the limits that the list does not name, on an entry that
names no function over the limits (the list only shrinks), and on an entry without a reason.

--write-allow-list rewrites the list to the functions over the limits now: each keeps its reason,
a new one gets --reason, and entries for functions no longer over the limits go.

usage: check-lizard.py [--root DIR] [--allow-list FILE] [--lizard PROGRAM]
                       [--write-allow-list [--reason TEXT]]
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

MAX_LENGTH = 60
MAX_CCN = 15
CHECKED = "operator"
SCRIPTS = Path(__file__).resolve().parent
WARNING = re.compile(r"^(?P<file>.+?):(?P<line>\d+): warning: (?P<function>.+) has \d+ NLOC, "
                     r"(?P<ccn>\d+) CCN, \d+ token, \d+ PARAM, (?P<length>\d+) length")
HEADER = """\
# Functions in operator/ allowed over lizard's limits (60 lines, cyclomatic complexity 15),
# one a line: FILE:FUNCTION  # why it stays whole. The list is for table-like registrations;
# "not split yet (issue 38)" marks a function still to be split. scripts/check-lizard.py fails on
# an entry whose function is within the limits, so the list only shrinks. Rewritten, keeping the
# reasons, by: python3 scripts/check-lizard.py --write-allow-list
"""


def offenders(lizard, root):
    """Returns {"FILE:FUNCTION": ["FILE:LINE: FUNCTION: N lines, cyclomatic complexity C", ...]}
    for every function under root/operator over the limits (overloads share a key)."""
    result = subprocess.run([lizard, "-l", "cpp", "-L", str(MAX_LENGTH), "-C", str(MAX_CCN), "-w",
                             CHECKED], cwd=root, capture_output=True, text=True, check=False)
    if result.returncode not in (0, 1) or result.stderr.strip():
        sys.exit(f"check-lizard: {lizard} failed ({result.returncode}): {result.stderr.strip()}")
    found = {}
    for line in result.stdout.splitlines():
        match = WARNING.match(line)
        if not match:
            sys.exit(f"check-lizard: cannot read lizard's line: {line}")
        key = f"{match['file']}:{match['function']}"
        found.setdefault(key, []).append(
            f"{match['file']}:{match['line']}: {match['function']}: {match['length']} lines, "
            f"cyclomatic complexity {match['ccn']}")
    return found


def read_allow_list(path):
    """Returns ({"FILE:FUNCTION": (line number, reason)}, problems)."""
    entries, problems = {}, []
    if not path.exists():
        return entries, problems
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        key, _, reason = line.partition("#")
        key, reason = key.strip(), reason.strip()
        if not key:
            continue
        if not reason:
            problems.append(f"{path}:{number}: {key}: no reason (FILE:FUNCTION  # REASON)")
        elif key in entries:
            problems.append(f"{path}:{number}: {key}: listed twice")
        entries[key] = (number, reason)
    return entries, problems


def write_allow_list(path, found, entries, reason):
    lines = [f"{key}  # {entries.get(key, (0, ''))[1] or reason}" for key in sorted(found)]
    path.write_text(HEADER + "".join(line + "\n" for line in lines), encoding="utf-8")
    kept = sum(key in entries for key in found)
    print(f"check-lizard: wrote {path}: {len(found)} entries ({kept} kept, {len(found) - kept} "
          f"new, {len(set(entries) - set(found))} removed)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=SCRIPTS.parent)
    parser.add_argument("--allow-list", type=Path)
    parser.add_argument("--lizard", help="the lizard program (default: scripts/lizard-venv.sh's)")
    parser.add_argument("--write-allow-list", action="store_true")
    parser.add_argument("--reason", default="not split yet (issue 38)",
                        help="the reason --write-allow-list gives a function not listed yet")
    args = parser.parse_args()
    allow_list = args.allow_list or args.root / "scripts" / "lizard-allow.txt"
    if not os.path.relpath(allow_list).startswith(".."):
        allow_list = Path(os.path.relpath(allow_list))  # as messages name it
    if args.lizard:
        lizard = args.lizard
    else:
        venv = subprocess.run([SCRIPTS / "lizard-venv.sh"], stdout=subprocess.PIPE, text=True,
                              check=True).stdout.strip()
        lizard = str(Path(venv, "bin", "lizard"))

    found = offenders(lizard, args.root)
    entries, problems = read_allow_list(allow_list)
    if args.write_allow_list:
        write_allow_list(allow_list, found, entries, args.reason)
        return 0
    unlisted = sorted(set(found) - set(entries))
    problems += [f"{place}: not in {allow_list}" for key in unlisted for place in found[key]]
    problems += [f"{allow_list}:{entries[key][0]}: {key}: within the limits now (or gone), remove "
                 "the entry" for key in sorted(set(entries) - set(found))]
    for problem in problems:
        print(problem)
    print(f"check-lizard: {len(found)} functions in {CHECKED}/ over {MAX_LENGTH} lines or "
          f"cyclomatic complexity {MAX_CCN}, {len(found) - len(unlisted)} of them allowed")
    if unlisted:
        print(f"check-lizard: split each function not listed, or add FILE:FUNCTION  # REASON to "
              f"{allow_list}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
