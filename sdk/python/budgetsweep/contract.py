"""The trainer contract's names, as the operator uses them.

docs/design.md ("Trainer contract") and docs/trainer-contract.md describe the contract;
the names come from contract/trainer_contract.h and the exit codes from
contract/trainer_exit_codes.h. tests/test_contract.py reads those headers, and the C++ sources that
use them, and fails when this module drifts from them.
"""

from typing import Tuple

# The environment every backend gives a trial.
ENV_SWEEP = "BUDGETSWEEP_SWEEP"
ENV_TRIAL = "BUDGETSWEEP_TRIAL"
ENV_PARAMS = "BUDGETSWEEP_PARAMS"  # a JSON object; values that read as numbers are numbers
ENV_MILESTONES = "BUDGETSWEEP_MILESTONES"  # the rungs, comma-separated
ENV_UNTIL = "BUDGETSWEEP_UNTIL"  # train to this resource, checkpoint, exit 0
ENV_MAX_RESOURCE = "BUDGETSWEEP_MAX_RESOURCE"  # the length of the learning-rate schedule
ENV_CHECKPOINT_DIR = "BUDGETSWEEP_CHECKPOINT_DIR"
ENV_METRICS_HOST = "BUDGETSWEEP_METRICS_HOST"  # set by the backend, not by TrialContractEnv
ENV_METRICS_PORT = "BUDGETSWEEP_METRICS_PORT"
# The trial's own directory, where a File collector's path lies (spec.metrics.collector): the
# backends set it beside the contract, for budgetsweep-collect.
ENV_TRIAL_DIR = "BUDGETSWEEP_TRIAL_DIR"
# pbt and pb2 only.
ENV_SNAPSHOTS = "BUDGETSWEEP_SNAPSHOTS"  # "1": keep a snapshot of the checkpoint at UNTIL
ENV_MUTABLE = "BUDGETSWEEP_MUTABLE"  # the flags that may differ from a snapshot's, comma-separated
ENV_EXPLOIT_DIR = "BUDGETSWEEP_EXPLOIT_DIR"  # the donor's checkpoint directory
ENV_EXPLOIT_AT = "BUDGETSWEEP_EXPLOIT_AT"  # the resource of the donor's snapshot

CONTRACT_ENV: Tuple[str, ...] = (
    ENV_SWEEP,
    ENV_TRIAL,
    ENV_PARAMS,
    ENV_MILESTONES,
    ENV_UNTIL,
    ENV_MAX_RESOURCE,
    ENV_CHECKPOINT_DIR,
    ENV_METRICS_HOST,
    ENV_METRICS_PORT,
    ENV_SNAPSHOTS,
    ENV_MUTABLE,
    ENV_EXPLOIT_DIR,
    ENV_EXPLOIT_AT,
)

# Exit codes (contract/trainer_exit_codes.h).
EXIT_OK = 0  # finished, reached UNTIL, or stopped and checkpointed
EXIT_INTERNAL = 1  # anything else (e.g. a checkpoint that cannot be written)
EXIT_BAD_INPUT = 2  # bad flag, dataset or file
EXIT_DIVERGED = 3  # NaN/inf training loss

# The series the operator reads (every one carries the labels `sweep` and `trial`).
METRIC_PREFIX = "budgetsweep_trainer_"
METRIC_OBJECTIVE = "budgetsweep_trainer_objective"  # labels `metric` and `resource`
METRIC_RESOURCE_COMPLETED = "budgetsweep_trainer_resource_completed"
METRIC_LOSS = "budgetsweep_trainer_loss"
METRIC_SAMPLES_PER_SECOND = "budgetsweep_trainer_samples_per_second"
METRIC_DATA_WAIT_RATIO = "budgetsweep_trainer_data_wait_ratio"
METRIC_ACCELERATOR_UTILIZATION_RATIO = "budgetsweep_trainer_accelerator_utilization_ratio"
METRIC_PROBE_MEASURED_STEPS = "budgetsweep_trainer_probe_measured_steps"
# Exposed for dashboards; the operator reads a divergence from the exit code.
METRIC_DIVERGED = "budgetsweep_trainer_diverged"
METRIC_LEARNING_RATE = "budgetsweep_trainer_learning_rate"

LABEL_SWEEP = "sweep"
LABEL_TRIAL = "trial"
LABEL_METRIC = "metric"
LABEL_RESOURCE = "resource"

# The flags the throughput probe (spec.throughput) adds to a trial's arguments: the candidate's
# loader and precision settings, then, for a probe run, its length and linger.
FLAG_WORKERS = "workers"
FLAG_PREFETCH = "prefetch"
FLAG_PRECISION = "precision"
FLAG_BATCH_SIZE = "batch-size"
FLAG_ACCUMULATION_STEPS = "accumulation-steps"
FLAG_LR_SCALING = "lr-scaling"  # "linear" when the chosen micro-batch changes the effective batch
FLAG_REFERENCE_BATCH = "reference-batch"
FLAG_PROBE_STEPS = "probe-steps"
FLAG_LINGER_SECONDS = "linger-seconds"
