"""The options of a scree release, checked once: :class:`ScreeOptions`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.options import Boolean, Check, Choice, Constraint, _Checked, check_k_option
from ..splits import resolve_scree_split
from .controls import _resolve_controls, _resolve_methods

__all__ = ["ScreeOptions"]


@dataclass(frozen=True, eq=False)
class ScreeOptions(_Checked):
    """The settings of a scree release besides the shared ones.

    ``method`` becomes a tuple of method names, ``control`` a mapping from
    each method to its control and ``split`` a :class:`~dppca.ScreeSplit`.
    ``pairing`` None is resolved from the shape by the plan.
    """

    k: int | None = None
    method: Any = "clipped"
    control: Any = None
    split: Any = None
    pairing: str | None = None
    mono: bool = True
    compare: bool = False

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = {
        "k": Check(check_k_option, (0, 1.5, True)),
        "method": Check(lambda value, name: _resolve_methods(value), ("mean", (), 3)),
        "split": Check(lambda value, name: resolve_scree_split(value), ({"directions": 0.5},)),
        "pairing": Choice((None, "all", "random", "consecutive")),
        "mono": Boolean(),
        "compare": Boolean(),
    }

    def _check_together(self) -> None:
        object.__setattr__(self, "control", _resolve_controls(self.control, self.method))
