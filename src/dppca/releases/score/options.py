"""The options of a score release, checked once: :class:`ScoreOptions`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.options import Boolean, Check, Constraint, Interval, _Checked
from ...core.scalar_checks import check_positive_float
from ...core.score_checks import check_frame, check_methods
from ...core.validation import check_bins_cap
from ..splits import resolve_score_split
from .histograms import HISTOGRAM_METHODS

__all__ = ["ScoreOptions"]


def _check_bins(value: object, name: str) -> Any:
    check_bins_cap(value, name)  # the rule and the range against n: the plan
    return value


@dataclass(frozen=True, eq=False)
class ScoreOptions(_Checked):
    """The settings of a score release besides the shared ones.

    ``method`` becomes a tuple of method names, ``split`` a
    :class:`~dppca.ScoreSplit` and ``frame`` (when given) a pair of pairs of
    floats. ``bins`` and ``components`` are checked against n and p by the plan.
    """

    bins: Any = None
    components: tuple[int, int] = (1, 2)
    method: Any = "add"
    split: Any = None
    score_range: float = 1e6
    inflate: float = 0.2
    compare: bool = False
    frame: Any = None
    groups_public: bool = False

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = {
        "bins": Check(_check_bins, (10**9,)),
        "method": Check(
            lambda value, name: check_methods(value, tuple(HISTOGRAM_METHODS)), ("mean", ())
        ),
        "split": Check(lambda value, name: resolve_score_split(value), ({"frame": 0.1},)),
        "score_range": Check(check_positive_float, (0.0, -1.0, math.inf)),
        "inflate": Interval(low=0.0),
        "compare": Boolean(),
        "frame": Check(
            lambda value, name: None if value is None else check_frame(value), ((1, 2), "f")
        ),
        "groups_public": Boolean(),
    }
