"""Typed budget splits: how a scree or a score release shares its (eps, delta).

:class:`ScreeSplit` is the ``split`` of :func:`~dppca.dp_scree` and
:func:`~dppca.plan_scree`, :class:`ScoreSplit` that of :func:`~dppca.dp_score`
and :func:`~dppca.plan_score`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..core.scalar_checks import check_open_unit, check_positive_float

__all__ = [
    "ScoreSplit",
    "ScreeSplit",
    "resolve_score_split",
    "resolve_scree_split",
]


@dataclass(frozen=True)
class ScreeSplit:
    """How a scree release shares its budget: the directions and the clip level.

    The rest of (eps, delta) goes to the variance release and any extra
    method. The shares are weights of the basic split, which the analytic
    calibration then scales to the tight total (see :func:`dppca.dp_scree`).

    Parameters
    ----------
    directions : float, default=0.35
        Share of (eps, delta) for the directions released inside the call, in
        (0, 1); unused when the call is given directions.
    clip : float, default=None
        Share of eps for choosing the clip level of the variance release, in
        (0, 1); unused with a public ``ClippedControl(clip=...)``. None takes
        the share between 0.05 and 0.3 with the least forecast error (the
        moments' noise against the clipping bias) among those whose scan the
        forecast does not flag (a function of n, eps and the ladder only).

    Raises
    ------
    TypeError, ValueError
        A share that is not a real number in (0, 1).

    Notes
    -----
    The split is public: it is chosen before any data are read and it
    changes which noise each part gets, not what the release reveals.
    ``directions + clip`` must stay below 1 when both are used; the plan
    checks that, since the directions share is unused when directions are
    given.

    Examples
    --------
    >>> from dppca import ScreeSplit
    >>> ScreeSplit(directions=0.3, clip=0.1)
    ScreeSplit(directions=0.3, clip=0.1)
    """

    directions: float = 0.35
    clip: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "directions", check_open_unit(self.directions, "ScreeSplit.directions")
        )
        if self.clip is not None:
            object.__setattr__(self, "clip", check_open_unit(self.clip, "ScreeSplit.clip"))


@dataclass(frozen=True)
class ScoreSplit:
    """How a score release shares its budget among its parts, as weights.

    Each field is a positive weight for one part; None keeps that part's
    default weight. The weights of the parts a call uses are normalised to
    sum 1 (a part the call does not use, such as the frame when public
    bounds are given, is left out). The shares are a basic split, which the
    analytic calibration then scales to the tight total (see
    :func:`dppca.dp_score`).

    Parameters
    ----------
    directions : float, default=None
        Weight of the directions released inside the call (default 0.35).
    frame : float, default=None
        Weight of the private frame (default: the smallest share whose
        failure bound is 1 %, between 0.1 and 0.4 of eps).
    groups : float, default=None
        Weight of the private group sizes (default 0.1).
    histogram : float, default=None
        Weight of the histograms (default 0.55, or 0.45 with private groups).

    Raises
    ------
    TypeError, ValueError
        A weight that is not a finite real number > 0.

    Notes
    -----
    The split is public: it is chosen before any data are read.

    Examples
    --------
    >>> from dppca import ScoreSplit
    >>> ScoreSplit(directions=1, histogram=3).weights()
    {'directions': 1.0, 'histogram': 3.0}
    """

    directions: float | None = None
    frame: float | None = None
    groups: float | None = None
    histogram: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                checked = check_positive_float(value, f"ScoreSplit.{f.name}")
                object.__setattr__(self, f.name, checked)

    def weights(self) -> dict[str, float]:
        """The weights given, by part name; parts left at None are absent."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return {name: value for name, value in values.items() if value is not None}


def resolve_scree_split(split: object) -> ScreeSplit:
    """The :class:`ScreeSplit` of a call (None gives the default split)."""
    if split is None:
        return ScreeSplit()
    if not isinstance(split, ScreeSplit):
        raise TypeError(
            f"split must be None or a ScreeSplit such as ScreeSplit(directions=0.35); "
            f"got {type(split).__name__} {split!r}."
        )
    return split


def resolve_score_split(split: object) -> ScoreSplit:
    """The :class:`ScoreSplit` of a call (None gives the default split)."""
    if split is None:
        return ScoreSplit()
    if isinstance(split, ScoreSplit):
        return split
    raise TypeError(
        "split must be None or a ScoreSplit such as ScoreSplit(directions=1, histogram=3); "
        f"got {type(split).__name__} {split!r}."
    )


# Release files and pickles name the public home of the classes.
for _cls in (ScreeSplit, ScoreSplit):
    _cls.__module__ = "dppca"
del _cls
