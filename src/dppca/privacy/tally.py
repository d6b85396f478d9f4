"""A running summary of spent costs from which the tight total is computed in O(1).

:class:`Tally` holds what the tight accountant needs of a list of costs, and
nothing else: the merged Gaussian (``mu^2 = sum (sensitivity / sigma)^2``,
exact by Dong, Roth and Su 2022, Corollary 3.3), the other elementary events
with their counts, the basic sums of the claims and whether every claim is
true of its noise. Adding a cost updates it in constant time, so a store (the
in-memory :class:`~dppca.privacy.accounting.Budget`, the SQLite ledger)
keeps one per dataset instead of recomposing every charge; a list of costs
and its tally give the same tight total (:func:`dppca.privacy.totals.tight_total`
is computed through one).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import composition
from .cost import _REL_SLACK, PrivacyCost

__all__: list[str] = []

# Above this many non-Gaussian events the PLD accountant composes each kind
# of event once and self-composes it (constant time in the count); below it
# the events go one by one through the exact mixture or the PLD, as always.
_EXPAND_MAX = 64


def _event(leaf: PrivacyCost) -> tuple[Any, ...] | None:
    return composition._event(leaf)


@dataclass
class Tally:
    """What the tight accountant needs of a list of spent costs (mutable, O(1) to update)."""

    charges: int = 0
    mu2: float = 0.0
    others: dict[tuple[Any, ...], int] = field(default_factory=dict)
    basic_eps: float = 0.0
    basic_delta: float = 0.0
    claims: bool = True

    @classmethod
    def of(cls, costs: Iterable[PrivacyCost]) -> Tally:
        """The tally of ``costs``, added in order."""
        tally = cls()
        for cost in costs:
            tally.add(cost)
        return tally

    @classmethod
    def counted(cls, costs: Iterable[PrivacyCost]) -> Tally:
        """The tally of ``costs``, each distinct object added once with its count.

        Equal to :meth:`of` up to the rounding of the running sums (what
        :meth:`agrees` allows): a check against a recomputation, fast when
        many costs are one shared object (a ledger's decoded charges).
        """
        seen: dict[int, list[Any]] = {}
        for cost in costs:
            entry = seen.get(id(cost))
            if entry is None:
                seen[id(cost)] = [cost, 1]
            else:
                entry[1] += 1
        tally = cls()
        for cost, times in seen.values():
            tally.add(cost, times)
        return tally

    def copy(self) -> Tally:
        return Tally(
            self.charges,
            self.mu2,
            dict(self.others),
            self.basic_eps,
            self.basic_delta,
            self.claims,
        )

    def add(self, cost: PrivacyCost, times: int = 1) -> Tally:
        """Add ``cost`` (``times`` times) in place; return self."""

        self.charges += times
        self.basic_eps += cost.eps * times
        self.basic_delta += cost.delta * times
        for leaf in cost.leaves():
            self.claims = self.claims and composition._claim_holds(leaf)
            event = _event(leaf)
            if event is None:
                continue
            if event[0] == "gaussian":
                self.mu2 += times / float(event[1]) ** 2
            else:
                self.others[event] = self.others.get(event, 0) + times
        return self

    def plus(self, cost: PrivacyCost, times: int = 1) -> Tally:
        """A new tally with ``cost`` added."""
        return self.copy().add(cost, times)

    def merged(self, other: Tally) -> Tally:
        """A new tally of both tallies' costs (two records of one dataset joined)."""
        out = self.copy()
        out.charges += other.charges
        out.mu2 += other.mu2
        for event, count in other.others.items():
            out.others[event] = out.others.get(event, 0) + count
        out.basic_eps += other.basic_eps
        out.basic_delta += other.basic_delta
        out.claims = out.claims and other.claims
        return out

    # -- the tight total ---------------------------------------------------------------
    def tight_eps(self, delta: float) -> float:
        """The tight eps at ``delta`` of every cost added (0 for none)."""
        if self.charges == 0:
            return 0.0
        eps = _tally_eps(self.mu2, tuple(sorted(self.others.items(), key=repr)), delta)
        if self.basic_delta <= delta * (1 + _REL_SLACK) and self.claims:
            eps = min(eps, self.basic_eps)
        return eps

    def fits(self, cost: PrivacyCost, total: tuple[float, float]) -> bool:
        """Whether the tight total with ``cost`` at ``total[1]`` is within ``total[0]``."""
        return self.plus(cost).tight_eps(total[1]) <= total[0] * (1 + _REL_SLACK)

    # -- storage -----------------------------------------------------------------------
    def to_json(self) -> str:
        """A canonical JSON text (floats by their shortest round-trip repr)."""
        others = sorted(([list(e), c] for e, c in self.others.items()), key=repr)
        return json.dumps(
            {
                "charges": self.charges,
                "mu2": self.mu2,
                "others": others,
                "basic": [self.basic_eps, self.basic_delta],
                "claims": self.claims,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> Tally:
        d = json.loads(text)
        return cls(
            int(d["charges"]),
            float(d["mu2"]),
            {tuple(e): int(c) for e, c in d["others"]},
            float(d["basic"][0]),
            float(d["basic"][1]),
            bool(d["claims"]),
        )

    def agrees(self, other: Tally) -> bool:
        """Equal up to the rounding of running sums (the check against a recomputation)."""
        close = [
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300)
            for a, b in (
                (self.mu2, other.mu2),
                (self.basic_eps, other.basic_eps),
                (self.basic_delta, other.basic_delta),
            )
        ]
        return (
            all(close)
            and self.charges == other.charges
            and self.others == other.others
            and self.claims == other.claims
        )


def _tally_eps(mu2: float, others: tuple[tuple[tuple[Any, ...], int], ...], delta: float) -> float:

    count = sum(c for _, c in others)
    if count <= _EXPAND_MAX:
        events = [e for e, c in others for _ in range(c)]
        if mu2 > 0:
            events.append(("gaussian", 1.0 / math.sqrt(mu2)))
        return composition._tight_eps(tuple(sorted(events, key=repr)), delta)
    return _grouped_pld_eps(mu2, others, delta)


def _grouped_pld_eps(
    mu2: float, others: tuple[tuple[tuple[Any, ...], int], ...], delta: float
) -> float:
    """PLD composition with each kind of event built once and self-composed."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    size = 5.0 * math.sqrt(mu2) + math.fsum(
        c * (1.0 / float(e[1]) if e[0] == "laplace" else float(e[1])) for e, c in others
    )
    grid = composition._PLD_GRID * max(1.0, size / 2.0)
    total = None
    if mu2 > 0:
        total = pld.from_gaussian_mechanism(
            standard_deviation=1.0 / math.sqrt(mu2), value_discretization_interval=grid
        )
    for e, c in others:
        if e[0] == "approx" and c * float(e[2]) >= delta:
            return math.inf
        if e[0] == "laplace":
            part = pld.from_laplace_mechanism(
                parameter=float(e[1]), value_discretization_interval=grid
            )
        else:
            eps_e, delta_e = float(e[1]), float(e[2]) if e[0] == "approx" else 0.0
            part = pld.from_privacy_parameters(
                common.DifferentialPrivacyParameters(eps_e, delta_e),
                value_discretization_interval=grid,
            )
        if c > 1:
            part = part.self_compose(c)
        total = part if total is None else total.compose(part)
    return float(total.get_epsilon_for_delta(delta))  # type: ignore[union-attr]
