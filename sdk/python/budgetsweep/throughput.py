"""Throughput as the contract reports it: samples per second of step time and the fraction of
that time spent waiting for data, per epoch or, in probe mode, over the probe's steps alone."""

import math
import time
from typing import Callable, Iterable, Iterator, Optional, TypeVar

from . import contract
from .metrics import MetricRegistry

T = TypeVar("T")


def probe_warmup_steps(prefetch: int, accumulation_steps: int) -> int:
    """Optimizer steps a probe trains before it measures, as the C++ trainer does:
    ceil((prefetch + 2) / accumulation_steps), so batches the loader built ahead during start-up
    do not hide a slow loader."""
    return math.ceil((prefetch + 2) / max(1, accumulation_steps))


class ThroughputMeter:
    """Times a training loop. Iterate the loader through `batches()` (the wait for each batch is
    data wait) and call `step()` after each micro-batch; step time runs from one step() to the
    next, waits included.

    Normal runs publish the figures of the current epoch as they go (call `reset()` at an epoch's
    start; `Trial.report` does). In probe mode (`probe_steps` > 0) the figures restart after
    `warmup_steps` optimizer steps, and after `probe_steps` more they are published with
    `budgetsweep_trainer_probe_measured_steps` and `probe_done` turns true.
    """

    def __init__(
        self,
        registry: Optional[MetricRegistry],
        probe_steps: int = 0,
        warmup_steps: int = 0,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._registry = registry
        self._probe_steps = probe_steps
        self._warmup_steps = warmup_steps
        self._clock = clock
        self._mark: Optional[float] = None
        self._optimizer_steps = 0
        self.probe_done = False
        self.reset()

    def reset(self) -> None:
        """Starts the figures afresh (a new epoch)."""
        self._samples = 0
        self._step_seconds = 0.0
        self._wait_seconds = 0.0
        self._mark = None

    def batches(self, iterable: Iterable[T]) -> Iterator[T]:
        """Yields the items of `iterable`, counting the time spent getting each as data wait."""
        iterator = iter(iterable)
        while True:
            start = self._clock()
            if self._mark is None:
                self._mark = start
            try:
                item = next(iterator)
            except StopIteration:
                self._mark = None  # what follows the epoch (evaluation) is not step time
                return
            self._wait_seconds += self._clock() - start
            yield item

    def step(self, samples: int, optimizer_step: bool = True) -> None:
        """Ends a micro-batch of `samples` samples; `optimizer_step`: it ended an optimizer step."""
        now = self._clock()
        if self._mark is not None:
            self._step_seconds += now - self._mark
        self._mark = now
        self._samples += samples
        if not optimizer_step:
            return
        self._optimizer_steps += 1
        if self._probe_steps <= 0:
            self._publish()
            return
        if self.probe_done:
            return
        if self._optimizer_steps == self._warmup_steps:
            self._samples, self._step_seconds, self._wait_seconds = 0, 0.0, 0.0
        elif self._optimizer_steps >= self._warmup_steps + self._probe_steps:
            self._publish()
            if self._registry is not None:
                self._registry.set(contract.METRIC_PROBE_MEASURED_STEPS, self._probe_steps)
            self.probe_done = True

    @property
    def samples_per_second(self) -> float:
        """Samples per second of step time since the last reset (0 before any step)."""
        return self._samples / self._step_seconds if self._step_seconds > 0 else 0.0

    @property
    def data_wait_ratio(self) -> float:
        """The fraction of step time spent waiting for data since the last reset."""
        if self._step_seconds <= 0:
            return 0.0
        return min(1.0, self._wait_seconds / self._step_seconds)

    def _publish(self) -> None:
        if self._registry is None or self._step_seconds <= 0:
            return
        self._registry.set(contract.METRIC_SAMPLES_PER_SECOND, self.samples_per_second)
        self._registry.set(contract.METRIC_DATA_WAIT_RATIO, self.data_wait_ratio)
