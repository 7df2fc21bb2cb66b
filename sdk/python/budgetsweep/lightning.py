"""The trainer contract for a PyTorch Lightning `Trainer`, as a Callback.

The only module of the SDK that imports Lightning (the unified `lightning` package, whose
`lightning.pytorch` is what `pytorch_lightning` is also published as). The trial's checkpoint is
Lightning's own checkpoint file (`Trainer.save_checkpoint`) with the SDK's record added under one
key, written atomically, so that `Trainer.fit(ckpt_path=...)` resumes from it and PBT snapshots and
exploits work as for any other checkpoint of the SDK.
"""

from typing import Any, Dict, Mapping, Optional

import lightning.pytorch as pl
import torch
from lightning.pytorch.utilities.data import extract_batch_size

from . import checkpoint as ckpt
from ._framework import check_resource_unit, select_objectives
from .trial import Trial

_META = ckpt._META  # the key of the SDK's record in what checkpoint.save hands the saver
_STATE = ckpt._STATE


def _read_record(path: str) -> Dict[str, Any]:
    """The checkpoint's loader: the SDK's record, with the file's path as the state (what
    Lightning resumes from). Memory-maps the file, so the tensors are not read."""
    payload = torch.load(path, map_location="cpu", mmap=True, weights_only=False)
    if not isinstance(payload, dict):
        raise ValueError("%s is not a Lightning checkpoint" % path)
    return {_META: payload.get(_META), _STATE: path}


class BudgetsweepCallback(pl.Callback):
    """Runs a `lightning.pytorch.Trainer` under the trial's contract.

    - At each validation (`on_validation_end`, not the sanity check) it reports the objectives at
      the resource completed; once that resource reaches `trial.until` it sets
      `trainer.should_stop` and checkpoints (at the epoch's end when validation ran there).
    - On SIGTERM (`trial.should_stop`) it checkpoints after the current batch and stops. Lightning
      itself then ends `fit()` with its SIGTERMException, a SystemExit with code 0.
    - Its checkpoints are the trial's (`Trial.save_checkpoint`: atomic, a snapshot at `until`
      under PBT); `ckpt_path()` gives the file to resume from.
    - The training loss (the `loss` of training_step's output) and the learning rate are
      published at each validation (a non-finite loss raises Diverged, exit 3); each batch is
      counted for samples/s and the probe.

    resource: "epoch" (the default): epochs completed, fractional for a validation inside an
    epoch; "step": optimizer steps (`trainer.global_step`). Validate at every milestone of the
    sweep, and give the Trainer the whole length (max_epochs=trial.max_resource) so that the
    schedule does not depend on `until`. objectives: the logged metrics to report and the names
    to report them under ({"val_acc": "validation_accuracy"}); by default each `val_<name>` as
    `validation_<name>` (val_loss -> validation_loss).
    """

    def __init__(
        self,
        trial: Trial,
        *,
        resource: str = "epoch",
        objectives: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.trial = trial
        self.resource_unit = check_resource_unit(resource)
        self.objectives = dict(objectives) if objectives is not None else None
        self._loss: Optional[torch.Tensor] = None
        self._save_at_epoch_end: Optional[float] = None
        self._record: Optional[Dict[str, Any]] = None  # set while this callback saves
        self._saved_after_stop = False

    def ckpt_path(self) -> Optional[str]:
        """The file to pass as `Trainer.fit(ckpt_path=...)`: the trial's checkpoint (after an
        exploit, the donor's snapshot), or None to start afresh. Call it once, before fit().
        Raises BadInput as Trial.load_checkpoint does."""
        loaded = self.trial.load_checkpoint(load=_read_record)
        return None if loaded is None else loaded.state

    def resource(self, trainer: "pl.Trainer") -> float:
        """The resource completed, in the callback's unit."""
        if self.resource_unit == "step":
            return trainer.global_step
        batches = trainer.fit_loop.epoch_loop.batch_progress.current.processed
        total = trainer.num_training_batches
        if not total or total == float("inf") or batches >= total:
            return trainer.current_epoch + 1
        return round(trainer.current_epoch + batches / total, 6)

    def save(self, trainer: "pl.Trainer", resource: float) -> None:
        """Writes the trial's checkpoint after `resource` units with `trainer.save_checkpoint`
        (nothing without a checkpoint directory or in probe mode)."""

        def save_checkpoint(payload: Dict[str, Any], path: str) -> None:
            self._record = payload[_META]
            try:
                trainer.save_checkpoint(path)
            finally:
                self._record = None

        self.trial.save_checkpoint(None, resource, save=save_checkpoint)

    def _stop_and_save(self, trainer: "pl.Trainer") -> None:
        trainer.should_stop = True
        if not self._saved_after_stop:
            self._saved_after_stop = True
            self.save(trainer, self.resource(trainer))

    # ---- Callback

    def on_save_checkpoint(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule",
                           checkpoint: Dict[str, Any]) -> None:
        if self._record is not None:
            checkpoint[_META] = self._record

    def on_train_batch_end(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule",
                           outputs: Any, batch: Any, batch_idx: int) -> None:
        loss = outputs.get("loss") if isinstance(outputs, Mapping) else outputs
        if isinstance(loss, torch.Tensor):
            self._loss = loss.detach()  # read at the next validation: no sync per batch
        accumulated = (batch_idx + 1) % trainer.accumulate_grad_batches == 0
        last = trainer.fit_loop.epoch_loop.batch_progress.is_last_batch
        self.trial.meter.step(extract_batch_size(batch), optimizer_step=accumulated or last)
        if self.trial.should_stop:
            self._stop_and_save(trainer)

    def on_validation_end(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule") -> None:
        if trainer.sanity_checking:
            return
        objectives = select_objectives(trainer.callback_metrics, self.objectives, "val_")
        learning_rate = None
        if trainer.optimizers:
            learning_rate = float(trainer.optimizers[0].param_groups[0]["lr"])
        resource = self.resource(trainer)
        self.trial.report(resource, learning_rate=learning_rate,
                          train_loss=None if self._loss is None else float(self._loss),
                          **objectives)
        if resource >= self.trial.until and not self.trial.probing:
            trainer.should_stop = True
            if trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:
                self._save_at_epoch_end = resource  # where Lightning's own checkpoints go too
            else:
                self.save(trainer, resource)

    def on_train_epoch_end(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule") -> None:
        if self._save_at_epoch_end is not None:
            resource, self._save_at_epoch_end = self._save_at_epoch_end, None
            self.save(trainer, resource)

    def on_exception(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule",
                     exception: BaseException) -> None:
        if self.trial.should_stop and not self.trial.probing:  # SIGTERM during validation
            self._stop_and_save(trainer)
