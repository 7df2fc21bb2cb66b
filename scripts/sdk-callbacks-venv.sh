#!/usr/bin/env bash
# Makes (once) the virtual environment the Python SDK's Hugging Face and Lightning callbacks are
# tested in (sdk_callbacks_test), and prints its directory. It layers the pinned frameworks of
# sdk/python/tests/requirements-callbacks.txt over the torch wheel's environment
# (scripts/torch-wheel.sh, built there once) through a .pth file, so torch is not fetched again.
# Cached under ~/.cache/budgetsweep keyed by the requirements file and the torch environment.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements=sdk/python/tests/requirements-callbacks.txt
cache=${BSW_CACHE:-$HOME/.cache/budgetsweep}
torch_venv=$(scripts/torch-wheel.sh)
torch_version=$("$torch_venv/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))')
key=$( (cat "$requirements"; echo "$torch_venv torch==$torch_version") | sha256sum | cut -c1-16)
venv=$cache/sdk-callbacks-$key

mkdir -p "$cache"
exec 9>"$cache/sdk-callbacks.lock"
flock 9  # two test runs at once build it once
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  echo "sdk-callbacks-venv: installing $requirements over torch $torch_version into $venv (once)" >&2
  python3 -m venv "$venv"
  purelib='import sysconfig; print(sysconfig.get_paths()["purelib"])'
  "$torch_venv/bin/python" -c "$purelib" >"$("$venv/bin/python" -c "$purelib")/budgetsweep-torch.pth"
  "$venv/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check \
    "torch==$torch_version" -r "$requirements" >&2
  "$venv/bin/python" -m pip check --disable-pip-version-check >&2
  touch "$venv/.complete"
fi
echo "$venv"
