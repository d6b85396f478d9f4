"""How one private PCA shares its budget: :class:`PCASplit`.

The split is a set of public weights, one per part of the fit that spends
(directions, scree, score plot, private scales). The weights of the parts a
fit uses are normalised to a basic split of (eps, delta); the tight
accountant then stretches every eps share by the same factor until the
parts compose to exactly the fit's eps (:func:`dppca.releases.composite.largest_stretch`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from ...core.scalar_checks import check_positive_float

__all__ = ["DEFAULT_WEIGHTS", "PCASplit", "check_pca_split"]

#: Default weights of the parts of a fit, by analysis. A standardised fit's
#: scree is computed from its direction release and costs nothing.
DEFAULT_WEIGHTS: dict[str, dict[str, float]] = {
    "standardized": {
        "directions": 0.6,
        "scree": 0.0,
        "frame": 0.1,
        "score": 0.15,
        "scales": 0.15,
    },
    "units": {"directions": 0.35, "scree": 0.25, "frame": 0.2, "score": 0.2, "scales": 0.0},
    "scaled": {"directions": 0.35, "scree": 0.25, "frame": 0.2, "score": 0.2, "scales": 0.0},
}


@dataclass(frozen=True)
class PCASplit:
    """Weights of the parts of one private PCA (:func:`dppca.dp_pca`).

    Each weight is a positive real number or None (the analysis' default);
    the weights of the parts the fit uses are normalised to add up to 1.
    A weight for a part the fit does not use is ignored (the standardised
    analysis has no scree part: its variances come from the direction
    release; private scales are used only by a standardised fit with a score
    plot and no public scales).

    Parameters
    ----------
    directions : float, optional
        The direction release (default 0.6 standardised, 0.35 otherwise).
    scree : float, optional
        The variance release of an analysis in units or public scales (0.25).
    frame : float, optional
        The score plot's frame (0.1 standardised, 0.2 otherwise: in units a
        PC's variance is more often within its noise, and its frame then
        scans for its width): two private centres per axis, the
        widths following free from the fit's variances
        (:mod:`dppca.releases.pca.frame`). Unused with public bounds, which
        give the frame for free.
    score : float, optional
        The score plot's histogram (0.15 standardised, 0.2 otherwise).
    scales : float, optional
        The private scales of a standardised fit's score plot (0.15).

    Notes
    -----
    The split is public and chosen before any data are read; it changes
    which part gets how much noise, not what the fit costs: the fit records
    exactly its eps.

    Examples
    --------
    >>> PCASplit(directions=0.6, score=0.4)
    PCASplit(directions=0.6, scree=None, frame=None, score=0.4, scales=None)
    """

    directions: float | None = None
    scree: float | None = None
    frame: float | None = None
    score: float | None = None
    scales: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                object.__setattr__(self, f.name, check_positive_float(value, f"split.{f.name}"))

    def shares(self, used: tuple[str, ...], analysis: str) -> dict[str, float]:
        """The basic split over the parts ``used``: weights normalised to add up to 1."""
        defaults = DEFAULT_WEIGHTS[analysis]
        weights = {}
        for name in used:
            given = getattr(self, name)
            weights[name] = float(given) if given is not None else defaults[name]
        total = math.fsum(weights.values())
        return {name: w / total for name, w in weights.items()}


def check_pca_split(split: object) -> PCASplit:
    """``split`` as a :class:`PCASplit` (None: the defaults; a mapping: its weights)."""
    if split is None:
        return PCASplit()
    if isinstance(split, PCASplit):
        return split
    if isinstance(split, dict):
        unknown = set(split) - {f.name for f in fields(PCASplit)}
        if unknown:
            raise ValueError(
                f"split has unknown parts {sorted(unknown)!r}; use 'directions', 'scree', "
                "'frame', 'score' and 'scales'."
            )
        return PCASplit(**split)
    raise TypeError(
        f"split must be a PCASplit, a dict of weights or None; got {type(split).__name__}."
    )
