"""Settings of the scree estimators and the checks of ``method`` and ``control``."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...core.scalar_checks import check_bool, check_choice, check_positive_int, check_real

ScreeMethod = Literal["clipped", "pmwm", "huber"]
METHODS: tuple[str, ...] = ("clipped", "pmwm", "huber")


@dataclass(frozen=True)
class ClippedControl:
    """Settings of the ``"clipped"`` estimator.

    The variances along the directions and the total variance are released
    together, from pair differences ``z`` whose squared norm is clipped at a
    level ``C`` (``z`` is scaled down to norm ``sqrt(C)`` when longer).

    Parameters
    ----------
    clip : float, optional
        Public clip level ``C > 0`` for the squared norm of the pair
        differences ``z = (x_a - x_b) / sqrt(2)`` (squared data units). It
        should be a few times the total variance you expect. None (default)
        chooses it privately with a pure-DP quantile scan on a short public
        ladder (``ScreeSplit.clip`` of the budget); with public ``bounds`` the
        ladder runs down from the largest value the bounds allow.

    Examples
    --------
    >>> from dppca import ClippedControl, dp_scree
    >>> from dppca.datasets import load_iris
    >>> X = load_iris().iloc[:, :4]  # in cm: a public clip of 20 cm^2 is generous
    >>> res = dp_scree(X, eps=1.0, delta=1e-6, control=ClippedControl(clip=20.0),
    ...                random_state=0)
    >>> res.clip_level
    20.0
    """

    clip: float | None = None

    def __post_init__(self) -> None:
        if self.clip is not None:
            check_real(self.clip, "ClippedControl.clip", low=0.0, low_open=True)


@dataclass(frozen=True)
class PMWMControl:
    """Settings of the ``"pmwm"`` (private modified winsorized mean) estimator.

    Parameters
    ----------
    lower, upper : float, default=0.0, 1e8
        Public range ``[a, b]`` of the squared projections. ``lower=0`` is exact
        (squares are never negative). ``upper`` caps the private upper
        quantile; the default assumes variances well below 1e7 (in squared data
        units): raise it for data on larger scales.
    trim_const, eta : float, default=10.0, 0.005
        The winsorizing proportion is ``min(max(trim_const / n_q, eta), 0.49)``
        where ``n_q`` is the number of pairs the quantiles are computed from.
        The quantile level ``1 - trim`` is further lowered to at most
        ``1 - 1 / (eps1 n_q)`` (``eps1`` the target noise's epsilon), so that the
        noisy target seldom passes the number of values, where the search
        would overshoot by many bins.
    beta : float, default=1.01
        Ratio of the geometric bins of the quantile search (> 1). Bins 1 %
        wide are ample for a winsorizing level and keep the search short.
    split : bool, default=True
        Compute the quantiles and the mean on disjoint halves of the pairs.
        A replaced row then touches only one half, so both steps get the whole
        budget of the method (parallel composition). With False both use
        every pair and the budget is divided (``quantile_share`` to the
        quantiles).
    quantile_share : float, default=0.5
        Share of the method's epsilon for the quantiles when ``split=False``.
    lower_quantile : bool, default=False
        Also winsorize from below at a private lower quantile (the original
        two-sided rule). Off by default: the squares are bounded below by
        ``lower`` already, and the lower search on ``-w`` starts from
        ``-upper``, so with a wide public range its bins are too coarse to
        help. When on, the quantile epsilon is split evenly between the two.

    Examples
    --------
    >>> from dppca import PMWMControl, dp_scree
    >>> from dppca.datasets import load_iris
    >>> control = PMWMControl(upper=100.0)  # public upper bound of the squared pair norms
    >>> res = dp_scree(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, method="pmwm",
    ...                control=control, random_state=0)
    >>> res.methods
    ('pmwm',)
    """

    lower: float = 0.0
    upper: float = 1e8
    trim_const: float = 10.0
    eta: float = 0.005
    beta: float = 1.01
    split: bool = True
    quantile_share: float = 0.5
    lower_quantile: bool = False

    def __post_init__(self) -> None:
        lo = check_real(self.lower, "PMWMControl.lower")
        hi = check_real(self.upper, "PMWMControl.upper")
        if not lo < hi:
            raise ValueError(
                f"PMWMControl needs lower < upper; got lower={self.lower!r}, upper={self.upper!r}."
            )
        check_real(self.trim_const, "PMWMControl.trim_const", low=0.0, low_open=True)
        check_real(self.eta, "PMWMControl.eta", low=0.0, high=0.5, high_open=True)
        check_real(self.beta, "PMWMControl.beta", low=1.0, low_open=True)
        check_real(
            self.quantile_share,
            "PMWMControl.quantile_share",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        )
        for name in ("split", "lower_quantile"):
            check_bool(getattr(self, name), f"PMWMControl.{name}")


@dataclass(frozen=True)
class HuberControl:
    """Settings of the ``"huber"`` (noisy gradient descent) estimator.

    The descent converges to a Huber location of the squared projections,
    which lies below their mean (the variance) when the clipping level ``tau``
    is small; ``tau`` grows with ``sqrt(eps n)``, so at small budgets this
    estimator is biased down more than ``"clipped"`` (see
    ``benchmarks/bench_scree.py``).

    Parameters
    ----------
    k_min, k_max : int, default=-30, 60
        Range of the dyadic histogram ``2**k_min .. 2**k_max`` that locates
        the scale proxy ``m2``; the default covers any plausible scale.
    m2_frac : float, default=0.25
        Share of the method's epsilon spent on the scale proxy, in (0, 1).
    mu0 : float, default=0.0
        Public starting value of the descent.
    eta0 : float, default=1.0
        Step size, > 0.
    steps : int, optional
        Number of descent steps T; None uses ``max(1, ceil(ln m))`` for ``m``
        pairs.
    m2_rule : {"median", "mode"}, default="median"
        How the scale proxy is chosen among the dyadic bins of the values
        ``s_j = (w_{2j-1} - w_{2j})^2 / 2``. ``"median"``: the exponential
        mechanism picks the bin holding their median (utility minus the rank
        distance to the middle, sensitivity 1); every value votes, so it finds
        the right order of magnitude at small epsilon. ``"mode"``: the original
        rule, the noisy arg-max of a histogram of block medians with Laplace
        noise of scale ``2 / eps`` per count (a replaced row moves one median
        between two bins); it needs many blocks per bin to beat the noise.
    blocks : int, optional
        Number of blocks for ``m2_rule="mode"``; None uses
        ``max(1, floor(sqrt(m) / 2))`` for ``m`` pairs.

    Examples
    --------
    >>> from dppca import HuberControl, dp_scree
    >>> from dppca.datasets import load_iris
    >>> res = dp_scree(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, method="huber",
    ...                control=HuberControl(m2_rule="median"), random_state=0)
    >>> res.methods
    ('huber',)
    """

    k_min: int = -30
    k_max: int = 60
    m2_frac: float = 0.25
    mu0: float = 0.0
    eta0: float = 1.0
    steps: int | None = None
    m2_rule: Literal["median", "mode"] = "median"
    blocks: int | None = None

    def __post_init__(self) -> None:
        check_choice(self.m2_rule, "HuberControl.m2_rule", ("median", "mode"))
        for name in ("k_min", "k_max"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"HuberControl.{name} must be an integer; got {value!r}.")
        if not self.k_min < self.k_max:
            raise ValueError(
                f"HuberControl needs k_min < k_max; got {self.k_min!r} and {self.k_max!r}."
            )
        if not (-1000 <= self.k_min and self.k_max <= 1000):
            raise ValueError("HuberControl.k_min and k_max must lie in [-1000, 1000].")
        check_real(
            self.m2_frac, "HuberControl.m2_frac", low=0.0, high=1.0, low_open=True, high_open=True
        )
        check_real(self.mu0, "HuberControl.mu0")
        check_real(self.eta0, "HuberControl.eta0", low=0.0, low_open=True)
        if self.steps is not None:
            check_positive_int(self.steps, "HuberControl.steps")
        if self.blocks is not None:
            check_positive_int(self.blocks, "HuberControl.blocks")


_CONTROLS: dict[str, type] = {
    "clipped": ClippedControl,
    "pmwm": PMWMControl,
    "huber": HuberControl,
}


def _resolve_methods(method: object) -> tuple[str, ...]:
    items = [method] if isinstance(method, str) else method
    if not isinstance(items, Sequence) or isinstance(items, bytes) or not items:
        raise TypeError(
            "method must be one of 'clipped', 'pmwm', 'huber' or a non-empty list of them; "
            f"got {method!r}."
        )
    out: list[str] = []
    for m in items:
        check_choice(m, "method", METHODS)
        if m in out:
            raise ValueError(f"method lists {m!r} twice; name each method once.")
        out.append(m)
    return tuple(out)


def _resolve_controls(control: object, methods: tuple[str, ...]) -> dict[str, Any]:
    given: dict[str, Any] = {}
    if control is None:
        pass
    elif isinstance(control, tuple(_CONTROLS.values())):
        name = next(m for m, cls in _CONTROLS.items() if isinstance(control, cls))
        given[name] = control
    elif isinstance(control, Mapping):
        for name, value in control.items():
            check_choice(name, "control key", METHODS)
            if not isinstance(value, _CONTROLS[name]):
                raise TypeError(
                    f"control[{name!r}] must be a {_CONTROLS[name].__name__}; "
                    f"got {type(value).__name__}."
                )
            given[name] = value
    else:
        raise TypeError(
            "control must be None, a ClippedControl, PMWMControl or HuberControl, or a dict "
            f"mapping method names to them; got {type(control).__name__}."
        )
    unused = [name for name in given if name not in methods]
    if unused:
        raise ValueError(
            f"control is given for {', '.join(unused)} but method={list(methods)!r}; "
            "add the method or drop its control."
        )
    return {m: given.get(m, _CONTROLS[m]()) for m in methods}
