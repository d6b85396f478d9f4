"""The plan of a direction release: :func:`plan_pc_dir` and :class:`DirectionsPlan`.

The plan is priced from its settings and the public shape (n, p); run by
:func:`dppca.releases.engine.execute` it draws its one part, the symmetric Gaussian
noise on the spherical Kendall matrix, or on Kendall's tau matrix over p with
``estimator="tau"`` (:mod:`dppca.releases.directions.tau`), after the balanced
design's random pairing when that design is used. With ``scale="private"``
the p private scales come first (:mod:`dppca.releases.directions.scales`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.data_checks import apply_bounds, check_finite_matrix
from ...core.options import DirectionsOptions, PrivacyOptions, evolve, split_settings
from ...core.progress import ProgressCallback, resolve_progress
from ...core.scalar_checks import check_positive_int
from ...core.validation import check_delta_for_n, check_design_m, check_k
from ...kernels.eigen import top_eigh
from ...kernels.kendall import default_design, kendall_matrix, validate_kendall_input
from ...kernels.tau import kendall_tau_matrix
from ...privacy.cost import PrivacyCost
from ...privacy.mechanisms import (
    kendall_sensitivity,
    kendall_sigma,
    random_pairing,
    symmetric_gaussian_noise,
)
from ...privacy.totals import compose_tight
from ..composite import largest_stretch
from ..engine import CheckedData, Part, parts_of
from ..forecast import Forecast, direction_noise_norm, direction_problem
from ..resolvability import (
    check_release,
    enforce_resolved,
    resolvability_rng,
    warn_dominant_column,
)
from .result import DirectionsResult, orient_signs
from .scales import draw_private_scales, scale_costs
from .tau import check_estimator, released_text, tau_cost

__all__ = [
    "DirectionsPlan",
    "forecast_directions",
    "plan_directions",
    "plan_pc_dir",
    "top_eigen",
]


def top_eigen(matrix: NDArray[np.float64], k: int) -> tuple[NDArray, NDArray]:
    """Top-k eigenpairs of a symmetric matrix, eigenvalues decreasing (internal)."""
    check_finite_matrix(matrix, "matrix to decompose")  # issue 14: no garbage eigenpairs
    values, vectors = top_eigh(matrix, k)  # partial when k << p (issue 24)
    return values, orient_signs(vectors)


@dataclass(frozen=True, eq=False)
class DirectionsPlan:
    """A priced direction release: settings, noise scale, cost and forecast.

    Built by :func:`plan_pc_dir` from public quantities only and run by
    :func:`dppca.releases.engine.execute`; :func:`dppca.dp_pc_dir` is exactly that.
    """

    n: int
    p: int
    privacy: PrivacyOptions
    options: DirectionsOptions
    sigma: float
    cost: PrivacyCost
    forecast: Forecast
    box: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
    progress: ProgressCallback | None = None
    scale_eps: float = 0.0
    kind: str = "directions"

    # The settings read through the option objects (``delta`` checked against
    # n, ``k``, ``design`` and ``m`` resolved against the shape by the plan).
    eps = property(lambda self: self.privacy.eps, doc="The eps asked for.")
    delta = property(lambda self: self.privacy.delta, doc="The delta asked for.")
    calibration = property(lambda self: self.privacy.calibration, doc="Noise calibration.")
    ties = property(lambda self: self.privacy.ties, doc="What a tied pair does.")
    accuracy = property(lambda self: self.privacy.accuracy, doc="What a forecast does.")
    scale = property(lambda self: self.privacy.scale, doc="None or 'private'.")
    missing = property(lambda self: self.privacy.missing, doc="How missing cells are read.")
    k = property(lambda self: self.options.k, doc="The number of PCs released.")
    sensitivity = property(lambda self: self.options.sensitivity, doc="Sensitivity rule.")
    design = property(lambda self: self.options.design, doc="The pair design used.")
    m = property(lambda self: self.options.m, doc="Partners per row (balanced design).")
    estimator = property(lambda self: self.options.estimator, doc="The matrix estimated.")

    def with_design(self, design: str) -> DirectionsPlan:
        """This plan with another pair design (``m`` its default): for time estimates."""
        return dataclasses.replace(self, options=evolve(self.options, design=design, m=None))

    @property
    def parts(self) -> tuple[Part, ...]:
        """The noise draws: the matrix's Gaussian noise (after the private scales)."""
        return parts_of(self.cost)

    def check_input(self, X: Any) -> CheckedData:
        """Check the table once (in memory or Dask); a CheckedData is not checked again.

        A direction release reads nothing but the table.
        """
        checked = (
            X
            if isinstance(X, CheckedData)
            else CheckedData(*validate_kendall_input(X, self.design, missing=self.missing))
        )
        if self.box is not None and not isinstance(checked.values, np.ndarray):
            raise TypeError(
                "bounds are supported for in-memory data only; clip a Dask array first."
            )
        if self.scale == "private" and not isinstance(checked.values, np.ndarray):
            raise TypeError(
                "scale='private' is supported for in-memory data only; compute the "
                "Dask array first or pass scale=None."
            )
        if self.estimator == "tau" and not isinstance(checked.values, np.ndarray):
            raise TypeError(
                "estimator='tau' is supported for in-memory data only; compute the Dask "
                "array first or pass estimator='kendall'."
            )
        return checked

    def screen(self, data: CheckedData) -> None:
        """Nothing to refuse after the budget check."""

    def review(self, result: DirectionsResult) -> DirectionsResult:
        """Warn (or raise, spent) when the released PCs do not stand out from the noise."""
        enforce_resolved(result.resolvability, self.accuracy, result)
        warn_dominant_column(result, self.accuracy)
        return result

    def draw(self, data: CheckedData, rng: np.random.Generator) -> DirectionsResult:
        """Compute the matrix and draw its noise (the executor calls this)."""
        values = data.values
        if self.box is not None:
            values = apply_bounds(np.array(values, dtype=np.float64), self.box)
        scales = None
        if self.scale == "private":
            units = np.ones(self.p) if self.box is None else self.box[1] - self.box[0]
            scales = draw_private_scales(
                np.asarray(values), eps_each=self.scale_eps / self.p, units=units, rng=rng
            )
            values = scales.apply(values)  # post-processing of the scales
        order = random_pairing(self.n, rng) if self.design == "balanced" else None
        result = self.add_noise(self.matrix(values, order), data.variables, rng)
        if scales is None:
            return result
        return dataclasses.replace(
            result, scales=scales.divisors, scale_note=scales.note(data.variables)
        )

    def matrix(self, values: Any, order: NDArray[np.int64] | None) -> NDArray[np.float64]:
        """The matrix before noise: spherical Kendall, or Kendall's tau over p (internal)."""
        if self.estimator == "tau":
            tau = kendall_tau_matrix(
                np.asarray(values),
                design=self.design,
                m=self.m,
                order=order,
                progress=self.progress,
            )
            return tau / self.p
        return kendall_matrix(
            values,
            ties=self.ties,
            design=self.design,
            m=self.m,
            order=order,
            progress=self.progress,
        )

    def add_noise(
        self, matrix: NDArray[np.float64], variables: tuple[str, ...], rng: np.random.Generator
    ) -> DirectionsResult:
        """The plan's Gaussian part on the computed matrix, decomposed (internal)."""
        noisy = symmetric_gaussian_noise(self.p, self.sigma, rng, value=matrix)
        noisy = 0.5 * (noisy + noisy.T)
        if self.estimator == "tau":
            # only the off-diagonal entries are released: the diagonal becomes the
            # public constant 1/p (see dppca.releases.directions.tau.tau_sensitivity)
            np.fill_diagonal(noisy, 1.0 / self.p)
        values, vectors = top_eigen(noisy, self.k)
        # post-processing of the released matrix, on the check's own stream: the
        # noise generator is read for its seed only, never advanced
        check = check_release(
            noisy,
            self.sigma,
            self.k,
            random_state=resolvability_rng(rng),
            vectors=vectors,
            estimator=self.estimator,
        )
        return DirectionsResult(
            directions=vectors,
            eigenvalues=values,
            noisy_matrix=noisy,
            sigma=self.sigma,
            n=self.n,
            variables=variables,
            cost=self.cost,
            calibration=self.calibration,
            sensitivity=self.sensitivity,
            bounds=None if self.box is None else np.column_stack(self.box),
            forecast=self.forecast,
            resolvability=check,
            estimator=self.estimator,
        )


def plan_pc_dir(
    n: int,
    p: int,
    k: int | None = None,
    *,
    variables: tuple[str, ...] | None = None,
    **settings: Any,
) -> DirectionsPlan:
    """Price and forecast a :func:`dppca.dp_pc_dir` release without any data.

    Parameters are those of :func:`dppca.dp_pc_dir` with the data replaced by
    its public shape ``n`` x ``p``; ``variables`` name the columns for
    ``bounds`` given as a mapping (default ``V1 .. Vp``). The settings are
    gathered into a :class:`~dppca.core.options.PrivacyOptions` and a
    :class:`~dppca.core.options.DirectionsOptions` (checked there, once) and
    planned by :func:`plan_directions`. ``design=None`` (the default) is the
    rule :func:`dppca.kernels.kendall.default_design` on the public n and p
    (the balanced design above about 25 CPU-s of the exact kernel); every
    release that makes its own directions (the scree, score, report and PCA
    fit) plans them here, so the rule reaches them all.

    Examples
    --------
    >>> plan = plan_pc_dir(178, 13, eps=1.0, delta=1e-6)
    >>> round(plan.forecast.quantities["direction_noise_norm"], 2), plan.forecast.ok
    (0.34, False)
    >>> tau = plan_pc_dir(178, 13, eps=1.0, delta=1e-6, estimator="tau")
    >>> round(tau.sigma / plan.sigma, 4)  # odd p: the tau bound is sqrt(1 - 1/p^2) smaller
    0.997
    """
    privacy, options = split_settings("plan_pc_dir", {"k": k, **settings}, DirectionsOptions)
    return plan_directions(n, p, privacy, options, variables)


def resolve_design(
    design: str | None, m: int | None, n: int, p: int, estimator: str = "kendall"
) -> tuple[str, int | None]:
    """The pair design and ``m`` a release uses: None is the rule on public n and p.

    ``m`` is checked against n (and defaulted) for the balanced design.
    """
    if design is None:  # a rule on the public n and p (tau's exact counts are cheap)
        design = default_design(n, p) if estimator == "kendall" else "exact"
    return design, (check_design_m(m, n) if design == "balanced" else m)


def plan_own_directions(
    n: int, p: int, privacy: PrivacyOptions, eps: float, delta: float, options: DirectionsOptions
) -> DirectionsPlan:
    """The directions a scree or score release draws for itself, at ``(eps, delta)``.

    The part keeps the parent's calibration and ties; the parent owns the
    rest: it checks the table and the bounds, applies the accuracy rule and
    records the total, so the part plans without them. ``delta`` is the
    part's share of a delta already checked against n.
    """
    own = evolve(
        privacy,
        eps=eps,
        delta=delta,
        bounds=None,
        accuracy="ignore",
        allow_large_delta=True,
        scale=None,
        missing="refuse",
    )
    return plan_directions(n, p, own, options)


def plan_directions(
    n: int,
    p: int,
    privacy: PrivacyOptions,
    options: DirectionsOptions,
    variables: tuple[str, ...] | None = None,
) -> DirectionsPlan:
    """The plan of a direction release from checked option objects.

    Only what needs the public shape is checked here: ``k`` against p,
    ``delta`` against 1/n, ``m`` against n, ``bounds`` against the column
    names (``variables``, default ``V1 .. Vp``) and the estimator against
    the other settings. With ``scale="private"`` a share ``scale_share`` of
    the budget buys the p private scales (p pure parts) and the rest the
    Kendall matrix, both stretched by the factor at which their tight
    composition at ``delta`` is ``eps``
    (:func:`dppca.releases.composite.largest_stretch`); the recorded cost is
    that composition. With ``estimator="tau"`` the matrix is Kendall's tau
    matrix over p, at the same noise scale
    (:func:`dppca.releases.directions.tau.tau_sensitivity`); ``scale`` must
    then be None, ``sensitivity`` ``"tight"`` and ``ties`` ``"zero"``. The
    plan is what :func:`dppca.releases.engine.execute` runs: its ``cost`` is
    what the release records; ``missing`` is how it checks the table (the
    price does not depend on it).
    """
    n, p = check_positive_int(n, "n"), check_positive_int(p, "p")
    k = check_k(options.k, p)
    eps, calibration, sensitivity = privacy.eps, privacy.calibration, options.sensitivity
    delta = check_delta_for_n(privacy.delta, n, privacy.allow_large_delta)
    estimator = check_estimator(
        options.estimator, scale=privacy.scale, sensitivity=sensitivity, ties=privacy.ties
    )
    names = variables if variables is not None else tuple(f"V{j + 1}" for j in range(p))
    box = privacy.box(names)
    design, m = resolve_design(options.design, options.m, n, p, estimator)
    released = released_text(estimator, p, design, m)
    scale_eps, matrix_eps = 0.0, eps
    if privacy.scale == "private":
        scale_eps, matrix_eps = private_scale_split(
            n, eps, delta, privacy.scale_share, names, calibration, sensitivity
        )
    cost = _kendall_cost(n, matrix_eps, delta, calibration, sensitivity, released)
    if privacy.scale == "private":
        cost = compose_tight(
            [*scale_costs(names, scale_eps / p), cost],
            delta,
            released=f"private scales ({p}); {released}",
        )
    sigma = kendall_sigma(n, matrix_eps, delta, calibration, sensitivity)
    if estimator == "tau":  # no scales with tau (check_estimator): the matrix is all
        cost = tau_cost(n, p, matrix_eps, delta, calibration, released)
        assert cost.sigma is not None  # a Gaussian cost carries its sigma
        sigma = cost.sigma
    return DirectionsPlan(
        n=n,
        p=p,
        privacy=evolve(privacy, delta=delta),
        options=evolve(options, k=k, design=design, m=m, estimator=estimator),
        sigma=sigma,
        cost=cost,
        forecast=forecast_directions(n, p, matrix_eps, delta, sigma),
        box=box,
        progress=resolve_progress(options.progress),
        scale_eps=scale_eps,
    )


def private_scale_split(
    n: int,
    eps: float,
    delta: float,
    share: float,
    names: tuple[str, ...],
    calibration: str,
    sensitivity: str,
) -> tuple[float, float]:
    """The eps of the p private scales (together) and of the Kendall matrix.

    Both shares of ``eps`` are stretched by the largest factor at which the
    tight accountant composes the p pure scale parts and the Gaussian part
    to at most ``eps`` at ``delta``
    (:func:`dppca.releases.composite.largest_stretch`, the one solver of
    every composite release).
    """
    p = len(names)

    def parts(c: float) -> list[PrivacyCost]:
        gaussian = _kendall_cost(n, c * (1 - share) * eps, delta, calibration, sensitivity, "")
        return [*scale_costs(names, c * share * eps / p), gaussian]

    c, _ = largest_stretch(parts, lambda costs: costs, eps, delta)
    return c * share * eps, c * (1 - share) * eps


def _kendall_cost(
    n: int, eps: float, delta: float, calibration: str, sensitivity: str, released: str
) -> PrivacyCost:
    """The Gaussian part of a direction release at (eps, delta).

    The same for both estimators: Kendall's tau matrix over p has the
    sensitivity of the spherical Kendall matrix under the tight rule
    (:func:`dppca.releases.directions.tau.tau_sensitivity`).
    """
    return PrivacyCost(
        eps,
        delta,
        f"gaussian ({calibration})",
        released,
        kind="gaussian",
        sensitivity=kendall_sensitivity(n, sensitivity),
        sigma=kendall_sigma(n, eps, delta, calibration, sensitivity),
    )


def check_scale_option(scale: object) -> str | None:
    """``scale`` of a release: None (the data as given) or ``"private"``."""
    if scale is None or scale == "private":
        return None if scale is None else "private"
    raise ValueError(
        f"scale must be None or 'private'; got {scale!r}. Divide the data by public "
        "scales yourself (X / scales) to use known units."
    )


def check_share(share: object) -> float:
    """``scale_share`` as a float in (0, 1)."""
    if isinstance(share, bool) or not isinstance(share, (int, float, np.floating)):
        raise TypeError(f"scale_share must be a real number; got {type(share).__name__}.")
    value = float(share)
    if not 0.0 < value < 1.0:
        raise ValueError(f"scale_share must be in (0, 1); got {share!r}.")
    return value


def forecast_directions(n: int, p: int, eps: float, delta: float, sigma: float) -> Forecast:
    """Data-free forecast of a direction release with Kendall noise scale ``sigma``.

    The spherical Kendall matrix has eigenvalues adding up to 1; the noise's
    operator norm is about ``sigma sqrt(2 p)``
    (:func:`dppca.releases.forecast.direction_noise_norm`). Directions separated by an
    eigenvalue gap ``g`` move by about that norm over ``g``; above
    :data:`dppca.releases.forecast.DIRECTION_NOISE_LIMIT` the directions of a typical
    real table are forecast to be mostly noise.
    """
    norm = direction_noise_norm(p, sigma)
    problem = direction_problem(norm)
    problems = [] if problem is None else [problem]
    return Forecast(
        "directions",
        n,
        p,
        eps,
        delta,
        quantities={"kendall_sigma": sigma, "direction_noise_norm": norm},
        descriptions={
            "kendall_sigma": "standard deviation of the noise on each diagonal entry",
            "direction_noise_norm": "typical operator norm of the noise; directions whose "
            "Kendall eigenvalues differ by less than about twice this are not resolved",
        },
        problems=tuple(problems),
    )
