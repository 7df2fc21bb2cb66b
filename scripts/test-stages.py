#!/usr/bin/env python3
"""Where the time of a `make test` went, from its log.

Usage: scripts/test-stages.py LOG [--slowest N]

The Makefile's stages print `== stage NAME SECONDS` when they begin; a stage lasts until the
next one begins. The slowest tests come from ctest's result lines (`Test #N: NAME ... Passed
12.34 sec`), each tree's run counted where it ran (the main tree, ASan, TSan, LibTorch 2.x).
"""
import argparse
import re
import sys

STAGE = re.compile(r"^== stage (\S+) (\d+)$")
RESULT = re.compile(r"Test +#\d+: (\S+) \.*\s+(Passed|\*+Failed|Failed)\s+([\d.]+) sec")


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {int(seconds % 60):2d} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--slowest", type=int, default=10)
    args = parser.parse_args()
    stages: list[tuple[str, int]] = []
    tests: list[tuple[float, str, str]] = []
    stage = "before the first stage"
    with open(args.log, errors="replace") as log:
        for line in log:
            line = line.rstrip("\n")
            if match := STAGE.match(line):
                stage = match.group(1)
                stages.append((stage, int(match.group(2))))
            elif match := RESULT.search(line):
                tests.append((float(match.group(3)), match.group(1), stage))
    if len(stages) < 2:
        print(f"{args.log}: fewer than two '== stage' lines; is it a make test log?", file=sys.stderr)
        return 2
    totals: dict[str, int] = {}
    for (name, begun), (_, ended) in zip(stages, stages[1:]):
        totals[name] = totals.get(name, 0) + ended - begun
    width = max(len(name) for name in totals)
    for name, seconds in totals.items():
        print(f"{name:<{width}}  {minutes(seconds)}")
    print(f"{'total':<{width}}  {minutes(stages[-1][1] - stages[0][1])}"
          + ("" if stages[-1][0] == "end" else " (no end stage: the run stopped early)"))
    if tests and args.slowest > 0:
        print(f"\nslowest tests (of {len(tests)}):")
        for seconds, name, where in sorted(tests, reverse=True)[: args.slowest]:
            print(f"  {seconds:8.1f} s  {name}  ({where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
