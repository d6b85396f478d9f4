"""Loading coordinates of private PC directions, for loading plots and heatmaps.

Everything here is post-processing of a released :class:`DirectionsResult`
(its directions, noisy matrix and noise scale), apart from the optional
non-private comparison, which is marked as such wherever it appears.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ._lazy import pandas as pd
from ._progress import ProgressLike
from ._results import ResultMixin, deprecated_name, first_panel
from ._typing import (
    Accuracy,
    Calibration,
    Data,
    Design,
    LoadingKind,
    RandomStateLike,
    Sensitivity,
    SignReference,
    Ties,
)
from ._validation import (
    check_choice,
    check_components,
    check_data,
    check_delta,
    check_eps,
    check_k,
    check_pc_list,
    check_positive_int,
    check_random_state,
    check_sensitivity_work,
    check_variable_names,
)
from .accounting import Budget, PrivacyCost
from .directions import DirectionsResult, dp_pc_dir, pc_dir
from .mechanisms import reperturbed_matrices

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .forecast import Forecast

__all__ = ["LoadingResult", "NoiseSensitivity", "dp_loading", "match_signs"]

#: Largest number of re-perturbations accepted by :meth:`LoadingResult.noise_sensitivity`.
MAX_DRAWS = 100_000


def match_signs(
    vectors: NDArray[np.float64], reference: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Per-column signs (+1 or -1) that turn ``vectors`` towards ``reference``.

    Column ``l`` gets the sign of the inner product of the two ``l``-th columns
    (+1 when it is 0). Multiplying a column by -1 describes the same direction,
    so the signs change how a vector is drawn, never what it means.
    """
    dots = np.einsum("jl,jl->l", vectors, reference)
    signs = np.sign(dots)
    signs[signs == 0] = 1.0
    return signs


@dataclass(frozen=True, eq=False, repr=False)
class NoiseSensitivity:
    """Directions recomputed from the released matrix after adding fresh noise.

    Attributes
    ----------
    samples : ndarray of shape (draws, p, k)
        ``samples[b]`` holds the top-k eigenvectors of ``K_tilde + E_b``, where
        ``K_tilde`` is the released noisy matrix and ``E_b`` is fresh symmetric
        Gaussian noise of the released scale ``sigma``. Each column is turned
        (sign only) towards the matching released direction.
    sigma : float
        The noise scale of the release, reused for every draw.
    variables : tuple of str
        Variable labels, one per row.

    Notes
    -----
    What it shows: how far each loading coordinate moves when noise of the
    mechanism's own size is added to the released matrix, a guide to which
    features of a DP loading plot are within the reach of the privacy noise.
    What it does not show: sampling variability (another sample of n rows
    from the same population), nor the exact distribution of the release
    around the non-private directions (the draws start from the noisy matrix,
    which already carries one dose of noise). No privacy cost: the inputs are
    public.
    """

    samples: NDArray[np.float64]
    sigma: float
    variables: tuple[str, ...]

    def __post_init__(self) -> None:
        self.samples.setflags(write=False)

    @property
    def draws(self) -> int:
        """Number of re-perturbations."""
        return int(self.samples.shape[0])

    def coordinate_samples(self, a: int, b: int) -> NDArray[np.float64]:
        """Array ``(draws, p, 2)`` of recomputed coordinates for PCs ``a`` and ``b`` (1-based)."""
        a, b = check_components((a, b), self.samples.shape[2])
        return np.ascontiguousarray(self.samples[:, :, [a - 1, b - 1]])

    def to_frame(self, a: int = 1, b: int = 2) -> pd.DataFrame:
        """Standard deviation of each recomputed coordinate, one row per variable."""
        xy = self.coordinate_samples(a, b)
        sd = xy.std(axis=0, ddof=1) if self.draws > 1 else np.zeros(xy.shape[1:])
        return pd.DataFrame(sd, index=list(self.variables), columns=[f"sd_PC{a}", f"sd_PC{b}"])

    def __repr__(self) -> str:
        p, k = self.samples.shape[1:]
        return f"NoiseSensitivity(draws={self.draws}, p={p}, k={k}, sigma={self.sigma:.4g})"


@dataclass(frozen=True, eq=False, repr=False)
class LoadingResult(ResultMixin):
    """Loading coordinates of PC directions, ready to tabulate and plot.

    Attributes
    ----------
    directions : DirectionsResult
        The main directions, normally a private :func:`dp_pc_dir` release.
    components : tuple of (int, int) or None
        The default pair of PCs (numbered from 1) for coordinates and plots;
        None only when a single direction is available.
    nonprivate : DirectionsResult or None
        Ordinary sample-covariance directions for comparison (``compare=True``).
        Computed without noise: not private.
    sign_reference : {"private", "nonprivate"}
        In comparisons, which side keeps its signs; the other side's vectors are
        flipped, one by one, to point the same way. With ``"nonprivate"`` the
        displayed DP vectors carry one bit per PC of the non-private
        directions (their signs), so they are no longer private: their columns
        are named ``nonprivate_signs_PC1``, ... and their panel is titled as
        non-private (:attr:`main_private` is False).

    Notes
    -----
    ``private`` (computed) is True only when the object holds nothing but the
    release: with a non-private comparison inside, or non-private
    ``directions``, it is False, although the DP part on its own
    (``directions``, and the DP columns of the tables) keeps its (eps, delta)
    guarantee. ``cost``, ``eps``, ``delta``, ``n``, ``variables``, ``bounds``
    and ``forecast`` are those of ``directions``.
    """

    directions: DirectionsResult
    components: tuple[int, int] | None = (1, 2)
    nonprivate: DirectionsResult | None = None
    sign_reference: str = "private"

    def __post_init__(self) -> None:
        if not isinstance(self.directions, DirectionsResult):
            raise TypeError(
                "directions must be a DirectionsResult (from dp_pc_dir); "
                f"got {type(self.directions).__name__}."
            )
        k = self.directions.k
        if self.components is None:
            if k >= 2:
                raise ValueError("components may be None only when a single direction is kept.")
        else:
            object.__setattr__(self, "components", check_components(self.components, k))
        check_choice(self.sign_reference, "sign_reference", ("private", "nonprivate"))
        if self.nonprivate is not None:
            other = self.nonprivate
            if not isinstance(other, DirectionsResult) or other.private:
                raise TypeError("nonprivate must be a non-private DirectionsResult (pc_dir).")
            if other.variables != self.directions.variables or other.k != k:
                raise ValueError("nonprivate must have the same variables and k as directions.")

    @classmethod
    def from_directions(
        cls, directions: DirectionsResult, components: tuple[int, int] | None = None
    ) -> LoadingResult:
        """Wrap existing directions (private or not) without any new computation.

        ``components`` defaults to ``(1, 2)`` (None when only one direction is kept).
        """
        if components is None and isinstance(directions, DirectionsResult) and directions.k >= 2:
            components = (1, 2)
        return cls(directions=directions, components=components)

    # -- plain facts -------------------------------------------------------------------
    @property
    def variables(self) -> tuple[str, ...]:
        """Variable labels."""
        return self.directions.variables

    @property
    def p(self) -> int:
        """Number of variables."""
        return self.directions.p

    @property
    def k(self) -> int:
        """Number of directions available."""
        return self.directions.k

    @property
    def n(self) -> int:
        """Number of rows of the data (public)."""
        return self.directions.n

    @property
    def cost(self) -> PrivacyCost | None:
        """Privacy cost of the release (the comparison part costs nothing and is not private)."""
        return self.directions.cost

    @property
    def eps(self) -> float | None:
        """Epsilon of the release (None if the directions are not private)."""
        return self.directions.eps

    @property
    def delta(self) -> float | None:
        """Delta of the release (None if the directions are not private)."""
        return self.directions.delta

    @property
    def bounds(self) -> NDArray[np.float64] | None:
        """The public bounds the data were clipped to before the release, if any."""
        return self.directions.bounds

    @property
    def forecast(self) -> Forecast | None:
        """The data-free accuracy forecast of the direction release."""
        return self.directions.forecast

    def nonprivate_parts(self) -> tuple[str, ...]:
        """``"directions"`` if they are not private, ``"nonprivate"`` with a comparison."""
        parts = self.directions.nonprivate_parts()
        return parts + (("nonprivate",) if self.nonprivate is not None else ())

    @property
    def main_private(self) -> bool:
        """Whether the main vectors as displayed are private.

        False for non-private directions, and for private ones whose signs are
        taken from the non-private comparison (``sign_reference="nonprivate"``):
        flipping a column by the sign of its match in the non-private
        directions publishes that sign, one bit per PC about the data.
        """
        return self.directions.private and not (
            self.nonprivate is not None and self.sign_reference == "nonprivate"
        )

    @property
    def has_comparison(self) -> bool:
        """Whether a non-private comparison is included (``compare=True``)."""
        return self.nonprivate is not None

    @property
    def compare(self) -> bool:
        """Deprecated alias of :attr:`has_comparison`."""
        deprecated_name(self, "compare", "has_comparison")
        return self.has_comparison

    # -- coordinates -------------------------------------------------------------------
    def display_vectors(self) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
        """Main and comparison direction matrices with the signs used for display.

        Without a comparison the main directions come back unchanged. With one,
        the side named by ``sign_reference`` is unchanged and each column of
        the other side is multiplied by +1 or -1 to match it (see
        :func:`match_signs`).
        """
        main = np.array(self.directions.directions)
        if self.nonprivate is None:
            return main, None
        other = np.array(self.nonprivate.directions)
        if self.sign_reference == "private":
            other *= match_signs(other, main)
        else:
            main *= match_signs(main, other)
        return main, other

    def _pc_pair(self, a: int | None, b: int | None) -> tuple[int, int]:
        if a is None and b is None:
            if self.components is None:
                raise ValueError("a loading plane needs two directions; this result keeps one.")
            return self.components
        return check_components((a, b), self.k)

    def _prefix(self) -> str:
        if not self.directions.private:
            return "nonprivate_"
        return "" if self.main_private else "nonprivate_signs_"

    def coordinates(self, a: int | None = None, b: int | None = None) -> pd.DataFrame:
        """Loading coordinates ``(v_ja, v_jb)``, one row per variable.

        Parameters
        ----------
        a, b : int, optional
            Two different PC numbers in ``1..k``; by default ``components``.

        Returns
        -------
        pandas.DataFrame
            Index: the variables. Columns ``PC{a}`` and ``PC{b}`` hold the
            entries of the private directions (named ``nonprivate_PC{a}`` ...
            if the main directions are not private, ``nonprivate_signs_PC{a}``
            ... if their signs come from the non-private comparison, which
            makes them non-private). With a comparison, the
            columns ``nonprivate_PC{a}`` and ``nonprivate_PC{b}`` follow; they
            are computed without noise and ``frame.attrs["nonprivate_columns"]``
            lists them.
        """
        a, b = self._pc_pair(a, b)
        main, other = self.display_vectors()
        cols = [a - 1, b - 1]
        prefix = self._prefix()
        frame = pd.DataFrame(
            main[:, cols], index=list(self.variables), columns=[f"{prefix}PC{a}", f"{prefix}PC{b}"]
        )
        nonprivate_cols = list(frame.columns) if prefix else []
        if other is not None:
            names = [f"nonprivate_PC{a}", f"nonprivate_PC{b}"]
            frame[names] = other[:, cols]
            nonprivate_cols += names
        frame.attrs["nonprivate_columns"] = nonprivate_cols
        return frame

    def heatmap_table(
        self,
        variables: list[str] | None = None,
        components: list[int] | None = None,
        *,
        source: SignReference = "private",
    ) -> pd.DataFrame:
        """Signed entries ``v_jl`` for the chosen variables (rows) and PCs (columns).

        Parameters
        ----------
        variables : list of str, optional
            Variable names in the order wanted; default all.
        components : list of int, optional
            PC numbers (from 1) in the order wanted; default all ``k``.
        source : {"private", "nonprivate"}, default="private"
            ``"nonprivate"`` returns the comparison directions (not private;
            needs ``compare=True``). Signs are the display signs.
        """
        source = check_choice(source, "source", ("private", "nonprivate"))
        main, other = self.display_vectors()
        if source == "nonprivate":
            if other is None:
                raise ValueError("no non-private comparison here; call dp_loading(compare=True).")
            matrix, prefix = other, "nonprivate_"
        else:
            matrix, prefix = main, self._prefix()
        names = self.variables if variables is None else check_variable_names(
            variables, self.variables
        )  # fmt: skip
        pcs = tuple(range(1, self.k + 1)) if components is None else check_pc_list(
            components, self.k
        )  # fmt: skip
        rows = [self.variables.index(v) for v in names]
        return pd.DataFrame(
            matrix[np.ix_(rows, [c - 1 for c in pcs])],
            index=list(names),
            columns=[f"{prefix}PC{c}" for c in pcs],
        )

    def to_frame(self) -> pd.DataFrame:
        """The coordinates for the default pair of PCs (see :meth:`coordinates`)."""
        return self.coordinates()

    # -- noise sensitivity -------------------------------------------------------------
    def noise_sensitivity(
        self, draws: int = 200, *, random_state: RandomStateLike = None
    ) -> NoiseSensitivity:
        """Recompute the directions after adding fresh noise to the released matrix.

        Parameters
        ----------
        draws : int, default=200
            Number of re-perturbations B, in [1, 100000].
        random_state : None, int or numpy.random.Generator, default=None
            Source of the fresh noise. It does not protect anything (the
            input is public), but a fixed value makes the picture repeatable.

        Returns
        -------
        NoiseSensitivity

        Notes
        -----
        Privacy: no cost. The released noisy matrix and its noise scale sigma
        are public, so adding more noise to them and decomposing again is
        post-processing. Each recomputed direction is turned (sign only)
        towards the released one, again post-processing.

        Directions are matched by position (PC1 with PC1, ...). Where two
        eigenvalues of the released matrix are within a few sigma of each other
        the order can swap between draws; the spread then also shows that the
        order of those PCs is not determined by the release.
        """
        check_sensitivity_work(draws, self.directions.p)  # issue 14: bounded memory
        draws = check_positive_int(draws, "draws")
        if draws > MAX_DRAWS:
            raise ValueError(f"draws must be at most {MAX_DRAWS}; got {draws}.")
        res = self.directions
        if not res.private or res.noisy_matrix is None or res.sigma is None:
            raise ValueError(
                "noise sensitivity needs a private release (its noisy matrix and sigma); "
                "these directions are not private."
            )
        rng = check_random_state(random_state)
        stack = reperturbed_matrices(res.noisy_matrix, res.sigma, draws, rng)
        values, vectors = np.linalg.eigh(stack)
        order = np.argsort(values, axis=1)[:, ::-1][:, : res.k]
        samples = np.take_along_axis(vectors, order[:, None, :], axis=2)
        reference = np.asarray(res.directions)
        dots = np.einsum("bjl,jl->bl", samples, reference)
        signs = np.where(dots < 0, -1.0, 1.0)
        return NoiseSensitivity(
            samples=np.ascontiguousarray(samples * signs[:, None, :]),
            sigma=float(res.sigma),
            variables=res.variables,
        )

    # -- drawing -----------------------------------------------------------------------
    def plot(self, kind: LoadingKind = "vector", *, ax: Any = None, **kwargs: Any) -> Axes:
        """Draw a loading plot (no new privacy cost).

        Parameters
        ----------
        kind : {"vector", "point", "heatmap"}, default="vector"
            The display; see :func:`dppca.plotting.plot_loading`.
        ax : matplotlib Axes or pair of Axes, optional
            Where to draw; a new figure by default. A comparison draws two
            panels, so it takes a pair.
        **kwargs
            Passed to :func:`dppca.plotting.plot_loading`.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on; with a comparison, that of the first (DP)
            panel, the other panel being in ``ax.figure.axes``. Unlike
            :func:`~dppca.plotting.plot_loading`, which returns the Figure
            of a two-panel plot, every result's ``plot()`` returns an Axes.
        """
        from .plotting import plot_loading

        return first_panel(plot_loading(self, kind=kind, ax=ax, **kwargs), ax)

    def __repr__(self) -> str:
        head = f"LoadingResult(p={self.p}, k={self.k}, components={self.components}, n={self.n}"
        if self.cost is None:
            head += ", non-private"
        else:
            head += f", eps={self.eps:g}, delta={self.delta:g}"
        if self.nonprivate is not None:
            head += ", with non-private comparison"
        return head + ")"


def _check_directions_match(
    directions: object, eps: object, delta: object
) -> tuple[DirectionsResult, float, float]:
    if not isinstance(directions, DirectionsResult):
        raise TypeError(
            f"directions must be the result of dp_pc_dir; got {type(directions).__name__}."
        )
    if not directions.private or directions.cost is None:
        raise ValueError(
            "directions must be a private release (dp_pc_dir); for non-private "
            "directions use LoadingResult.from_directions(pc_dir(X))."
        )
    cost = directions.cost
    for name, given, spent in (("eps", eps, cost.eps), ("delta", delta, cost.delta)):
        if given is None:
            continue
        value = check_eps(given) if name == "eps" else check_delta(given)
        if not math.isclose(value, spent, rel_tol=1e-12, abs_tol=0.0):
            raise ValueError(
                f"{name}={value:g} differs from the {name}={spent:g} of the given directions; "
                f"omit {name} or pass the value the release was made with."
            )
    return directions, cost.eps, cost.delta


def dp_loading(
    X: Data | None,
    *,
    eps: float | None = None,
    delta: float | None = None,
    components: tuple[int, int] = (1, 2),
    k: int | None = None,
    compare: bool = False,
    random_state: RandomStateLike = None,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    directions: DirectionsResult | None = None,
    sign_reference: SignReference = "private",
    budget: Budget | None = None,
    design: Design = "exact",
    m: int | None = None,
    progress: ProgressLike = None,
    sensitivity: Sensitivity = "tight",
    bounds: Any = None,
    accuracy: Accuracy = "warn",
    allow_large_delta: bool = False,
) -> LoadingResult:
    """Private loading coordinates of the PC directions, for loading plots.

    Parameters
    ----------
    X : array-like of shape (n, p), pandas.DataFrame or None
        Numeric data. May be None when ``directions`` is given and
        ``compare=False``.
    eps, delta : float
        Privacy parameters of the release, as in :func:`dp_pc_dir`. Required
        unless ``directions`` is given; then they may be omitted, and if
        passed they must equal the release's values.
    components : (int, int), default=(1, 2)
        The default pair of PCs (numbered from 1) for the coordinate table and
        the plots; two different integers in ``1..k``.
    k : int, default=None
        Number of directions to keep, in [1, p]; None keeps all. The whole
        noisy matrix is released either way, so ``k`` does not change the cost.
    compare : bool, default=False
        Also compute ordinary PCA directions (eigenvectors of the sample
        covariance) for comparison. That part is not private: it is stored in
        ``nonprivate``, named ``nonprivate_*`` in tables, titled "non-private"
        in plots, and the result's ``private`` flag becomes False.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the privacy noise; None (fresh entropy) for a published release.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian noise calibration.
    ties : {"zero", "error"}, default="zero"
        Handling of (nearly) coincident rows; see :func:`dppca.spherical_kendall`.
    directions : DirectionsResult, optional
        An existing :func:`dp_pc_dir` release to reuse: no new noise is drawn
        and no budget is spent, so one release can feed many plots.
    sign_reference : {"private", "nonprivate"}, default="private"
        With ``compare=True``: which side keeps its signs while each vector of
        the other side is flipped, if needed, to point the same way. This is
        for display only and changes no direction.
    budget : Budget, optional
        Passed to :func:`dp_pc_dir` (checked before, charged after). Not used
        when ``directions`` is given.
    design : {"exact", "balanced"}, default="exact"
        Pairs entering the Kendall matrix, as in :func:`dp_pc_dir`; the
        balanced design suits very large tables at the same privacy cost.
    m : int, optional
        Partners per row for ``design="balanced"`` (default from n only).
    progress : None, bool or callable, default=None
        Progress reporting for the Kendall computation, as in :func:`dp_pc_dir`.
    sensitivity, bounds, accuracy, allow_large_delta
        As in :func:`dp_pc_dir`: the Kendall sensitivity rule, public data
        bounds (the data are clipped to them), what to do when the data-free
        forecast says the directions would be noise, and permission for
        ``delta >= 1/n``.

    Returns
    -------
    LoadingResult

    Raises
    ------
    TypeError, ValueError
        For invalid arguments, including ``components`` that are not two
        different integers in ``1..k``, before any computation.
    TiedRowsError
        With ``ties="error"`` when two rows (almost) coincide.

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` and ``eps >= 1``.

    See Also
    --------
    dp_pc_dir : the release the coordinates come from.
    dppca.plotting.plot_loading : vector, point and heatmap displays.

    Notes
    -----
    Privacy: neighbouring datasets have the same ``n`` and differ in one row.
    The only release is that of :func:`dp_pc_dir`, the spherical Kendall
    matrix plus symmetric Gaussian noise calibrated to its Frobenius
    sensitivity ``2 sqrt(2)/n`` (``4/n`` with ``sensitivity="seed"``), costing
    (eps, delta). The loading coordinates are
    entries of its eigenvectors, so they and every plot of them are
    post-processing. The sign of each private vector follows the rule of
    :func:`dp_pc_dir` (largest-magnitude entry positive), which looks at the
    vector only. With ``compare=True`` the sample-covariance eigenvectors are
    computed without noise; they are for the analyst's own check and must not
    be published. Matching signs between the two sides only flips vectors for
    display. With ``ties="error"`` an error reveals that two rows nearly
    coincide; ``ties="zero"`` avoids that.

    Examples
    --------
    >>> from dppca import dp_loading
    >>> from dppca.datasets import load_gau
    >>> res = dp_loading(load_gau(), eps=0.5, delta=1e-5, random_state=0)
    >>> res
    LoadingResult(p=20, k=20, components=(1, 2), n=5000, eps=0.5, delta=1e-05)
    >>> res.coordinates().round(2).head(3)
         PC1   PC2
    V1  0.44  0.03
    V2  0.44 -0.04
    V3  0.46  0.07
    """
    if not isinstance(compare, bool | np.bool_):
        raise TypeError(f"compare must be True or False; got {type(compare).__name__}.")
    sign_reference = check_choice(sign_reference, "sign_reference", ("private", "nonprivate"))
    data = variables = None
    if X is not None:
        data, variables = check_data(X)
    elif directions is None or compare:
        raise TypeError("X is required unless directions is given and compare is False; got None.")
    if directions is None:
        if eps is None or delta is None:
            raise TypeError("eps and delta are required (pass both as numbers).")
        assert data is not None and variables is not None  # X is required here (above)
        p = data.shape[1]
        k = check_k(k, p)
        check_components(components, k)
        frame = pd.DataFrame(data, columns=list(variables), copy=False)
        res = dp_pc_dir(
            frame, k, eps=eps, delta=delta, random_state=random_state,
            calibration=calibration, ties=ties, budget=budget, design=design, m=m,
            progress=progress, sensitivity=sensitivity, bounds=bounds, accuracy=accuracy,
            allow_large_delta=allow_large_delta,
        )  # fmt: skip
    else:
        res, _, _ = _check_directions_match(directions, eps, delta)
        if data is not None and (data.shape[1] != res.p or variables != res.variables):
            raise ValueError(
                "X does not match the given directions: they need the same variables "
                f"(directions have p={res.p})."
            )
        if data is not None and data.shape[0] != res.n:
            raise ValueError(f"X has {data.shape[0]} rows but the directions used n={res.n}.")
        k = check_k(k, res.k)
        check_components(components, k)
        if k < res.k:
            res = DirectionsResult(
                directions=np.array(res.directions[:, :k]),
                eigenvalues=np.array(res.eigenvalues[:k]),
                noisy_matrix=np.array(res.noisy_matrix), sigma=res.sigma, n=res.n,
                variables=res.variables, cost=res.cost, calibration=res.calibration,
                sensitivity=res.sensitivity, bounds=res.bounds, forecast=res.forecast,
            )  # fmt: skip
    nonprivate = None
    if compare:
        assert data is not None and variables is not None  # compare needs X (above)
        nonprivate = pc_dir(pd.DataFrame(data, columns=list(variables)), k)
    return LoadingResult(
        directions=res,
        components=tuple(int(c) for c in components),  # type: ignore[arg-type]
        nonprivate=nonprivate,
        sign_reference=sign_reference,
    )
