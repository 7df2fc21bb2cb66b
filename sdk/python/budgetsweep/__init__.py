"""budgetsweep: the trainer contract for a Python training loop.

A script that uses it joins a budgetsweep sweep (typed parameters, UNTIL, checkpoints, the
Prometheus series the operator reads, SIGTERM, PBT snapshots and exploits, probe mode), and runs
unchanged by hand with no sweep around. The core uses the standard library only;
`budgetsweep.torch` adds PyTorch helpers.
"""

from . import contract
from .checkpoint import Checkpoint, write_atomically
from .metrics import MetricRegistry, MetricServer, format_resource
from .throughput import ThroughputMeter, probe_warmup_steps
from .trial import BadInput, Diverged, Trial, TrialExit, flags_from_argv, parse_value

__version__ = "0.1.0"

__all__ = [
    "BadInput",
    "Checkpoint",
    "Diverged",
    "MetricRegistry",
    "MetricServer",
    "ThroughputMeter",
    "Trial",
    "TrialExit",
    "contract",
    "flags_from_argv",
    "format_resource",
    "parse_value",
    "probe_warmup_steps",
    "write_atomically",
]
