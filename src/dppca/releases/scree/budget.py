"""The budget arithmetic of a scree plan: the split of (eps, delta) and its parts.

All of it is public: it reads the table's size, the budget and the settings,
never the data. :func:`price_split` is what :meth:`ScreePlan.make` calls: a
basic split of the budget (:func:`_basic_split`), the parts it prices
(:func:`_scree_costs`) and, with the analytic calibration, the largest common
factor on every eps share that the tight accountant allows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...core.options import PrivacyOptions
from ...kernels.pair_moments import moment_sensitivity
from ...privacy.calibration import scale_to_tight
from ...privacy.cost import PrivacyCost, compose
from ...privacy.mechanisms import gaussian_sigma, kendall_sensitivity, kendall_sigma
from .clip import _joint_noise, _unit_sd
from .estimators import _method_cost
from .options import ScreeOptions


@dataclass(frozen=True)
class SplitInputs:
    """The validated, public arguments the split and its parts are priced from.

    ``privacy`` and ``options`` are the checked settings, ``delta`` checked
    against n and ``k`` and ``pairing`` resolved against the shape; ``extra``
    are the methods after the joint clipped moments, in order;
    ``direction_share`` and ``trace_share`` the shares of eps for the
    directions and the clip scan; ``all_pairs`` whether the moments average
    over all pairs; ``public_clip`` the public clip level, if one was given;
    ``directions_text`` what the directions part releases (its design).
    """

    n: int
    p: int
    privacy: PrivacyOptions
    options: ScreeOptions
    direction_share: float
    trace_share: float
    directions_text: str = ""

    @property
    def k(self) -> int:
        return self.options.k  # type: ignore[return-value]  # resolved against p

    @property
    def eps(self) -> float:
        return self.privacy.eps

    @property
    def delta(self) -> float:
        return self.privacy.delta

    @property
    def calibration(self) -> str:
        return self.privacy.calibration

    @property
    def extra(self) -> tuple[str, ...]:
        return tuple(name for name in self.options.method if name != "clipped")

    @property
    def controls(self) -> Mapping[str, Any]:
        return self.options.control

    @property
    def public_clip(self) -> float | None:
        """The clip level of a public ``ClippedControl(clip=...)``, if one was given."""
        controls = self.options.control
        return controls["clipped"].clip if "clipped" in controls else None

    @property
    def all_pairs(self) -> bool:
        return self.options.pairing == "all"


class Split(NamedTuple):
    """A split of (eps, delta): directions, clip scan, each method's share, joint noise."""

    eps_dir: float
    delta_dir: float
    eps_scan: float
    eps_m: float
    delta_m: float
    noise: str

    def scaled(self, t: float) -> Split:
        """The split with every eps share times ``t`` and the deltas unchanged."""
        return self._replace(
            eps_dir=t * self.eps_dir, eps_scan=t * self.eps_scan, eps_m=t * self.eps_m
        )


def price_split(inputs: SplitInputs, methods: Sequence[str]) -> tuple[Split, PrivacyCost]:
    """The split a scree plan runs at, and the cost it records.

    The shares give a basic split of ``(eps, delta)``. With the analytic
    calibration every eps share is then multiplied by the largest factor
    whose tight total (:func:`dppca.privacy.accounting.tight_total`) is still
    ``eps`` at ``delta`` (:func:`dppca.privacy.accounting.scale_to_tight`), and the
    noise of the joint release (K-norm or Gaussian) is the one with less
    noise after that scaling. The classic calibration keeps the basic split.
    """
    released = f"private scree ({', '.join(methods)}; {inputs.k} components)"
    basic = _basic_split(inputs, None)
    kind = _joint_noise(
        inputs.n, inputs.all_pairs, basic.eps_m, basic.delta_m, inputs.calibration, inputs.k
    )[0]
    if inputs.calibration == "analytic":
        return _tight_split(inputs, kind, released)
    split = _basic_split(inputs, kind)
    return split, compose(_scree_costs(inputs, split), released=released)


def _tight_split(inputs: SplitInputs, kind: str, released: str) -> tuple[Split, PrivacyCost]:
    """Scale each noise's basic split to the tight total; keep the one with less noise.

    ``kind`` is the noise of the basic split: it wins a tie.
    """
    options = []
    for noise in ("knorm", "gaussian"):
        split = _basic_split(inputs, noise)

        def build(t: float, split: Split = split) -> list[PrivacyCost]:
            return _scree_costs(inputs, split.scaled(t))

        t, costs = scale_to_tight(build, inputs.eps, inputs.delta)
        sd = _unit_sd(
            noise,
            inputs.n,
            inputs.all_pairs,
            t * split.eps_m,
            split.delta_m,
            inputs.calibration,
            inputs.k,
        )
        options.append((sd, noise, t, split, costs))
    _, _, t, split, costs = min(options, key=lambda o: (o[0], o[1] != kind))
    cost = PrivacyCost(
        inputs.eps,
        inputs.delta,
        "tight composition (accountant)",
        released,
        costs,
        kind="composed",
    )
    return split.scaled(t), cost


def _basic_split(inputs: SplitInputs, noise: str | None) -> Split:
    """Basic split: eps and delta of directions, scan eps, each method's (eps, delta), noise.

    ``noise=None`` takes the joint release's noise with the smaller standard
    deviation at this split. A K-norm joint release needs no delta: then the
    other Gaussian parts share it in proportion to their eps.
    """
    eps, delta, extra = inputs.eps, inputs.delta, inputs.extra
    eps_dir, delta_dir = eps * inputs.direction_share, delta * inputs.direction_share
    eps_scan = eps * inputs.trace_share
    eps_m = (eps - eps_dir - eps_scan) / (1 + len(extra))
    delta_m = (delta - delta_dir) / (1 + len(extra))
    if noise is None:
        noise = _joint_noise(
            inputs.n, inputs.all_pairs, eps_m, delta_m, inputs.calibration, inputs.k
        )[0]
    if noise == "knorm" and (inputs.direction_share > 0 or extra):
        weights = [eps_dir] + [eps_m] * len(extra)
        delta_dir = delta * eps_dir / math.fsum(weights)
        delta_m = delta * eps_m / math.fsum(weights) if extra else delta_m
    return Split(eps_dir, delta_dir, eps_scan, eps_m, delta_m, noise)


def _scree_costs(inputs: SplitInputs, split: Split) -> list[PrivacyCost]:
    """The parts of a scree release at ``split``, in the order they are drawn."""
    n, p, calibration = inputs.n, inputs.p, inputs.calibration
    eps_dir, delta_dir, eps_scan, eps_m, delta_m, kind = split
    costs: list[PrivacyCost] = []
    if inputs.direction_share > 0:
        costs.append(
            PrivacyCost(
                eps_dir,
                delta_dir,
                f"gaussian ({calibration})",
                inputs.directions_text or f"noisy spherical Kendall matrix ({p} x {p})",
                kind="gaussian",
                sensitivity=kendall_sensitivity(n),
                sigma=kendall_sigma(n, eps_dir, delta_dir, calibration),
            )
        )
    if inputs.public_clip is None:
        costs.append(
            PrivacyCost(
                eps_scan,
                0.0,
                "ladder quantile scan (pure DP)",
                "clip level of the squared pair norms",
                kind="pure",
            )
        )
    costs.append(_moment_cost(inputs, eps_m, delta_m, kind))
    for name in inputs.extra:
        costs.append(
            _method_cost(
                name,
                inputs.controls[name],
                eps=eps_m,
                delta=delta_m,
                k=inputs.k,
                calibration=inputs.calibration,
            )
        )
    return costs


def _moment_cost(inputs: SplitInputs, eps_m: float, delta_m: float, kind: str) -> PrivacyCost:
    """The part of the joint clipped moments (K-norm or Gaussian noise).

    The sensitivity is ``c C`` with the clip level ``C`` chosen privately
    before (or public): the noise is a fixed multiple of it, known before any
    data, and recorded with its value only when ``C`` is public.
    """
    released = f"clipped moments: {inputs.k} variances and the total variance"
    if kind == "knorm":
        return PrivacyCost(eps_m, 0.0, "K-norm (pure DP, moment polytope)", released, kind="pure")
    mult = gaussian_sigma(1.0, eps_m, delta_m, inputs.calibration)
    noise: dict[str, Any] = {}
    if inputs.public_clip is not None:
        sens = moment_sensitivity(
            inputs.n, inputs.public_clip, all_pairs=inputs.all_pairs, norm="l2"
        )
        noise = {"sensitivity": sens, "sigma": mult * sens}
    return PrivacyCost(
        eps_m,
        delta_m,
        f"gaussian ({inputs.calibration})",
        released,
        kind="gaussian",
        multiplier=mult,
        **noise,
    )
