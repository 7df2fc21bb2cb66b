"""Shared helpers: a contract environment and a Prometheus text parser."""

import re
import urllib.request
from typing import Dict, List, Tuple

Sample = Tuple[str, Dict[str, str], float]

_LINE = re.compile(r"^(\w+)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse_exposition(text: str) -> List[Sample]:
    """The samples of a text exposition: (name, labels, value)."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _LINE.match(line)
        assert match, "malformed line %r" % line
        labels = dict(_LABEL.findall(match.group(2) or ""))
        samples.append((match.group(1), labels, float(match.group(3))))
    return samples


def scrape(port: int) -> List[Sample]:
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as response:
        assert response.status == 200
        return parse_exposition(response.read().decode("utf-8"))


def contract_env(**overrides: str) -> Dict[str, str]:
    env = {
        "BUDGETSWEEP_SWEEP": "fmnist",
        "BUDGETSWEEP_TRIAL": "fmnist-t0003",
        "BUDGETSWEEP_PARAMS": '{"lr": 0.003, "batch-size": 64, "optimizer": "adamw"}',
        "BUDGETSWEEP_MILESTONES": "1,3,9",
        "BUDGETSWEEP_UNTIL": "3",
        "BUDGETSWEEP_MAX_RESOURCE": "9",
        "BUDGETSWEEP_METRICS_HOST": "127.0.0.1",
        "BUDGETSWEEP_METRICS_PORT": "0",
    }
    env.update(overrides)
    return env
