"""The trainer contract for a Hugging Face `transformers.Trainer`, as a TrainerCallback.

The only module of the SDK that imports transformers. The Trainer keeps its own checkpoint format
(a folder: weights, optimizer, scheduler, RNG states, trainer_state.json); the trial's checkpoint
is that folder packed with the SDK's record into one tar file, written atomically, so that resume,
PBT snapshots and exploits work as for any other checkpoint of the SDK.
"""

import io
import json
import os
import shutil
import tarfile
import tempfile
from typing import Any, Dict, Mapping, Optional

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from . import checkpoint as ckpt
from . import contract
from ._framework import check_resource_unit, select_objectives
from .trial import BadInput, Trial

_STATE = ckpt._STATE  # the key of the loop's state in what checkpoint.save hands the saver
_RECORD_MEMBER = "budgetsweep.json"
_FOLDER_MEMBER = "checkpoint"
_TIMING_SUFFIXES = ("_runtime", "_per_second")  # of an evaluation, not objectives


def _write_archive(payload: Dict[str, Any], path: str) -> None:
    """The checkpoint's saver: the SDK's record as JSON, then the Trainer's folder (the state)."""
    record = json.dumps({k: v for k, v in payload.items() if k != _STATE}).encode()
    with tarfile.open(path, "w") as archive:
        info = tarfile.TarInfo(_RECORD_MEMBER)
        info.size = len(record)
        archive.addfile(info, io.BytesIO(record))
        archive.add(payload[_STATE], arcname=_FOLDER_MEMBER)


def _read_record(path: str) -> Dict[str, Any]:
    """The checkpoint's loader: the SDK's record, with the archive's path as the state (unpacked
    only once chosen)."""
    with tarfile.open(path, "r") as archive:
        member = archive.next()
        if member is None or member.name != _RECORD_MEMBER or not member.isfile():
            raise ValueError("%s does not start with %s" % (path, _RECORD_MEMBER))
        source = archive.extractfile(member)
        assert source is not None
        record = json.loads(source.read(1 << 20).decode("utf-8"))
    if not isinstance(record, dict):
        raise ValueError("%s: %s is not a JSON object" % (path, _RECORD_MEMBER))
    record[_STATE] = path
    return record


def _unpack(path: str, directory: str) -> str:
    """Unpacks the Trainer's folder of the archive at `path` into `directory` and returns it.
    Raises BadInput on a member that is not a plain file or folder inside it."""
    folder = os.path.join(directory, _FOLDER_MEMBER)
    try:
        with tarfile.open(path, "r") as archive:
            for member in archive:
                if member.name == _RECORD_MEMBER:
                    continue
                name = os.path.normpath(member.name)
                inside = name == _FOLDER_MEMBER or name.startswith(_FOLDER_MEMBER + os.sep)
                if not inside or not (member.isfile() or member.isdir()):
                    raise BadInput("checkpoint %s: unexpected member %r" % (path, member.name))
                target = os.path.join(directory, name)
                if member.isdir():
                    os.makedirs(target, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                source = archive.extractfile(member)
                assert source is not None
                with source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out)
    except (OSError, tarfile.TarError) as e:
        raise BadInput("cannot unpack checkpoint %s: %s" % (path, e)) from None
    return folder


class BudgetsweepCallback(TrainerCallback):
    """Runs a `transformers.Trainer` under the trial's contract.

    - At each evaluation (`on_evaluate`) it reports the objectives at the resource completed,
      and once that resource reaches `trial.until` it has the Trainer save and stop.
    - On SIGTERM (`trial.should_stop`) it has the Trainer save and stop after the current step.
    - Each save it asked for becomes the trial's checkpoint (`Trial.save_checkpoint`: atomic, a
      snapshot at `until` under PBT); `resume_from_checkpoint()` gives the Trainer's folder back.
    - The training loss and learning rate it logs are published (a non-finite loss raises
      Diverged, exit 3); each optimizer step is counted for samples/s and the probe.

    resource: "epoch" (the default): the resource is the epochs completed (TrainerState.epoch;
    evaluate with eval_strategy="epoch"); "step": optimizer steps (TrainerState.global_step;
    eval_strategy="steps"). Evaluate at every milestone of the sweep, and give the Trainer the
    whole length (num_train_epochs=trial.max_resource) so that the schedule does not depend on
    `until`. objectives: the evaluation's metric keys to report and the names to report them
    under ({"eval_accuracy": "validation_accuracy"}); by default each `eval_<name>` but the
    timings as `validation_<name>` (eval_loss -> validation_loss).
    scratch_dir: where resume_from_checkpoint() unpacks (a temporary folder by default).
    """

    def __init__(
        self,
        trial: Trial,
        *,
        resource: str = "epoch",
        objectives: Optional[Mapping[str, str]] = None,
        scratch_dir: Optional[str] = None,
    ) -> None:
        self.trial = trial
        self.resource_unit = check_resource_unit(resource)
        self.objectives = dict(objectives) if objectives is not None else None
        self.scratch_dir = scratch_dir
        self._save_at: Optional[float] = None  # the resource of the save this callback asked for
        self._unpacked: Optional[str] = None

    def resource(self, state: TrainerState) -> float:
        """The resource completed in `state`, in the callback's unit."""
        if self.resource_unit == "step":
            return state.global_step
        return round(state.epoch or 0.0, 6)  # the float sum's noise would show in the label

    def resume_from_checkpoint(self) -> Optional[str]:
        """The folder to pass as `Trainer.train(resume_from_checkpoint=...)`: the trial's
        checkpoint (after an exploit, the donor's snapshot) unpacked, or None to start afresh.
        Call it once, before train(); the folder is removed when training ends. Raises BadInput
        as Trial.load_checkpoint does, and on an archive that is not the Trainer's folder."""
        loaded = self.trial.load_checkpoint(load=_read_record)
        if loaded is None:
            return None
        self._unpacked = tempfile.mkdtemp(prefix="budgetsweep-hf-", dir=self.scratch_dir)
        return _unpack(loaded.state, self._unpacked)

    def _ask_to_save(self, control: TrainerControl, resource: float) -> None:
        if not self.trial.probing and self.trial.checkpoint_dir is not None:
            control.should_save = True
            self._save_at = resource

    # ---- TrainerCallback

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> None:
        logs = logs or {}
        if "learning_rate" in logs:
            self.trial.registry.set(contract.METRIC_LEARNING_RATE, float(logs["learning_rate"]))
        if "loss" in logs:
            self.trial.set_loss(float(logs["loss"]))

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                    **kwargs: Any) -> None:
        self.trial.meter.step(
            args.train_batch_size * args.gradient_accumulation_steps * args.world_size)
        if self.trial.should_stop:
            control.should_training_stop = True
            self._ask_to_save(control, self.resource(state))

    def on_evaluate(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                    metrics: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> None:
        objectives = select_objectives(metrics or {}, self.objectives, "eval_", _TIMING_SUFFIXES)
        resource = self.resource(state)
        self.trial.report(resource, **objectives)
        if resource >= self.trial.until and not self.trial.probing:
            control.should_training_stop = True
            self._ask_to_save(control, resource)

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                **kwargs: Any) -> None:
        if self._save_at is None:
            return  # a save of the Trainer's own save_strategy
        resource, self._save_at = self._save_at, None
        if not state.is_world_process_zero:
            return
        folder = os.path.join(args.output_dir, "%s-%d" % (PREFIX_CHECKPOINT_DIR, state.global_step))
        self.trial.save_checkpoint(folder, resource, save=_write_archive)
        if args.save_strategy == "no":  # the folder exists only because this callback asked
            shutil.rmtree(folder, ignore_errors=True)

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                     **kwargs: Any) -> None:
        if self._unpacked is not None:
            shutil.rmtree(self._unpacked, ignore_errors=True)
            self._unpacked = None
