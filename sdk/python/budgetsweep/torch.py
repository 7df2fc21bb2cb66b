"""PyTorch helpers for the settings a sweep gives a trial: the loader settings the throughput
probe chose, mixed precision, gradient accumulation, warmup + cosine decay and linear LR scaling.

The only module of the SDK that imports torch. The semantics follow the C++ trainer
(trainer-image/README.md, "Behaviour"), so a Python trial and a C++ one read the same flags alike.
"""

import contextlib
import math
from typing import Any, ContextManager, Dict, Optional

import torch

from . import contract
from .trial import BadInput, Trial

_CPUINFO = "/proc/cpuinfo"


def _int_param(trial: Trial, name: str, default: int, minimum: int) -> int:
    value = trial.param(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise BadInput("--%s=%s: must be an integer of at least %d" % (name, value, minimum))
    return value


def loader_settings(trial: Trial, *, default_workers: int = 0, default_prefetch: int = 4,
                    device: Optional[torch.device] = None) -> Dict[str, Any]:
    """Keyword arguments for torch.utils.data.DataLoader from `--workers` and `--prefetch`:
    num_workers, pin_memory (on CUDA), persistent_workers (with workers) and prefetch_factor.

    `--prefetch` counts batches built ahead in all, as in the C++ trainer; DataLoader's
    prefetch_factor counts them per worker, so it becomes ceil(prefetch / workers).
    """
    workers = _int_param(trial, contract.FLAG_WORKERS, default_workers, 0)
    prefetch = _int_param(trial, contract.FLAG_PREFETCH, default_prefetch, 1)
    cuda = (device.type == "cuda") if device is not None else torch.cuda.is_available()
    settings: Dict[str, Any] = {"num_workers": workers, "pin_memory": cuda}
    if workers > 0:
        settings["persistent_workers"] = True
        settings["prefetch_factor"] = max(1, math.ceil(prefetch / workers))
    return settings


def batch_settings(trial: Trial, *, default_batch_size: int = 128) -> Dict[str, int]:
    """`--batch-size` (the micro-batch) and `--accumulation-steps` (micro-batches per optimizer
    step), as {"batch_size": B, "accumulation_steps": K}."""
    return {
        "batch_size": _int_param(trial, contract.FLAG_BATCH_SIZE, default_batch_size, 1),
        "accumulation_steps": _int_param(trial, contract.FLAG_ACCUMULATION_STEPS, 1, 1),
    }


def scaled_lr(trial: Trial, lr: float, *, default_batch_size: int = 128) -> float:
    """The peak learning rate after `--lr-scaling`: `lr` itself, or, when linear,
    lr x batch-size x accumulation-steps / reference-batch (the probe adds both flags when the
    micro-batch split it chose changes the effective batch)."""
    scaling = trial.param(contract.FLAG_LR_SCALING, "none")
    if scaling == "none":
        return lr
    if scaling != "linear":
        raise BadInput("--%s=%s: must be none or linear" % (contract.FLAG_LR_SCALING, scaling))
    batch = batch_settings(trial, default_batch_size=default_batch_size)
    reference = _int_param(trial, contract.FLAG_REFERENCE_BATCH, default_batch_size, 1)
    return lr * batch["batch_size"] * batch["accumulation_steps"] / reference


def _cpu_has_bf16() -> bool:
    try:
        with open(_CPUINFO) as cpuinfo:
            flags = cpuinfo.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolve_precision(precision: str, device: torch.device) -> str:
    """`auto` becomes bf16 where the hardware has it (compute capability 8+ on CUDA,
    AVX512-BF16/AMX on CPU), else fp16 on CUDA and fp32 on CPU. Raises BadInput for fp16 on CPU
    or an unknown name."""
    if precision == "auto":
        if device.type == "cuda":
            return "bf16" if torch.cuda.get_device_capability(device)[0] >= 8 else "fp16"
        return "bf16" if _cpu_has_bf16() else "fp32"
    if precision not in ("bf16", "fp16", "fp32"):
        raise BadInput("--precision=%s: must be auto, bf16, fp16 or fp32" % precision)
    if precision == "fp16" and device.type != "cuda":
        raise BadInput("--precision=fp16: CUDA only")
    return precision


def _grad_scaler() -> Any:
    """A CUDA GradScaler: torch.amp's where it has one (2.3 on), else torch.cuda.amp's."""
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


class Precision:
    """Autocast and, for fp16, dynamic loss scaling (GradScaler), chosen by `--precision`.

        precision = Precision.from_trial(trial, device)
        with precision.autocast():
            loss = criterion(model(x), y)
        precision.backward(loss)
        precision.step(optimizer)      # after the last micro-batch of an accumulation group
    """

    def __init__(self, precision: str, device: torch.device) -> None:
        self.name = resolve_precision(precision, device)
        self.device = device
        self.scaler: Optional[Any] = _grad_scaler() if self.name == "fp16" else None

    @classmethod
    def from_trial(cls, trial: Trial, device: torch.device, default: str = "auto") -> "Precision":
        """The precision `--precision` names (default `default`)."""
        return cls(str(trial.param(contract.FLAG_PRECISION, default)), device)

    def autocast(self) -> ContextManager[Any]:
        """The forward pass's context: autocast to bf16 or fp16, nothing for fp32."""
        if self.name == "fp32":
            return contextlib.nullcontext()
        dtype = torch.bfloat16 if self.name == "bf16" else torch.float16
        return torch.autocast(device_type=self.device.type, dtype=dtype)

    def backward(self, loss: torch.Tensor) -> None:
        """loss.backward(), scaled under fp16."""
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def step(self, optimizer: torch.optim.Optimizer) -> bool:
        """Applies the step and zeroes the gradients. Returns False when fp16 skipped it for
        non-finite gradients (the scale halves)."""
        stepped = True
        if self.scaler is not None:
            scale = self.scaler.get_scale()
            self.scaler.step(optimizer)
            self.scaler.update()
            stepped = self.scaler.get_scale() >= scale
        else:
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return stepped

    def state_dict(self) -> Dict[str, Any]:
        """The loss scaler's state, for the checkpoint (empty without fp16)."""
        return self.scaler.state_dict() if self.scaler is not None else {}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restores what state_dict returned."""
        if self.scaler is not None and state:
            self.scaler.load_state_dict(state)


class GradientAccumulation:
    """Groups an epoch's micro-batches into optimizer steps of `accumulation_steps` (the last
    group of an epoch may be shorter); each micro-batch's loss is divided by its group's size,
    so a group's gradient is the mean over its samples' batches, as in the C++ trainer."""

    def __init__(self, accumulation_steps: int, micro_batches_per_epoch: int) -> None:
        if accumulation_steps < 1 or micro_batches_per_epoch < 1:
            raise ValueError("accumulation_steps and micro_batches_per_epoch must be >= 1")
        self.accumulation_steps = accumulation_steps
        self.micro_batches_per_epoch = micro_batches_per_epoch

    @property
    def steps_per_epoch(self) -> int:
        """Optimizer steps per epoch: ceil(micro-batches / accumulation steps)."""
        return -(-self.micro_batches_per_epoch // self.accumulation_steps)

    def group_size(self, micro_batch: int) -> int:
        """The size of the group that micro-batch (0-based within the epoch) belongs to."""
        start = micro_batch - micro_batch % self.accumulation_steps
        return min(self.accumulation_steps, self.micro_batches_per_epoch - start)

    def scale(self, loss: torch.Tensor, micro_batch: int) -> torch.Tensor:
        """The loss to back-propagate for that micro-batch: loss / its group's size."""
        return loss / self.group_size(micro_batch)

    def ends_step(self, micro_batch: int) -> bool:
        """Whether the optimizer steps after that micro-batch."""
        start = micro_batch - micro_batch % self.accumulation_steps
        return micro_batch + 1 == start + self.group_size(micro_batch)


class WarmupCosine:
    """Linear warmup to `peak` over round(warmup_fraction x total_steps) steps, then cosine decay
    to floor_ratio x peak at the last step; step s (0-based) uses lr_at(s). The schedule spans
    all of max_resource, so a paused and resumed trial follows the uninterrupted one's."""

    def __init__(self, peak: float, total_steps: int, warmup_fraction: float = 0.05,
                 floor_ratio: float = 0.01) -> None:
        if not (peak > 0 and 0 <= warmup_fraction < 1 and 0 <= floor_ratio <= 1
                and total_steps >= 1):
            raise ValueError("need peak > 0, 0 <= warmup_fraction < 1, 0 <= floor_ratio <= 1, "
                             "total_steps >= 1")
        self.peak = peak
        self.floor = peak * floor_ratio
        # round half away from zero, as std::llround does
        self.warmup_steps = int(math.floor(warmup_fraction * total_steps + 0.5))
        self.total_steps = total_steps

    def lr_at(self, step: int) -> float:
        """The learning rate of optimizer step `step` (0-based)."""
        if step < self.warmup_steps:
            return self.peak * (step + 1) / self.warmup_steps
        decay_steps = self.total_steps - self.warmup_steps - 1
        if decay_steps <= 0:
            return self.peak
        progress = min(1.0, (step - self.warmup_steps) / decay_steps)
        return self.floor + (self.peak - self.floor) * 0.5 * (1.0 + math.cos(math.pi * progress))

    def apply(self, optimizer: torch.optim.Optimizer, step: int) -> float:
        """Sets every parameter group's lr for step `step` and returns it."""
        lr = self.lr_at(step)
        for group in optimizer.param_groups:
            group["lr"] = lr
        return lr
