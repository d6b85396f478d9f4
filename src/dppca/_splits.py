"""Typed budget splits: how a scree or a score release shares its (eps, delta).

:class:`ScreeSplit` replaces the ``direction_share`` and ``trace_share``
arguments of :func:`~dppca.dp_scree` and :func:`~dppca.plan_scree`;
:class:`ScoreSplit` replaces the mapping given as ``split`` to
:func:`~dppca.dp_score` and :func:`~dppca.plan_score`. The old spellings keep
working for one deprecation cycle and warn (:class:`FutureWarning`).
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Final

from ._validation import check_open_unit, check_positive_float

__all__ = [
    "UNSET",
    "ScoreSplit",
    "ScreeSplit",
    "Unset",
    "resolve_score_split",
    "resolve_scree_split",
]


class Unset(enum.Enum):
    """The default of a deprecated argument, to tell "not passed" from any value."""

    UNSET = "unset"

    def __repr__(self) -> str:
        return "<deprecated>"


#: Default of the deprecated share arguments: the argument was not passed.
UNSET: Final = Unset.UNSET


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

    @classmethod
    def from_mapping(cls, split: Mapping[str, object]) -> ScoreSplit:
        """The split of a mapping ``{part: weight}``, the spelling before ScoreSplit."""
        keys = tuple(f.name for f in fields(cls))
        for key in split:
            if key not in keys:
                raise ValueError(f"split keys must be among {keys!r}; got {key!r}.")
        return cls(**split)  # type: ignore[arg-type]


def resolve_scree_split(
    split: object, direction_share: float | Unset, trace_share: float | Unset | None
) -> ScreeSplit:
    """The :class:`ScreeSplit` of a call, from ``split`` or the deprecated shares.

    Warns from the caller's caller: user -> public function -> here.
    """
    old = {
        name: value
        for name, value in (("direction_share", direction_share), ("trace_share", trace_share))
        if value is not UNSET
    }
    if old and split is not None:
        raise TypeError(
            f"pass either split=ScreeSplit(...) or {' and '.join(old)}, not both; "
            f"{' and '.join(old)} {'is' if len(old) == 1 else 'are'} deprecated."
        )
    if old:
        verb = "is" if len(old) == 1 else "are"
        warnings.warn(
            f"{' and '.join(old)} {verb} deprecated and will be removed; pass "
            "split=ScreeSplit(directions=..., clip=...) (clip is the old trace_share).",
            FutureWarning,
            stacklevel=3,
        )
        shares = {_SCREE_FIELDS[name]: value for name, value in old.items()}
        return ScreeSplit(**shares)  # type: ignore[arg-type]
    if split is None:
        return ScreeSplit()
    if not isinstance(split, ScreeSplit):
        raise TypeError(
            f"split must be None or a ScreeSplit such as ScreeSplit(directions=0.35); "
            f"got {type(split).__name__} {split!r}."
        )
    return split


_SCREE_FIELDS = {"direction_share": "directions", "trace_share": "clip"}


def resolve_score_split(split: object) -> ScoreSplit:
    """The :class:`ScoreSplit` of a call; a mapping (deprecated) is converted.

    Warns from the caller's caller: user -> public function -> here.
    """
    if split is None:
        return ScoreSplit()
    if isinstance(split, ScoreSplit):
        return split
    if isinstance(split, Mapping):
        warnings.warn(
            "a mapping for split is deprecated and will be removed; pass "
            f"split=ScoreSplit(**{dict(split)!r}).",
            FutureWarning,
            stacklevel=3,
        )
        return ScoreSplit.from_mapping(split)
    raise TypeError(
        "split must be None or a ScoreSplit such as ScoreSplit(directions=1, histogram=3); "
        f"got {type(split).__name__} {split!r}."
    )


# Release files and pickles name the public home of the classes.
for _cls in (ScreeSplit, ScoreSplit):
    _cls.__module__ = "dppca"
del _cls
