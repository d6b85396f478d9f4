"""The checked options a score release draws with (no data, no budget).

:func:`check_score_settings` turns the options of :func:`~dppca.releases.score.dp_score`
that shape the drawing into a :class:`ScoreSettings`; the plan
(:mod:`~dppca.releases.score.plan`) holds one, and the draws
(:mod:`~dppca.releases.score.draw`) read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.data_checks import check_bounds
from ...core.scalar_checks import check_bool, check_real
from ...core.score_checks import check_frame
from ...core.types import Calibration, Ties
from ...core.validation import check_accuracy, check_ties

__all__ = ["ScoreGiven", "ScoreSettings", "check_score_settings"]


@dataclass(frozen=True, eq=False)
class ScoreSettings:
    """The checked options a score release draws with (no data, no budget)."""

    components: tuple[int, int]
    bins: tuple[int, int]
    methods: tuple[str, ...]
    groups_public: bool
    compare: bool
    bound: float
    inflate: float
    calibration: Calibration
    ties: Ties
    accuracy: str
    box: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
    public_frame: tuple[tuple[float, float], tuple[float, float]] | None = None


def check_score_settings(
    *,
    groups_public: object,
    compare: object,
    inflate: object,
    ties: object,
    accuracy: object,
    bounds: Any,
    frame: Any,
    variables: tuple[str, ...],
    **checked: Any,
) -> ScoreSettings:
    """Check the remaining draw options, in this order; ``checked`` are checked already.

    ``checked`` holds ``components``, ``bins``, ``methods``, ``bound`` and
    ``calibration``; ``variables`` name the columns for ``bounds`` given as a
    mapping.
    """
    return ScoreSettings(
        groups_public=check_bool(groups_public, "groups_public"),
        compare=check_bool(compare, "compare"),
        inflate=check_real(inflate, "inflate", low=0.0),
        ties=check_ties(ties),
        accuracy=check_accuracy(accuracy),
        box=check_bounds(bounds, variables),
        public_frame=None if frame is None else check_frame(frame),
        **checked,
    )


@dataclass(frozen=True)
class ScoreGiven:
    """What a score release is handed rather than releasing it (public facts).

    ``directions``: the directions are given; ``groups``: the number of
    group labels (None without groups); ``frame``: a public frame or bounds
    (for pricing alone).
    """

    directions: bool = False
    groups: int | None = None
    frame: bool = False
