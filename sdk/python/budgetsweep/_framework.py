"""What the framework callbacks (budgetsweep.hf, budgetsweep.lightning) share: the standard
library only, so that neither framework is imported for it."""

from typing import Any, Dict, Mapping, Optional, Sequence

RESOURCE_UNITS = ("epoch", "step")


def check_resource_unit(resource: str) -> str:
    """`resource` if it is a unit a callback counts in; raises ValueError otherwise."""
    if resource not in RESOURCE_UNITS:
        raise ValueError("resource must be one of %s, not %r" % (RESOURCE_UNITS, resource))
    return resource


def select_objectives(
    metrics: Mapping[str, Any],
    objectives: Optional[Mapping[str, str]],
    prefix: str,
    skip_suffixes: Sequence[str] = (),
) -> Dict[str, float]:
    """The objectives to report from a framework's evaluation `metrics`: with `objectives`
    ({metric key: objective name}) those present; without, each `<prefix><name>` that is a number
    as `validation_<name>`, except names ending in one of `skip_suffixes`."""
    if objectives is not None:
        return {name: float(metrics[key]) for key, name in objectives.items() if key in metrics}
    selected = {}
    for key, value in metrics.items():
        if not key.startswith(prefix) or key.endswith(tuple(skip_suffixes)):
            continue
        if hasattr(value, "item"):  # a tensor of one value
            value = value.item()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            selected["validation_" + key[len(prefix):]] = float(value)
    return selected
