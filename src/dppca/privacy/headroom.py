"""What still fits in a budget under tight composition, in words one can plan with.

Under tight composition the budget left is not ``total - spent``: a release's
price depends on what was spent before it. :func:`headroom` answers the two
questions a user can act on, by the accountant's own rule (the tight total at
the total's delta within the total's eps): the largest single Gaussian release
that still fits, as (eps, delta), and how many more releases like the last one
fit. :meth:`dppca.privacy.accounting.Budget.headroom` (and so every store of the
accountant) returns it, and every face (``dppca ledger``, the command line's
cost line, the app's budget panel) prints :meth:`Headroom.describe`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cost import _REL_SLACK, PrivacyCost
from .tally import Tally, _tally_eps

__all__ = ["Headroom"]

#: How the numbers are composed, said on every face.
RULE = "tight composition at the total delta"

_MAX_REPEATS = 1_000_000


@dataclass(frozen=True)
class Headroom:
    """A budget's state under tight composition, and what still fits in it.

    Attributes
    ----------
    total_eps, total_delta : float
        The budget's total.
    spent_eps : float
        The tight total of every release so far, at ``total_delta``.
    basic_eps, basic_delta : float
        Basic composition of the releases' claims: an upper bound on
        ``spent_eps``, shown for reference only (it decides nothing).
    releases : int
        How many releases were charged.
    gaussian_eps, gaussian_delta : float
        The largest eps of one more Gaussian release at ``gaussian_delta``
        (analytic calibration) that still fits; 0 when none does.
    repeats : int or None
        How many more releases like ``like`` fit (None without ``like``;
        capped at 1,000,000).
    like : PrivacyCost or None
        The release the repeats are counted in (by default the last one).
    rule : str
        How the numbers are composed.

    Examples
    --------
    >>> from dppca import Budget, PrivacyCost
    >>> budget = Budget(eps=1.0, delta=1e-5)
    >>> budget.spend(PrivacyCost(0.4, 4e-6, "gaussian", "directions"))
    >>> room = budget.headroom()
    >>> room.releases, round(room.spent_eps, 3)
    (1, 0.4)
    """

    # The public home, as for PrivacyCost.

    total_eps: float
    total_delta: float
    spent_eps: float
    basic_eps: float
    basic_delta: float
    releases: int
    gaussian_eps: float
    gaussian_delta: float
    repeats: int | None
    like: PrivacyCost | None
    rule: str = RULE

    @property
    def exhausted(self) -> bool:
        """Whether nothing more fits (not even a Gaussian release of tiny eps)."""
        return self.gaussian_eps <= 0.0

    def fits_text(self) -> str:
        """One sentence: what still fits."""
        if self.exhausted:
            return f"nothing more fits ({self.rule})."
        text = (
            f"still fits ({self.rule}): one Gaussian release of up to "
            f"eps={self.gaussian_eps:.4g} at delta={self.gaussian_delta:.3g}"
        )
        if self.repeats is not None and self.like is not None:
            more = f"{self.repeats:,}" + ("+" if self.repeats >= _MAX_REPEATS else "")
            text += f", or {more} more release(s) like the last {self.like}"
        return text + "."

    def describe(self) -> str:
        """The budget in two sentences: what was spent, then what still fits.

        The one text every face prints (the app's budget panel, the command
        line's cost line, ``dppca ledger``); extend it here.
        """
        return (
            f"spent eps={self.spent_eps:.6g} at delta={self.total_delta:g} by {self.rule} "
            f"of {self.releases} release(s) (basic bound eps={self.basic_eps:.6g}, "
            f"delta={self.basic_delta:.3g}) of the total (eps={self.total_eps:g}, "
            f"delta={self.total_delta:g}); {self.fits_text()}"
        )


def _gaussian_mu(eps: float, delta: float) -> float:
    from .mechanisms import analytic_multiplier

    return 1.0 / analytic_multiplier(eps, delta)


def headroom(
    tally: Tally,
    total: tuple[float, float],
    *,
    like: PrivacyCost | None = None,
    delta: float | None = None,
) -> Headroom:
    """What fits in ``total`` after the costs of ``tally`` (see :class:`Headroom`).

    ``delta`` is the delta of the Gaussian release asked about (default the
    delta of ``like``, else the total's delta).
    """
    eps_total, delta_total = total
    limit = eps_total * (1 + _REL_SLACK)
    others = tuple(sorted(tally.others.items(), key=repr))
    spent = tally.tight_eps(delta_total)
    if delta is not None:
        y = float(delta)
    elif like is not None and like.delta > 0:
        y = float(like.delta)
    else:
        y = float(delta_total)

    def eps_with(mu: float) -> float:
        return _tally_eps(tally.mu2 + mu * mu, others, delta_total)

    gaussian_eps = 0.0
    if spent < eps_total:
        # The largest mu = sensitivity / sigma that fits: at most that of a
        # Gaussian alone with the whole total; the tight eps grows with mu.
        hi = _gaussian_mu(eps_total, delta_total)
        lo = 0.0
        if eps_with(hi) <= limit:
            lo = hi
        else:
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if eps_with(mid) <= limit else (lo, mid)
                if hi - lo <= 1e-6 * hi:
                    break
        if lo > 0:
            from .composition import _gaussian_eps

            gaussian_eps = _gaussian_eps(lo, y)
    repeats = None
    if like is not None:
        repeats = _repeats(tally, like, total)
    return Headroom(
        total_eps=eps_total,
        total_delta=delta_total,
        spent_eps=spent,
        basic_eps=tally.basic_eps,
        basic_delta=tally.basic_delta,
        releases=tally.charges,
        gaussian_eps=gaussian_eps,
        gaussian_delta=y,
        repeats=repeats,
        like=like,
    )


def _repeats(tally: Tally, like: PrivacyCost, total: tuple[float, float]) -> int:
    """The largest N with N more releases like ``like`` within ``total`` (capped)."""

    def fits(n: int) -> bool:
        return tally.plus(like, n).tight_eps(total[1]) <= total[0] * (1 + _REL_SLACK)

    if not fits(1):
        return 0
    lo, hi = 1, 2
    while hi <= _MAX_REPEATS and fits(hi):
        lo, hi = hi, hi * 2
    if hi > _MAX_REPEATS:
        return _MAX_REPEATS
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo
