"""One trial of a sweep, as the user's own training loop sees it."""

import json
import math
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar

from . import checkpoint as ckpt
from . import contract
from .metrics import MetricRegistry, MetricServer, format_resource
from .throughput import ThroughputMeter, probe_warmup_steps

T = TypeVar("T")

_DEFAULT_PREFETCH = 4  # the C++ trainer's --prefetch default, which the probe's warm-up assumes
_TERMINATION_LOG = "/dev/termination-log"


class TrialExit(SystemExit):
    """Ends the trial with one of the contract's exit codes; the message is its last stderr line.

    A SystemExit, so that an uncaught one exits with its code and no traceback, and an
    `except Exception` in the training loop does not swallow it.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code)
        self.message = message


class BadInput(TrialExit):
    """A malformed contract variable, parameter or checkpoint: exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__(contract.EXIT_BAD_INPUT, message)


class Diverged(TrialExit):
    """The training loss became NaN or infinite: exit 3, which the sweep records as Diverged and
    does not retry."""

    def __init__(self, message: str) -> None:
        super().__init__(contract.EXIT_DIVERGED, message)


def parse_value(text: str) -> Any:
    """A flag's value typed as the operator types BUDGETSWEEP_PARAMS: an integer, else a finite
    number, else the text."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def flags_from_argv(argv: Sequence[str]) -> Dict[str, Any]:
    """The `--name=value` arguments, typed; the last of a repeated flag wins, as in the trainer.
    Other arguments are left to the script's own parser."""
    flags: Dict[str, Any] = {}
    for arg in argv:
        if arg.startswith("--") and "=" in arg[3:]:
            name, value = arg[2:].split("=", 1)
            flags[name] = parse_value(value)
    return flags


def _number(value: float) -> float:
    """An integral number as an int (so range(trial.until) works), else the float."""
    return int(value) if float(value).is_integer() else value


class Trial:
    """A trial's view of the contract: its parameters, how far to train, where to checkpoint and
    serve metrics, and the stop request.

    Without a sweep around (no BUDGETSWEEP_* environment) every setting has a default, so the
    same script runs by hand: it trains to `max_resource`, checkpoints only into `checkpoint_dir`
    if one is given, and serves no metrics.

    Use it as a context manager: entering starts the metrics endpoint and the SIGTERM handler;
    leaving keeps the last values served for the linger period (cut short by SIGTERM) and turns a
    TrialExit into its exit code.
    """

    def __init__(
        self,
        *,
        max_resource: float = 1,
        checkpoint_dir: Optional[str] = None,
        checkpoint_name: str = "checkpoint.pkl",
        linger_seconds: float = 1.0,
        argv: Optional[Sequence[str]] = None,
        environ: Optional[Mapping[str, str]] = None,
        handle_signals: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Reads the contract from `environ` (os.environ) and `argv` (sys.argv[1:]).

        max_resource, checkpoint_dir: the defaults when the environment does not set them.
        checkpoint_name: the checkpoint's file name; a snapshot is `snapshot-<resource>` with the
        same extension. linger_seconds: how long finish() keeps serving the last values (the
        `--linger-seconds` flag a probe run gets wins). Raises BadInput on malformed input.
        """
        try:
            self._read_contract(max_resource, checkpoint_dir, linger_seconds, argv, environ)
        except TrialExit as e:
            self._die(e)
            raise
        self._handle_signals = handle_signals
        self._clock = clock
        self.checkpoint_name = checkpoint_name
        self.registry = MetricRegistry(self.sweep, self.name)
        self.meter = ThroughputMeter(
            self.registry,
            probe_steps=self.probe_steps,
            warmup_steps=self._probe_warmup_steps,
        )
        self.resumed_from: float = 0  # the resource of the checkpoint load_checkpoint returned
        self._origin = ""
        self._server: Optional[MetricServer] = None
        self._stop = threading.Event()
        self._previous_handlers: Dict[int, Any] = {}
        self._finished = False

    def _read_contract(
        self,
        max_resource: float,
        checkpoint_dir: Optional[str],
        linger_seconds: float,
        argv: Optional[Sequence[str]],
        environ: Optional[Mapping[str, str]],
    ) -> None:
        env = dict(os.environ if environ is None else environ)
        self._env = {k: v for k, v in env.items() if v != ""}  # empty counts as unset
        self._argv = list(sys.argv[1:] if argv is None else argv)

        self.sweep: str = self._env.get(contract.ENV_SWEEP, "")
        self.name: str = self._env.get(contract.ENV_TRIAL, "")
        self.contract_params: Dict[str, Any] = self._read_params()
        flags = flags_from_argv(self._argv)
        # The flags carry the probe's settings besides the parameters; the JSON types the latter.
        self.params: Dict[str, Any] = {**flags, **self.contract_params}
        self.milestones: List[float] = [
            _number(self._float(contract.ENV_MILESTONES, text))
            for text in self._env.get(contract.ENV_MILESTONES, "").split(",")
            if text.strip()
        ]
        self.max_resource: float = _number(
            self._float(contract.ENV_MAX_RESOURCE, self._env.get(contract.ENV_MAX_RESOURCE))
            if contract.ENV_MAX_RESOURCE in self._env
            else max_resource
        )
        until = (
            self._float(contract.ENV_UNTIL, self._env[contract.ENV_UNTIL])
            if contract.ENV_UNTIL in self._env
            else self.max_resource
        )
        self.until: float = _number(min(until, self.max_resource))
        self.checkpoint_dir: Optional[str] = self._env.get(
            contract.ENV_CHECKPOINT_DIR, checkpoint_dir
        )
        self.metrics_host: str = self._env.get(contract.ENV_METRICS_HOST, "127.0.0.1")
        port_text = self._env.get(contract.ENV_METRICS_PORT)
        self.metrics_port: Optional[int] = (
            None if port_text is None else int(self._float(contract.ENV_METRICS_PORT, port_text))
        )
        self.snapshots: bool = self._env.get(contract.ENV_SNAPSHOTS) == "1"
        self.mutable: frozenset = frozenset(
            f.strip() for f in self._env.get(contract.ENV_MUTABLE, "").split(",") if f.strip()
        )
        self.exploit_dir: Optional[str] = self._env.get(contract.ENV_EXPLOIT_DIR)
        self._exploit_at_text = self._env.get(contract.ENV_EXPLOIT_AT, "")
        self.exploit_at: Optional[float] = None
        if self.exploit_dir is not None:
            self.exploit_at = _number(self._float(contract.ENV_EXPLOIT_AT, self._exploit_at_text))
        self.probe_steps: int = int(self._flag_number(flags, contract.FLAG_PROBE_STEPS, 0))
        self.linger_seconds: float = self._flag_number(
            flags, contract.FLAG_LINGER_SECONDS, linger_seconds
        )
        self._probe_warmup_steps = probe_warmup_steps(
            int(self._flag_number(self.params, contract.FLAG_PREFETCH, _DEFAULT_PREFETCH)),
            int(self._flag_number(self.params, contract.FLAG_ACCUMULATION_STEPS, 1)),
        )

    # ---- the contract's input

    def _read_params(self) -> Dict[str, Any]:
        text = self._env.get(contract.ENV_PARAMS)
        if text is None:
            return {}
        try:
            params = json.loads(text)
        except ValueError as e:
            raise BadInput("%s is not JSON: %s" % (contract.ENV_PARAMS, e)) from None
        if not isinstance(params, dict):
            raise BadInput("%s is not a JSON object" % contract.ENV_PARAMS)
        return params

    @staticmethod
    def _float(name: str, text: Optional[str]) -> float:
        try:
            value = float(text if text is not None else "")
        except ValueError:
            raise BadInput("%s=%r is not a number" % (name, text)) from None
        if not math.isfinite(value):
            raise BadInput("%s=%r is not a finite number" % (name, text))
        return value

    @staticmethod
    def _flag_number(flags: Mapping[str, Any], name: str, default: float) -> float:
        value = flags.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadInput("--%s=%s: not a number" % (name, value))
        return value

    def param(
        self, name: str, default: Optional[T] = None, type: Optional[Callable[[Any], T]] = None
    ) -> Any:
        """The parameter `name` (a `--name=value` flag or a key of BUDGETSWEEP_PARAMS), or
        `default`; converted with `type` when given. Raises BadInput naming the flag when the
        conversion fails."""
        if name not in self.params:
            return default
        value = self.params[name]
        if type is None:
            return value
        try:
            return type(value)
        except (TypeError, ValueError) as e:
            raise BadInput("--%s=%s: %s" % (name, value, e)) from None

    @property
    def probing(self) -> bool:
        """Probe mode (`--probe-steps`): measure throughput only; no evaluation, no checkpoint."""
        return self.probe_steps > 0

    @property
    def probe_done(self) -> bool:
        """In probe mode: the probe's steps are measured and published; the loop should end."""
        return self.meter.probe_done

    @property
    def should_stop(self) -> bool:
        """True once SIGTERM or SIGINT arrived, or a probe run measured its steps: checkpoint (a
        probe's save_checkpoint does nothing) and leave the loop; the process exits 0."""
        return self._stop.is_set() or self.meter.probe_done

    def should_train(self, resource: float) -> bool:
        """Whether the loop, `resource` units done, trains another: not once should_stop, and
        only up to `until`, except in probe mode, which crosses epochs until it has measured."""
        return not self.should_stop and (resource < self.until or self.probing)

    def request_stop(self) -> None:
        """What the signal handler does; also for tests and for loops with their own signals."""
        self._stop.set()

    # ---- life cycle

    def start(self) -> "Trial":
        """Installs the stop handler (main thread only) and serves metrics when the environment
        names a port. Idempotent. Raises BadInput when the port cannot be bound."""
        if self._handle_signals and not self._previous_handlers:
            if threading.current_thread() is threading.main_thread():
                for signum in (signal.SIGTERM, signal.SIGINT):
                    self._previous_handlers[signum] = signal.signal(
                        signum, lambda *_: self.request_stop()
                    )
        if self._server is None and self.metrics_port is not None:
            try:
                self._server = MetricServer(self.registry, self.metrics_host, self.metrics_port)
            except OSError as e:
                raise BadInput(
                    "cannot serve metrics on %s:%d: %s" % (self.metrics_host, self.metrics_port, e)
                ) from None
            if self.metrics_port == 0:  # as the C++ trainer does: say which port it got
                print("budgetsweep: serving metrics on %s:%d" % (self.metrics_host,
                                                                  self._server.port), flush=True)
        self.registry.set(contract.METRIC_DIVERGED, 0)
        return self

    @property
    def served_port(self) -> Optional[int]:
        """The port the metrics endpoint bound (differs from metrics_port when that is 0)."""
        return None if self._server is None else self._server.port

    def finish(self) -> None:
        """Keeps serving the last values for `linger_seconds` (none once a stop was requested),
        then stops serving and restores the signal handlers. Idempotent."""
        if self._finished:
            return
        self._finished = True
        if self._server is not None:
            end = self._clock() + self.linger_seconds
            while not self._stop.is_set() and self._clock() < end:
                self._stop.wait(min(0.05, max(0.0, end - self._clock())))
            self._server.close()
            self._server = None
        for signum, handler in self._previous_handlers.items():
            signal.signal(signum, handler)
        self._previous_handlers.clear()

    def __enter__(self) -> "Trial":
        try:
            return self.start()
        except TrialExit as e:
            self._die(e)
            raise

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.finish()
        if isinstance(exc, TrialExit):
            self._die(exc)

    @staticmethod
    def _die(exc: TrialExit) -> None:
        line = "budgetsweep: %s" % exc.message
        print(line, file=sys.stderr, flush=True)
        if exc.code != contract.EXIT_OK and os.path.exists(_TERMINATION_LOG):
            try:
                with open(_TERMINATION_LOG, "w") as log:
                    log.write(line + "\n")
            except OSError:
                pass

    # ---- the contract's output

    def report(
        self,
        resource: float,
        *,
        train_loss: Optional[float] = None,
        learning_rate: Optional[float] = None,
        **objectives: float,
    ) -> None:
        """Reports an evaluation after `resource` units (epochs) completed: each keyword in
        `objectives` becomes budgetsweep_trainer_objective{metric=<keyword>, resource=<resource>},
        and resource_completed becomes `resource`. Also publishes the meter's figures for the
        epoch and starts it afresh. A non-finite `train_loss` raises Diverged (exit 3) after
        setting budgetsweep_trainer_diverged. In probe mode only the loss is set.
        """
        if learning_rate is not None:
            self.registry.set(contract.METRIC_LEARNING_RATE, learning_rate)
        if train_loss is not None:
            self.set_loss(train_loss)
        if self.probing:
            return
        label = format_resource(resource)
        for metric, value in objectives.items():
            self.registry.set(
                contract.METRIC_OBJECTIVE, value, metric=metric, resource=label
            )
        self.registry.set(contract.METRIC_RESOURCE_COMPLETED, resource)
        self.meter.reset()

    def set_loss(self, loss: float) -> None:
        """Sets the training loss; a non-finite one raises Diverged (exit 3)."""
        self.registry.set(contract.METRIC_LOSS, loss)
        if not math.isfinite(loss):
            self.registry.set(contract.METRIC_DIVERGED, 1)
            raise Diverged("diverged: training loss is %s" % loss)

    def set_resource_completed(self, resource: float) -> None:
        """Sets resource_completed without an evaluation, e.g. after loading a checkpoint."""
        if not self.probing:
            self.registry.set(contract.METRIC_RESOURCE_COMPLETED, resource)

    # ---- checkpoints

    def checkpoint_path(self) -> Optional[str]:
        """The checkpoint's path, or None without a checkpoint directory."""
        if self.checkpoint_dir is None:
            return None
        return os.path.join(self.checkpoint_dir, self.checkpoint_name)

    def snapshot_path(self, resource: float, directory: Optional[str] = None) -> str:
        """`snapshot-<resource><ext>` in `directory` (this trial's checkpoint directory)."""
        ext = os.path.splitext(self.checkpoint_name)[1]
        base = directory if directory is not None else (self.checkpoint_dir or "")
        return os.path.join(base, "snapshot-%s%s" % (format_resource(resource), ext))

    def save_checkpoint(
        self, state: Any, resource: float, *, save: ckpt.Saver = ckpt.pickle_save
    ) -> Optional[str]:
        """Writes `state` after `resource` units atomically (temporary file, fsync, rename) and
        returns its path; None without a checkpoint directory or in probe mode. With
        BUDGETSWEEP_SNAPSHOTS=1 and `resource` at UNTIL it first writes the immutable snapshot
        other trials may exploit (never rewritten). `save` writes an object to a path
        (torch.save for tensors); raises what it raises.
        """
        path = self.checkpoint_path()
        if path is None or self.probing:
            return None
        os.makedirs(self.checkpoint_dir or ".", exist_ok=True)
        record = ckpt.Checkpoint(state, resource, self._origin, self.contract_params)
        if self.snapshots and resource >= self.until:
            snapshot = self.snapshot_path(resource)
            if not os.path.exists(snapshot):
                ckpt.save(snapshot, record, save)
        ckpt.save(path, record, save)
        return path

    def load_checkpoint(self, *, load: ckpt.Loader = ckpt.pickle_load) -> Optional[ckpt.Checkpoint]:
        """The checkpoint to go on from, or None to start afresh (always None in probe mode).

        After an exploit (BUDGETSWEEP_EXPLOIT_DIR/AT) that is the donor's snapshot, unless this
        trial's own checkpoint records that it already went on from it. Raises BadInput naming
        the file when the snapshot is missing or unreadable, or the flag when a parameter other
        than the mutable ones differs from the checkpoint's.
        """
        if self.probing:
            return None
        own = self._load(self.checkpoint_path(), load, required=False)
        chosen = own
        if self.exploit_dir is not None:
            origin = "%s@%s" % (self.exploit_dir, self._exploit_at_text)
            if own is None or own.origin != origin:
                path = self.snapshot_path(self.exploit_at or 0, self.exploit_dir)
                chosen = self._load(path, load, required=True)
                assert chosen is not None
                self._check_params(chosen.params)
                chosen = chosen._replace(origin=origin)
                print("budgetsweep: exploited %s at %s" % (path, format_resource(chosen.resource)),
                      file=sys.stderr, flush=True)
        if chosen is None:
            return None
        self._check_params(chosen.params)
        self._origin = chosen.origin
        self.resumed_from = _number(chosen.resource)
        self.set_resource_completed(chosen.resource)
        return chosen

    def _load(
        self, path: Optional[str], load: ckpt.Loader, required: bool
    ) -> Optional[ckpt.Checkpoint]:
        if path is None:
            return None
        if required and not os.path.exists(path):
            raise BadInput("snapshot %s does not exist" % path)
        try:
            return ckpt.load(path, load)
        except Exception as e:  # a corrupt file: whatever the loader raises
            raise BadInput("cannot read checkpoint %s: %s" % (path, e)) from None

    def _check_params(self, saved: Mapping[str, Any]) -> None:
        for name in sorted(set(saved) | set(self.contract_params)):
            if name in self.mutable:
                continue
            if saved.get(name) != self.contract_params.get(name):
                raise BadInput(
                    "--%s: %s in the checkpoint, %s now (only %s may change)"
                    % (name, saved.get(name), self.contract_params.get(name),
                       ",".join(sorted(self.mutable)) or "no flag")
                )
