#!/usr/bin/env bash
# Makes (once) the virtual environment of lizard, the function-size check of scripts/check-lizard.py,
# and prints its directory. The version is pinned: another lizard may count lines or branches
# differently, and the allow-list (scripts/lizard-allow.txt) holds for this one. Cached under
# ~/.cache/budgetsweep keyed by the version.
set -euo pipefail

version=1.24.3
cache=${BSW_CACHE:-$HOME/.cache/budgetsweep}
venv=$cache/lizard-$version

mkdir -p "$cache"
exec 9>"$cache/lizard.lock"
flock 9  # the check and its self-test, run at once, build it once
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  echo "lizard-venv: installing lizard $version into $venv (once)" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check \
    "lizard==$version" >&2
  touch "$venv/.complete"
fi
echo "$venv"
