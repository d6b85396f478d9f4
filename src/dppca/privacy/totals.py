"""Tight totals of privacy costs: :func:`tight_total` and :func:`compose_tight`.

Both read a :class:`~dppca.privacy.tally.Tally`, the running summary the
budgets keep, so that a split calibrated to a total here is accepted by every
budget to the last digit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..core.validation import check_delta
from .cost import PrivacyCost
from .tally import Tally

__all__ = ["compose_tight", "tight_total"]


def tight_total(costs: Iterable[PrivacyCost], delta: float) -> tuple[float, float]:
    """The (eps, delta) of ``costs`` composed tightly, at a target ``delta``.

    Parameters
    ----------
    costs : iterable of PrivacyCost
        Releases made from the same data (composed costs are opened into
        their elementary parts).
    delta : float
        Target delta of the total, in (0, 1).

    Returns
    -------
    (eps, delta) : tuple of float
        The smallest eps the accountant proves at ``delta`` (``inf`` when the
        parts' own deltas already exceed it). When every part's claim is true
        of its noise and the claims' deltas add up to at most ``delta``, the
        basic total is a valid bound too and the smaller of the two is
        returned, so the tight total never exceeds the basic one there.

    Notes
    -----
    Elementary parts are read by ``kind``: Gaussian parts by their noise
    multiplier ``sigma / sensitivity`` (composed exactly), Laplace parts by
    ``scale / sensitivity``, pure parts as (eps, 0)-DP and records without a
    kind as (eps, delta)-DP; beside the Gaussian, a few of them are composed
    in closed form and more through the PLD accountant of ``dp-accounting``.
    A Laplace record stands for noise on a vector of any length with that L1
    sensitivity: the one-dimensional pair dominates it. Results are cached,
    so pricing the same ledger again is free.

    Examples
    --------
    >>> from dppca import PrivacyCost, tight_total
    >>> g = PrivacyCost(0.5, 1e-6, "gaussian", "a", kind="gaussian", sensitivity=1.0,
    ...                 sigma=9.0)
    >>> eps, delta = tight_total([g, g, g, g], 1e-5)
    >>> round(eps, 4)  # basic composition: 2.0 at delta 4e-6
    0.8142
    """
    delta = check_delta(delta)
    # Through the running summary the budgets keep, so that a split calibrated
    # to a total here is accepted by every budget to the last digit.
    return Tally.of(costs).tight_eps(delta), delta


def compose_tight(
    costs: Iterable[PrivacyCost],
    delta: float,
    *,
    released: str | None = None,
    mechanism: str = "tight composition (PLD accountant)",
) -> PrivacyCost:
    """Compose ``costs`` tightly into one ``PrivacyCost`` with the given ``delta``.

    The result has ``kind="composed"``, ``eps`` from :func:`tight_total` and the
    costs as its parts; :func:`basic_total` of its parts gives the basic bound.

    Raises
    ------
    ValueError
        If no finite eps exists at this ``delta`` (the parts' deltas exceed it).

    Examples
    --------
    >>> from dppca import PrivacyCost, compose, compose_tight
    >>> g = PrivacyCost(0.5, 1e-6, "gaussian", "a", kind="gaussian", sensitivity=1.0,
    ...                 sigma=9.0)
    >>> tight = compose_tight([g] * 4, 1e-5)
    >>> round(tight.eps, 4), compose([g] * 4).eps  # tight versus basic composition
    (0.8142, 2.0)
    """
    parts = tuple(costs)
    if not parts:
        raise ValueError("compose_tight needs at least one PrivacyCost.")
    eps, delta = tight_total(parts, delta)
    if not math.isfinite(eps):
        raise ValueError(
            f"the parts' own deltas exceed delta={delta:g}, so no finite eps bounds their "
            "composition; pass a larger delta."
        )
    if released is None:
        released = "; ".join(c.released for c in parts)
    return PrivacyCost(eps, delta, mechanism, released, parts, kind="composed")
