"""The privacy cost record and basic composition.

:class:`PrivacyCost` is what every release records: the (eps, delta) it
claims and, for tight composition, the noise it carries. :func:`compose` and
:func:`basic_total` add costs by basic (sequential) composition. Release files
name the class through the codec's fixed table of types, whatever its module.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core.lazy import pandas as pd

__all__ = ["PrivacyCost", "basic_total", "compose"]

_KINDS = ("gaussian", "laplace", "pure", "composed")


def _owner(name: str) -> str:
    return (
        "'laplace'"
        if name == "scale"
        else "'gaussian'"
        if name == "sigma"
        else "'gaussian' or 'laplace'"
    )


# Floating-point slack when comparing sums of costs with a budget: a split of
# eps into parts that add back up to eps must not be refused for rounding.
_REL_SLACK = 1e-9


@dataclass(frozen=True, repr=False)
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
        For a composed cost, the costs it is made of.
    kind : {"gaussian", "laplace", "pure", "composed"} or None, default=None
        Keyword only. The elementary mechanism, for tight composition:
        ``"gaussian"`` (needs ``sensitivity``, its L2 sensitivity, and
        ``sigma``), ``"laplace"`` (needs ``sensitivity``, its L1 sensitivity,
        and ``scale``), ``"pure"`` (any eps-DP mechanism, such as the
        exponential mechanism or an above-threshold scan; ``delta`` must be
        0) or ``"composed"`` (a cost made of ``parts``). None (the default,
        and every record written before these fields existed) means a generic
        (eps, delta)-DP release.
    sensitivity, sigma, scale : float or None, default=None
        Keyword only. The noise of a Gaussian (``sigma``) or Laplace
        (``scale``) part and the sensitivity it was calibrated to, all under
        replacement of one row.
    multiplier : float or None, default=None
        Keyword only. For a Gaussian or Laplace part whose sensitivity is set
        at run time by an earlier private output (a privately chosen clip
        level, say) while the noise is always ``multiplier`` times that
        sensitivity: the noise multiplier (``sigma / sensitivity`` or
        ``scale / sensitivity``), fixed and public before any data are read.
        Such a part is, given the earlier outputs, a Gaussian (Laplace)
        mechanism with this multiplier, so adaptive composition treats it as
        one. Give either ``multiplier`` or ``sensitivity`` with ``sigma``
        (``scale``); with all of them they must agree.

    Notes
    -----
    ``eps`` and ``delta`` are the guarantee the release claims. For a noise
    kind they must be true of the noise (for a Gaussian part, the exact privacy
    profile at ``sigma / sensitivity``); the tight accountant reads the noise
    itself, so it never relies on them.

    Examples
    --------
    >>> from dppca import PrivacyCost
    >>> cost = PrivacyCost(0.5, 1e-6, "gaussian (analytic)", "directions")
    >>> cost
    PrivacyCost(eps=0.5, delta=1e-06, mechanism='gaussian (analytic)')
    >>> cost.eps, cost.delta
    (0.5, 1e-06)
    """

    # The public home, named by release files (release_io) and the docs.

    eps: float
    delta: float
    mechanism: str
    released: str
    parts: tuple[PrivacyCost, ...] = field(default=())
    kind: str | None = field(default=None, kw_only=True)
    sensitivity: float | None = field(default=None, kw_only=True)
    sigma: float | None = field(default=None, kw_only=True)
    scale: float | None = field(default=None, kw_only=True)
    multiplier: float | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(f"eps must be finite and >= 0; got {self.eps!r}.")
        if not (math.isfinite(self.delta) and 0 <= self.delta < 1):
            raise ValueError(f"delta must be in [0, 1); got {self.delta!r}.")
        kind = self.kind
        if kind is not None and kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS} or None; got {kind!r}.")
        needs = {"gaussian": ("sensitivity", "sigma"), "laplace": ("sensitivity", "scale")}
        mult = self.multiplier
        relative = False  # noise known only relative to a run-time sensitivity
        if mult is not None:
            if kind not in needs:
                raise ValueError(
                    f"multiplier applies to kind 'gaussian' or 'laplace'; got kind={kind!r}."
                )
            if not (math.isfinite(mult) and mult > 0):
                raise ValueError(f"multiplier must be finite and > 0; got {mult!r}.")
            given = [getattr(self, name) for name in needs[kind]]
            relative = given == [None, None]
            if not relative and (
                None in given or not math.isclose(given[1] / given[0], mult, rel_tol=1e-9)
            ):
                raise ValueError(
                    f"a {kind} cost with multiplier needs both or neither of "
                    f"{' and '.join(needs[kind])}, agreeing with it; got {given!r}."
                )
        for name in ("sensitivity", "sigma", "scale"):
            value = getattr(self, name)
            if name in needs.get(kind or "", ()):
                if relative:
                    continue
                if value is None or not (math.isfinite(value) and value > 0):
                    raise ValueError(f"a {kind} cost needs {name} finite and > 0; got {value!r}.")
            elif value is not None:
                raise ValueError(f"{name} applies to kind {_owner(name)}; got kind={kind!r}.")
        if kind == "pure" and self.delta != 0:
            raise ValueError(f"a pure cost has delta = 0; got {self.delta!r}.")
        if kind == "composed" and not self.parts:
            raise ValueError("a composed cost needs its parts.")

    @property
    def noise_multiplier(self) -> float | None:
        """Noise scale over sensitivity (``sigma`` or ``scale``), None if not recorded."""
        if self.multiplier is not None:
            return self.multiplier
        if self.kind == "gaussian":
            return self.sigma / self.sensitivity  # type: ignore[operator]
        if self.kind == "laplace":
            return self.scale / self.sensitivity  # type: ignore[operator]
        return None

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
        """One row per elementary release: what was released, mechanism, eps, delta."""
        rows = [
            {"released": c.released, "mechanism": c.mechanism, "eps": c.eps, "delta": c.delta}
            for c in self.leaves()
        ]
        return pd.DataFrame(rows, columns=["released", "mechanism", "eps", "delta"])

    def __str__(self) -> str:
        return f"(eps={self.eps:.6g}, delta={self.delta:.6g})"

    def __repr__(self) -> str:
        # One readable line (the generated repr lists every field of every part):
        # what a notebook shows for ``res.cost``.
        parts = f", parts={len(self.leaves())}" if self.parts else ""
        return (
            f"PrivacyCost(eps={self.eps:.6g}, delta={self.delta:.6g}, "
            f"mechanism={self.mechanism!r}{parts})"
        )


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

    Examples
    --------
    >>> from dppca import PrivacyCost, compose
    >>> a = PrivacyCost(0.5, 1e-6, "gaussian", "directions")
    >>> b = PrivacyCost(0.25, 0.0, "laplace", "scree")
    >>> compose([a, b])
    PrivacyCost(eps=0.75, delta=1e-06, mechanism='composition', parts=2)
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


def basic_total(costs: Iterable[PrivacyCost]) -> tuple[float, float]:
    """Total (eps, delta) of ``costs`` by basic composition: the sums of their claims."""
    costs = tuple(costs)
    return math.fsum(c.eps for c in costs), math.fsum(c.delta for c in costs)
