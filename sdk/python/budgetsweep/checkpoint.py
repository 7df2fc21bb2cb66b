"""Checkpoints written atomically, and the snapshots population-based training copies from."""

import os
import pickle
from typing import Any, Callable, Dict, NamedTuple, Optional

Saver = Callable[[Any, str], None]  # writes an object to a path, e.g. torch.save
Loader = Callable[[str], Any]  # reads it back, e.g. torch.load

_META = "budgetsweep"
_STATE = "state"


class Checkpoint(NamedTuple):
    """What a checkpoint holds: the loop's own state and the SDK's record around it."""

    state: Any  # whatever the training loop saved
    resource: float  # the resource completed when it was written
    origin: str  # "<donor dir>@<at>" after an exploit, else ""
    params: Dict[str, Any]  # the trial's parameters (BUDGETSWEEP_PARAMS) when it was written


def pickle_save(obj: Any, path: str) -> None:
    """The default saver: pickle at the highest protocol."""
    with open(path, "wb") as out:
        pickle.dump(obj, out, protocol=pickle.HIGHEST_PROTOCOL)


def pickle_load(path: str) -> Any:
    """The default loader."""
    with open(path, "rb") as source:
        return pickle.load(source)


def _fsync_path(path: str, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: str, write: Callable[[str], None]) -> None:
    """Calls write(temporary path), fsyncs it and renames it onto `path`, so a reader (or a
    resume after a kill) sees the old file or the new one, never a torn one."""
    temp = path + ".tmp"
    try:
        write(temp)
        _fsync_path(temp, os.O_RDONLY)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.remove(temp)
        raise
    _fsync_path(os.path.dirname(os.path.abspath(path)), os.O_RDONLY | os.O_DIRECTORY)


def save(path: str, checkpoint: Checkpoint, saver: Saver = pickle_save) -> None:
    """Writes `checkpoint` to `path` atomically with `saver`."""
    payload = {
        _META: {
            "resource": checkpoint.resource,
            "origin": checkpoint.origin,
            "params": checkpoint.params,
        },
        _STATE: checkpoint.state,
    }
    write_atomically(path, lambda temp: saver(payload, temp))


def load(path: str, loader: Loader = pickle_load) -> Optional[Checkpoint]:
    """The checkpoint at `path`, or None when there is no file. Raises ValueError when the file
    is not a checkpoint this SDK wrote, and whatever `loader` raises on a corrupt one."""
    if not os.path.exists(path):
        return None
    payload = loader(path)
    if not isinstance(payload, dict) or not isinstance(payload.get(_META), dict):
        raise ValueError("%s is not a budgetsweep checkpoint" % path)
    meta = payload[_META]
    return Checkpoint(
        state=payload.get(_STATE),
        resource=meta.get("resource", 0),
        origin=str(meta.get("origin", "")),
        params=dict(meta.get("params", {})),
    )
