"""The budget split and the priced parts of a score release (data-free).

:class:`ScoreParts` holds the public inputs of a score call and splits eps
over the parts it uses (defaults or the caller's :class:`~dppca.ScoreSplit`
weights, :func:`basic_shares`) and delta over the Gaussian parts
(:func:`delta_split`); :meth:`ScoreParts.price` scales the shares for the
tight accountant and composes the cost the release records.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from ...core.score_checks import check_split
from ...privacy.calibration import scale_to_tight
from ...privacy.cost import PrivacyCost, compose
from ...privacy.mechanisms import kendall_sensitivity, kendall_sigma
from ..splits import ScoreSplit
from .forecast import frame_share
from .frame import frame_costs
from .histograms import HISTOGRAM_METHODS
from .settings import ScoreGiven, ScoreSettings

__all__ = ["SPLIT_KEYS", "ScoreParts", "basic_shares", "delta_split"]

#: The parts a :class:`~dppca.ScoreSplit` can weight.
SPLIT_KEYS = ("directions", "frame", "groups", "histogram")


def _with_frame_weight(
    defaults: dict[str, float], used: tuple[str, ...], n: int, eps: float, bound: float
) -> dict[str, float]:
    """Default weights with the frame's share from :func:`frame_share` (public).

    The other parts keep their relative weights and share the rest.
    """
    share = frame_share(n, eps, bound)
    others = [key for key in used if key != "frame"]
    total = math.fsum(defaults[key] for key in others)
    out = {key: defaults[key] * (1.0 - share) / total for key in others}
    out["frame"] = share
    return out


def basic_shares(split: ScoreSplit, parts: ScoreParts) -> dict[str, float]:
    """The basic eps split over the parts used: defaults, or the caller's weights.

    Reads the parts' size, eps, score bound and which parts are private.
    """
    used = (
        *(("directions",) if not parts.directions_given else ()),
        *(("frame",) if parts.frame_private else ()),
        *(("groups",) if parts.private_groups else ()),
        "histogram",
    )
    defaults = {"directions": 0.35, "groups": 0.1}
    defaults["histogram"] = 0.45 if parts.private_groups else 0.55
    if parts.frame_private:
        defaults = _with_frame_weight(defaults, used, parts.n, parts.eps, parts.settings.bound)
    return check_split(split.weights(), used, defaults, keys=SPLIT_KEYS)


def delta_split(shares: Mapping[str, float], delta: float) -> dict[str, float]:
    """Delta for the directions and the histograms, in proportion to their eps shares."""
    delta_users = [k for k in ("directions", "histogram") if k in shares]
    delta_total = math.fsum(shares[k] for k in delta_users)
    return {k: delta * shares[k] / delta_total for k in delta_users}


@dataclass(frozen=True, eq=False)
class ScoreParts:
    """The parts of a score release and their costs at a given scaling (internal).

    Built from public quantities: n, p, the total (eps, delta) with delta
    already checked against n, the checked settings, what the call is given
    and the caller's split. ``shares`` is the basic eps split over the parts
    used, ``delta_d`` and ``delta_m`` the delta of the directions and of each
    histogram method. ``costs(t)`` gives the parts with every eps share of
    the basic split times ``t``, in the release's order: directions, group
    sizes, frame, histograms (method order).
    """

    n: int
    p: int
    eps: float
    delta: float
    settings: ScoreSettings
    given: ScoreGiven
    split: ScoreSplit
    directions_text: str = ""  # what the directions part releases (its design)

    components = property(lambda self: self.settings.components, doc="The two PCs.")
    methods = property(lambda self: self.settings.methods, doc="Histogram methods.")
    calibration = property(lambda self: self.settings.calibration, doc="Calibration.")
    bins = property(lambda self: self.settings.bins, doc="Histogram bins.")
    directions_given = property(lambda self: self.given.directions, doc="Directions given.")

    @property
    def n_groups(self) -> int:
        """The groups the histograms are drawn for (1 without groups)."""
        return 1 if self.given.groups is None else self.given.groups

    @property
    def private_groups(self) -> bool:
        """Whether the group sizes are released here (groups not public)."""
        return self.given.groups is not None and not self.settings.groups_public

    @property
    def frame_private(self) -> bool:
        """Whether the frame is a private part (no public frame or bounds).

        Public when priced as given (``given.frame``) or when the settings
        hold a ``frame`` or ``bounds``.
        """
        s = self.settings
        return not (self.given.frame or s.public_frame is not None or s.box is not None)

    @property
    def grid(self) -> str:
        """The histogram grid in words, for the cost records."""
        return f"{self.n_groups} x {self.bins[0]} x {self.bins[1]} cells"

    @cached_property
    def shares(self) -> Mapping[str, float]:
        """The basic eps split over the parts used (:func:`basic_shares`)."""
        return basic_shares(self.split, self)

    @cached_property
    def _delta_shares(self) -> dict[str, float]:
        return delta_split(self.shares, self.delta)

    @property
    def delta_d(self) -> float:
        """The delta of the directions (0 when they are given)."""
        return self._delta_shares.get("directions", 0.0)

    @property
    def delta_m(self) -> float:
        """The delta of each histogram method."""
        return self._delta_shares["histogram"] / len(self.methods)

    def eps_of(self, part: str, t: float) -> float:
        """The eps of a part (0 for a part not used) at scaling ``t``."""
        return t * self.eps * self.shares.get(part, 0.0)

    def eps_m(self, t: float) -> float:
        """The eps of each histogram method at scaling ``t``."""
        return t * self.eps * self.shares["histogram"] / len(self.methods)

    def price(self) -> tuple[float, PrivacyCost]:
        """The scaling ``t`` and the composed cost; tight with the analytic calibration.

        Analytic: every eps share is scaled by the largest ``t`` whose tight
        total is still (eps, delta). Classic: the basic split, ``t = 1``.
        """
        released = "private score plot"
        if self.calibration == "analytic":
            t, leaves = scale_to_tight(self.costs, self.eps, self.delta)
            cost = PrivacyCost(
                self.eps,
                self.delta,
                "tight composition (accountant)",
                released,
                leaves,
                kind="composed",
            )
            return t, cost
        return 1.0, compose(self.costs(1.0), released=released)

    def costs(self, t: float) -> list[PrivacyCost]:
        """Every part's cost with the eps shares times ``t``."""
        parts: list[PrivacyCost] = []
        if not self.directions_given:
            parts.append(self._directions(t))
        if self.private_groups:
            parts.append(self._groups(t))
        if self.frame_private:
            parts.append(self._frame(t))
        parts.extend(self._histograms(t))
        return parts

    def _directions(self, t: float) -> PrivacyCost:
        eps_d, delta_d, p = t * self.eps * self.shares["directions"], self.delta_d, self.p
        return PrivacyCost(
            eps_d,
            delta_d,
            mechanism=f"gaussian ({self.calibration})",
            released=self.directions_text or f"noisy spherical Kendall matrix ({p} x {p})",
            kind="gaussian",
            sensitivity=kendall_sensitivity(self.n),
            sigma=kendall_sigma(self.n, eps_d, delta_d, self.calibration),
        )

    def _groups(self, t: float) -> PrivacyCost:
        eps_g = t * self.eps * self.shares["groups"]
        return PrivacyCost(
            eps_g,
            0.0,
            "laplace",
            f"group sizes ({self.n_groups})",
            kind="laplace",
            sensitivity=2.0,
            scale=2.0 / eps_g,
        )

    def _frame(self, t: float) -> PrivacyCost:
        return frame_costs(t * self.eps * self.shares["frame"], self.components)

    def _histograms(self, t: float) -> list[PrivacyCost]:
        eps_m, delta_m, calibration = self.eps_m(t), self.delta_m, self.calibration
        return [
            HISTOGRAM_METHODS[m].cost(
                m, self.grid, eps=eps_m, delta=delta_m, calibration=calibration
            )
            for m in self.methods
        ]
