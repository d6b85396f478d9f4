"""Privacy cost records and a budget ledger (basic composition)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from ._lazy import pandas as pd
from ._validation import check_delta, check_eps
from .exceptions import BudgetExceededError

__all__ = ["Budget", "PrivacyCost", "compose"]

# Floating-point slack when comparing sums of costs with a budget: a split of
# eps into parts that add back up to eps must not be refused for rounding.
_REL_SLACK = 1e-9


@dataclass(frozen=True)
class PrivacyCost:
    """The (eps, delta) price of one release.

    Parameters
    ----------
    eps : float
        Privacy loss parameter, >= 0.
    delta : float
        Failure probability, in [0, 1).
    mechanism : str
        Short name of the mechanism, for example ``"gaussian (classic)"``.
    released : str
        What was made public, for example ``"noisy spherical Kendall matrix (20 x 20)"``.
    parts : tuple of PrivacyCost, default=()
        For a composed cost, the costs it adds up (basic composition).
    """

    eps: float
    delta: float
    mechanism: str
    released: str
    parts: tuple[PrivacyCost, ...] = field(default=())

    def __post_init__(self) -> None:
        if not (math.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(f"eps must be finite and >= 0; got {self.eps!r}.")
        if not (math.isfinite(self.delta) and 0 <= self.delta < 1):
            raise ValueError(f"delta must be in [0, 1); got {self.delta!r}.")

    def __add__(self, other: PrivacyCost) -> PrivacyCost:
        if not isinstance(other, PrivacyCost):
            return NotImplemented
        return compose([self, other])

    def leaves(self) -> tuple[PrivacyCost, ...]:
        """Return the elementary costs this one is made of (itself if it has no parts)."""
        if not self.parts:
            return (self,)
        return tuple(leaf for part in self.parts for leaf in part.leaves())

    def to_frame(self) -> pd.DataFrame:
        """One row per elementary release: mechanism, what was released, eps, delta."""
        rows = [
            {"released": c.released, "mechanism": c.mechanism, "eps": c.eps, "delta": c.delta}
            for c in self.leaves()
        ]
        return pd.DataFrame(rows, columns=["released", "mechanism", "eps", "delta"])

    def __str__(self) -> str:
        return f"(eps={self.eps:.6g}, delta={self.delta:.6g})"


def compose(
    costs: Iterable[PrivacyCost], *, released: str | None = None, mechanism: str = "composition"
) -> PrivacyCost:
    """Add privacy costs by basic (sequential) composition.

    Parameters
    ----------
    costs : iterable of PrivacyCost
        The costs of releases made from the same data.
    released : str, optional
        A description of the combined release; by default the parts' descriptions.
    mechanism : str, default="composition"

    Returns
    -------
    PrivacyCost
        With ``eps`` and ``delta`` the sums of the parts' values.
    """
    parts = tuple(costs)
    if not parts:
        raise ValueError("compose needs at least one PrivacyCost.")
    if len(parts) == 1 and released is None:
        return parts[0]
    eps = math.fsum(c.eps for c in parts)
    delta = math.fsum(c.delta for c in parts)
    if released is None:
        released = "; ".join(c.released for c in parts)
    return PrivacyCost(eps, delta, mechanism, released, parts)


class Budget:
    """A privacy budget for one dataset, kept as a ledger.

    Call :meth:`check` before a release touches the data and :meth:`spend`
    once it is made. Costs add up by basic composition.

    Parameters
    ----------
    eps : float
        Total epsilon available, > 0.
    delta : float
        Total delta available, in (0, 1).

    Examples
    --------
    >>> from dppca import Budget, PrivacyCost
    >>> budget = Budget(eps=1.0, delta=1e-5)
    >>> budget.spend(PrivacyCost(0.5, 5e-6, "gaussian (classic)", "directions"))
    >>> budget.remaining
    (0.5, 5e-06)
    """

    def __init__(self, eps: float, delta: float) -> None:
        self.eps = check_eps(eps)
        self.delta = check_delta(delta)
        self._ledger: list[PrivacyCost] = []

    @property
    def ledger(self) -> tuple[PrivacyCost, ...]:
        """The costs spent so far, in order."""
        return tuple(self._ledger)

    @property
    def spent(self) -> tuple[float, float]:
        """Total (eps, delta) spent so far."""
        return (
            math.fsum(c.eps for c in self._ledger),
            math.fsum(c.delta for c in self._ledger),
        )

    @property
    def remaining(self) -> tuple[float, float]:
        """The (eps, delta) still available (never negative)."""
        eps_spent, delta_spent = self.spent
        return max(self.eps - eps_spent, 0.0), max(self.delta - delta_spent, 0.0)

    def can_afford(self, cost: PrivacyCost) -> bool:
        """Whether ``cost`` fits in what remains."""
        eps_spent, delta_spent = self.spent
        eps_ok = eps_spent + cost.eps <= self.eps * (1 + _REL_SLACK)
        delta_ok = delta_spent + cost.delta <= self.delta * (1 + _REL_SLACK)
        return eps_ok and delta_ok

    def check(self, cost: PrivacyCost) -> None:
        """Raise ``BudgetExceededError`` if ``cost`` does not fit in what remains."""
        if not self.can_afford(cost):
            eps_left, delta_left = self.remaining
            raise BudgetExceededError(
                f"this release costs {cost} but only (eps={eps_left:.6g}, "
                f"delta={delta_left:.6g}) remains of the budget (eps={self.eps:g}, "
                f"delta={self.delta:g}); reuse an existing release or lower its cost."
            )

    def spend(self, cost: PrivacyCost) -> None:
        """Record ``cost`` in the ledger, refusing it if it would overspend."""
        if not isinstance(cost, PrivacyCost):
            raise TypeError(f"cost must be a PrivacyCost; got {type(cost).__name__}.")
        self.check(cost)
        self._ledger.append(cost)

    def to_frame(self) -> pd.DataFrame:
        """The ledger as a table, one row per elementary release."""
        frames = [c.to_frame() for c in self._ledger]
        if not frames:
            return pd.DataFrame(columns=["released", "mechanism", "eps", "delta"])
        return pd.concat(frames, ignore_index=True)

    def __repr__(self) -> str:
        eps_spent, delta_spent = self.spent
        return (
            f"Budget(eps={self.eps:g}, delta={self.delta:g}, spent_eps={eps_spent:.6g}, "
            f"spent_delta={delta_spent:.6g}, releases={len(self._ledger)})"
        )
