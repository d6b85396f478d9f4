"""After a direction release: do the released PCs stand out from the privacy noise?

A free check (post-processing) that reads only what a direction release
publishes: the noisy spherical Kendall matrix, its noise scale sigma and the
number k of directions kept. :func:`assess_directions` returns a
:class:`Resolvability`; every direction release attaches one to its
:class:`~dppca.releases.directions.DirectionsResult` (``resolvability``) and warns,
through :func:`enforce_resolved`, when the directions it judges are not
separated from the noise.

The rule
--------
The released matrix is ``K~ = K + E``, with ``E`` symmetric, N(0, sigma^2)
on the diagonal and N(0, sigma^2 / 2) off it. Whether the top-k eigenvectors
of ``K~`` are close to those of ``K`` depends on the unknown eigenvalue gaps of
``K`` against the size of ``E``. The check uses a parametric bootstrap: it
draws ``B`` fresh noise matrices ``E*`` of the released scale, decomposes
``K~ + E*`` and measures how far its eigenvectors land from the released ones
(the sine of the largest principal angle, sinTheta). ``K~`` stands in for
``K`` and ``E*`` for ``E``; the spread of these distances is the spread the
release itself had around the noise-free directions.

Two things are known about that stand-in (both checked by simulation, see
below). (1) It does not double the noise: ``K~ + E*`` carries variance
``2 sigma^2`` relative to ``K``, but it is compared with ``K~``, exactly one
noise draw away, so the perturbation has the released size. Where the
eigenvalues are well separated, the bootstrap distribution matches the
release's own: on the bundled ``gau`` table at eps = 0.5 the median
bootstrap sinTheta of the top-2 subspace is 0.24 and the median true one
0.23. (2) Where gaps are below the noise, it is optimistic: eigenvalues of
``K + E`` repel each other, so ``K~`` has wider gaps than ``K`` and ``K~ +
E*`` moves less than ``K + E`` did (on a table with Kendall eigenvalues 0.251,
0.216, 0.210 at n = 1000, eps = 2: bootstrap median 0.26, true 0.47).
Hence the rule flags a direction whose bootstrap distance has its upper
quartile (:data:`QUANTILE` = 0.75) above :data:`THRESHOLD` = 0.45, a little below
the 0.5 at which a top-2 subspace is called wrong. A single bootstrap draw
does not know where this release fell in its own distribution (the realised
and the bootstrap distances correlate only weakly), so the rule judges the
distribution: it flags releases with a fair chance of being wrong.

Calibration (simulated releases of the exact mechanism, analytic calibration,
delta = 1e-6, 100 noise draws per cell, B = 50; real tables not bundled:
diabetes 442 x 10 in raw units and standardised, digits 1797 x 64, breast
cancer 569 x 30 in raw units and standardised; eps 0.5, 1, 2): releases whose
top-2 subspace is more than 0.5 from the table's own Kendall directions and
carry no warning, 1.2 %; releases within 0.3 that warn, 12 % (threshold
0.425: 0.7 % and 15 %; 0.5: 1.9 % and 8 %); on the three tables not
bundled with dppca alone, 1.9 % and 17 %. The two targets (at most 2 %
silently wrong, at most 20 % of accurate releases warned) are both met only
near 0.45: the trade-off is steep because a release's own error is only
weakly visible in its released matrix. On the bundled ``gau`` table no
release warned at any of these eps. On synthetic tables with eigenvalue gaps
below the noise the rule is weaker (6 % silently wrong, mostly where two or
three eigenvalues lie within the noise of each other, and about a quarter of
the releases of an exact tie of PC2 and PC3 at a noise norm of 0.03).
``benchmarks/bench_accuracy.py --directions`` measures the rates on the full
release path.

Kendall's tau releases (``estimator="tau"``, the standardised
:func:`dppca.dp_pca`). On real tables in their own units the rule above
missed about one release in twenty in several cells (top-2 error 0.5 to
0.96 while the upper quartile stayed near 0.4): the eigenvalue repulsion of
point (2) is what those tables have, and a single quantile threshold cannot
both catch those releases and stay quiet elsewhere. A tau release is
therefore judged around a corrected stand-in. The released diagonal is the
public constant 1/p, so the draws put noise off the diagonal only; and each
gap ``g`` between neighbouring released eigenvalues is shrunk to
``sqrt(max(g^2 - 4 sigma^2, 0))`` (:func:`shrunk_eigenvalues`, rebuilt
upwards from the smallest, the released eigenvectors kept). The 4: for two
eigenvalues ``a > b`` of the noise-free matrix the released gap is about
``sqrt((a - b + d)^2 + 4 e^2)``, with ``d`` the difference of the noise's
two diagonal entries in their eigenbasis (variance about ``2 sigma^2``) and
``e`` the entry between them (variance about ``sigma^2 / 2``), so the
squared gap grows by about ``4 sigma^2`` on average. The rule then reads the
:data:`TAU_QUANTILE` = 0.9 quantile against the same :data:`THRESHOLD`: a
release is flagged when one draw in ten of the corrected stand-in moves its
judged subspace past 0.45. Measured on releases of
``dppca.dp_pca(standardize=True)`` (six raw-unit tables not bundled with
dppca, 150 to 2000 rows, eps 0.5 / 1 / 2, delta 1e-6, 20 row samples x 3
noise draws per cell, 2340 releases; error against each table's
correlation PCA), on two independent sets of draws: releases wrong with no
warning 0 and 0 (the upper-quartile rule: 22 and 18); right releases warned
65 % and 65 % (rule above: 45 %), 58 % on the cells of 300 rows or more
(rule above: 35 %). Most of those warnings fall on cells where a release
has a real chance of being wrong (for example 42 % wrong at 392 rows and
eps 1); on cells where at most 5 % of releases are wrong, 27 % warn (rule
above: about 5 %). ``benchmarks/bench_direction_check.py`` reproduces the
rates; on the full fits of ``benchmarks/bench_real_units.py --routes
pca-std`` (780 releases, 20 seeds) the directions were wrong without a
warning 6 times before and never after, and 176 of the 262 right releases
warned (116 before).

What is judged. Each released PC gets its own distance (``pc_sin``: the
angle between the bootstrap's and the release's j-th eigenvector), and the
top-``d`` subspace gets one (``subspace_sin``), where ``d`` is ``k`` when
fewer than p directions are kept and 2 (the plane a loading plot draws by
default) when all p are: the whole space has distance 0 and says nothing.
The release warns when that subspace is unresolved and names the PCs in it
whose own distance is above the threshold. PCs that are each unresolved but
span a resolved plane (PC1 and PC2 swapping places) are listed in
``unresolved`` and noted on the figures, without a warning: the plane is
right, the labels PC1 and PC2 are not. A scree release keeps the check on
its ``directions_release`` without warning: its variances are measured along
the released directions, which stays right when a direction is one of many
of equal variance. A score release warns as a direction release does.

Wide tables. The draws follow p: 64 up to p = 256, then fewer (16 at
p = 512, 4 from p = 1024; :func:`replicates_for` states what the coarser
quantile costs), each decomposed only for its top k pairs
(:func:`dppca.kernels.eigen.top_eigh`: Lanczos from p = 1000, started from
the released PC1). Above :data:`CHECK_MAX_P` = 2000 columns a release skips
the check (its ``resolvability`` is None): at p = 5000 one draw is a
200 MB noise matrix and an eigensolve as long as the release's own.

Privacy: the check reads the released matrix, sigma and k only; its draws
come from a stream of their own (:func:`resolvability_rng`), never from the
stream that made the release's noise, so it costs nothing and the noise
stays unexposed.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.exceptions import AccuracyWarning, InaccurateReleaseError
from ..core.types import RandomStateLike
from ..core.validation import HardenedGenerator, check_random_state
from ..core.warnings import _user_stacklevel
from ..kernels.eigen import top_eigh
from ..privacy.mechanisms import symmetric_gaussian_noise

__all__ = [
    "CHECK_MAX_P",
    "DOMINANCE_SHARE",
    "GAP_INFLATION",
    "MIN_REPLICATES",
    "QUANTILE",
    "TAU_METHOD",
    "TAU_QUANTILE",
    "THRESHOLD",
    "Resolvability",
    "assess_directions",
    "check_release",
    "dominant_column",
    "enforce_released",
    "enforce_resolved",
    "pc_list",
    "replicates_for",
    "resolvability_rng",
    "shrunk_eigenvalues",
    "warn_dominant_column",
]

#: Level of the bootstrap quantile the rule reads (the upper quartile).
QUANTILE = 0.75
#: The level the tau rule reads (``estimator="tau"``, gap-corrected).
TAU_QUANTILE = 0.9
#: Each released gap ``g`` is shrunk to ``sqrt(g^2 - GAP_INFLATION sigma^2)``
#: before the bootstrap: the noise inflates a pair's squared gap by about this
#: many sigma^2 (:func:`shrunk_eigenvalues`).
GAP_INFLATION = 4.0
#: A direction or subspace whose bootstrap sinTheta quantile exceeds this is unresolved.
THRESHOLD = 0.45
#: Bootstrap draws for p <= 256; fewer for larger p (:func:`replicates_for`).
REPLICATES = 64
#: The fewest draws the check makes (from p = 1024 on).
MIN_REPLICATES = 4
#: Above this many columns a release skips the check (:func:`check_release` gives
#: None): each draw is a p x p noise matrix and a partial eigensolve, several
#: times the release's own work, and there the data-free forecast, made
#: before spending, is the accuracy statement.
CHECK_MAX_P = 2000
METHOD = "parametric bootstrap"
TAU_METHOD = "gap-corrected parametric bootstrap"
_R = TypeVar("_R")
# An extra spawn-key entry no numpy ``spawn`` produces, so the check's stream
# differs from every child that noise views and synthetic points derive.
_SPAWN_KEY = 0x5245534F  # "RESO"


@dataclass(frozen=True, eq=False, repr=False)
class Resolvability:
    """How far each released PC and the judged subspace are from the noise-free ones.

    Attributes
    ----------
    pc_sin : ndarray of shape (k,)
        Per PC (PC1 first): the :data:`QUANTILE` quantile of the bootstrap
        sinTheta between that eigenvector and the released one.
    subspace_sin : float
        The same quantile for the top-``subspace_dim`` subspace.
    subspace_dim : int
        Dimension of the judged subspace: k, or 2 when all p directions are kept.
    threshold, quantile : float
        The rule: unresolved when the quantile is above the threshold.
    replicates : int
        Bootstrap draws.
    sigma : float
        Noise scale of the release.
    method : str
        ``"parametric bootstrap"``.
    """

    pc_sin: NDArray[np.float64]
    subspace_sin: float
    subspace_dim: int
    threshold: float
    quantile: float
    replicates: int
    sigma: float
    method: str = METHOD

    def __post_init__(self) -> None:
        self.pc_sin.setflags(write=False)

    @property
    def k(self) -> int:
        """Number of PCs assessed."""
        return int(self.pc_sin.shape[0])

    @property
    def unresolved(self) -> tuple[int, ...]:
        """PC numbers (from 1) whose own estimate is above the threshold."""
        return tuple(int(j) + 1 for j in np.flatnonzero(self.pc_sin > self.threshold))

    @property
    def subspace_resolved(self) -> bool:
        """True when the judged top-``subspace_dim`` subspace stands out from the noise."""
        return bool(self.subspace_sin <= self.threshold)

    @property
    def ok(self) -> bool:
        """True when the release has nothing to warn about."""
        return self.subspace_resolved

    def problem(self) -> str | None:
        """The warning's sentence, or None when the judged subspace is resolved."""
        if self.subspace_resolved:
            return None
        named = [j for j in self.unresolved if j <= self.subspace_dim] or [self.subspace_dim]
        verb = "is" if len(named) == 1 else "are"
        corrected = " (its eigenvalue gaps corrected for the noise)"
        return (
            f"{pc_list(named)} {verb} not separated from the privacy noise: the same release "
            f"with fresh noise of its scale{corrected if self.method == TAU_METHOD else ''} "
            f"moves the top-{self.subspace_dim} subspace by sinTheta "
            f"{self.subspace_sin:.2f} (the {self.quantile:.0%} quantile of "
            f"{self.replicates} draws; above {self.threshold:g} is unresolved), so plots of "
            "these components may show noise. Raise eps, use more rows, or plot fewer "
            "components."
        )

    def note(self, components: tuple[int, ...]) -> str | None:
        """A short line for a figure drawing ``components`` (from 1), or None if all resolved."""
        bad = [c for c in components if c in self.unresolved]
        if not bad:
            return None
        plane = max(components) == self.subspace_dim and self.subspace_resolved
        if plane and len(bad) == len(components):
            return f"{pc_list(bad)}: resolved together, not one by one"
        verb = "is" if len(bad) == 1 else "are"
        return f"{pc_list(bad)} {verb} not separated from the privacy noise"

    def to_frame(self) -> Any:
        """One row per PC and one for the subspace: the estimate and whether it is resolved."""
        import pandas as pd

        labels = [f"PC{j + 1}" for j in range(self.k)] + [f"top-{self.subspace_dim} subspace"]
        values = [*map(float, self.pc_sin), float(self.subspace_sin)]
        return pd.DataFrame(
            {"sin_theta": values, "resolved": [v <= self.threshold for v in values]},
            index=pd.Index(labels, name="part"),
        )

    def __repr__(self) -> str:
        return (
            f"Resolvability(k={self.k}, subspace_sin={self.subspace_sin:.3g}, "
            f"unresolved={self.unresolved}, method={self.method!r})"
        )


def pc_list(numbers_: list[int] | tuple[int, ...]) -> str:
    """``"PC2"``, ``"PC2 and PC3"``, ``"PC1, PC2 and PC4"``."""
    names = [f"PC{j}" for j in numbers_]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def resolvability_rng(random_state: RandomStateLike) -> np.random.Generator:
    """The check's own stream, derived from a release's ``random_state`` without advancing it.

    For an int seed or a seeded ``Generator``: a ``SeedSequence`` with the
    seed's entropy and an extra spawn-key entry, so the same seed gives the same
    check while its draws never continue or repeat the noise's stream (nor the
    children other post-processing spawns). For None or the hardened generator
    (fresh entropy): a fresh generator.
    """
    if random_state is None or isinstance(random_state, HardenedGenerator):
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        seq = random_state.bit_generator.seed_seq
        if not isinstance(seq, np.random.SeedSequence):
            return np.random.default_rng()
        return np.random.default_rng(
            np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, _SPAWN_KEY))
        )
    check_random_state(random_state)  # the usual TypeError for anything else
    assert isinstance(random_state, numbers.Integral)
    return np.random.default_rng(
        np.random.SeedSequence(int(random_state), spawn_key=(_SPAWN_KEY,))
    )


def _sin_max(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Sine of the largest principal angle between the column spans of ``a`` and ``b``."""
    s = np.linalg.svd(a.T @ b, compute_uv=False)
    return float(math.sqrt(max(0.0, 1.0 - float(min(s.min(), 1.0)) ** 2)))


def replicates_for(p: int) -> int:
    """Bootstrap draws for a p x p release: 64 up to p = 256, then fewer, at least 4.

    ``round(64 (256 / p)^2)`` above 256 (16 at p = 512, 4 from p = 1024), so
    the check's cost, a noise matrix and a partial eigensolve per draw, stays
    near a few of the release's own eigensolves. The judged quantile is then
    coarser: the 75 % quantile of B draws interpolates between the two
    largest of 4 (B = 4), and each of those lies on the wrong side of the
    distribution's own 75 % quantile with probability 0.26 (the third
    largest above it) or 0.32 (the largest below it). The decision changes
    only for releases whose bootstrap distances straddle the threshold.
    """
    if p <= 256:
        return REPLICATES
    return max(MIN_REPLICATES, round(REPLICATES * (256 / p) ** 2))


def shrunk_eigenvalues(values: NDArray[np.float64], sigma: float) -> NDArray[np.float64]:
    """Released top eigenvalues with each gap shrunk by the noise's inflation.

    ``values`` are the top m eigenvalues of a released matrix (decreasing).
    Each gap ``g`` between neighbours becomes ``sqrt(max(g^2 - c sigma^2, 0))``
    with ``c =`` :data:`GAP_INFLATION`; the lowest value stays where it is and
    the others are rebuilt upwards from it (see the module docstring).

    Examples
    --------
    >>> shrunk_eigenvalues(np.array([0.5, 0.3, 0.1]), 0.05).round(4).tolist()
    [0.4464, 0.2732, 0.1]
    >>> shrunk_eigenvalues(np.array([0.5, 0.45, 0.1]), 0.05).round(4).tolist()
    [0.4354, 0.4354, 0.1]
    """
    gaps = -np.diff(np.asarray(values, dtype=np.float64))
    shrunk = np.sqrt(np.maximum(gaps**2 - GAP_INFLATION * sigma**2, 0.0))
    return values[-1] + np.concatenate([np.cumsum(shrunk[::-1])[::-1], [0.0]])


def check_release(
    noisy_matrix: NDArray[np.float64],
    sigma: float,
    k: int,
    *,
    random_state: RandomStateLike,
    vectors: NDArray[np.float64] | None = None,
    estimator: str = "kendall",
) -> Resolvability | None:
    """The check a release attaches: :func:`assess_directions`, or None above ``CHECK_MAX_P``.

    Above :data:`CHECK_MAX_P` columns the check is skipped (its draws would
    cost several times the release) and the result's ``resolvability`` is
    None: no warning and no figure note come from it.
    """
    if noisy_matrix.shape[0] > CHECK_MAX_P:
        return None
    return assess_directions(
        noisy_matrix, sigma, k, random_state=random_state, vectors=vectors, estimator=estimator
    )


def assess_directions(
    noisy_matrix: ArrayLike,
    sigma: float,
    k: int,
    *,
    random_state: RandomStateLike = None,
    replicates: int | None = None,
    vectors: NDArray[np.float64] | None = None,
    estimator: str = "kendall",
) -> Resolvability:
    """Judge whether the top-k directions of a released matrix stand out from its noise.

    Parameters
    ----------
    noisy_matrix : array-like of shape (p, p)
        The released noisy spherical Kendall matrix (symmetric).
    sigma : float
        Its noise scale: N(0, sigma^2) diagonal, N(0, sigma^2 / 2) off-diagonal.
    k : int
        Directions released, in [1, p].
    random_state : None, int or numpy.random.Generator, default=None
        Source of the bootstrap draws. A release passes the stream of
        :func:`resolvability_rng`, never its noise stream.
    replicates : int, optional
        Bootstrap draws; default :func:`replicates_for` ``(p)`` (64 up to
        p = 256, fewer above).
    vectors : ndarray of shape (p, k), optional
        The released matrix's top-k eigenvectors, when the caller has them
        (any signs); computed here otherwise.
    estimator : {"kendall", "tau"}, default="kendall"
        The release's estimator, which sets the rule. ``"kendall"``: the
        bootstrap around the released matrix, upper quartile. ``"tau"``
        (Kendall's tau matrix over p, whose diagonal is the public constant
        1/p): noise off the diagonal only, around the released matrix with
        every eigenvalue gap shrunk by the noise's inflation
        (:func:`shrunk_eigenvalues`), judged at the :data:`TAU_QUANTILE`
        quantile. See the module docstring.

    Returns
    -------
    Resolvability

    Notes
    -----
    Post-processing: only the arguments are read, so the check costs no
    privacy. The rule and its calibration are in the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.diag([0.6, 0.3, 0.05, 0.05])
    >>> assess_directions(K, 1e-3, 2, random_state=0).unresolved
    ()
    >>> assess_directions(np.diag([0.4, 0.3, 0.299, 0.001]), 0.02, 2, random_state=0).ok
    False
    """
    matrix = np.array(noisy_matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or not np.all(np.isfinite(matrix)):
        raise ValueError(f"noisy_matrix must be a finite square matrix; got shape {matrix.shape}.")
    p = matrix.shape[0]
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= p:
        raise ValueError(f"k must be an integer in [1, p] = [1, {p}]; got {k!r}.")
    if not (isinstance(sigma, numbers.Real) and math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be finite and > 0; got {sigma!r}.")
    k, sigma = int(k), float(sigma)
    if replicates is None:
        replicates = replicates_for(p)
    # post-processing draws: a plain numpy generator (None: fresh entropy, not hardened)
    rng = np.random.default_rng() if random_state is None else check_random_state(random_state)
    matrix = 0.5 * (matrix + matrix.T)
    dim = k if k < p else min(2, p)
    tau = estimator == "tau"
    base, level, method = matrix, QUANTILE, METHOD
    if tau:
        # the stand-in for the noise-free matrix: the released one with every
        # eigenvalue gap shrunk by the noise's inflation (the module docstring)
        values, basis = np.linalg.eigh(matrix)
        values, basis = values[::-1], basis[:, ::-1]
        base = (basis * shrunk_eigenvalues(values, sigma)) @ basis.T
        base = 0.5 * (base + base.T)
        level, method = TAU_QUANTILE, TAU_METHOD
    if vectors is None or np.shape(vectors) != (p, k):
        released = top_eigh(matrix, k)[1]  # partial when k << p
    else:
        released = np.asarray(vectors, dtype=np.float64)
    pcs = np.empty((replicates, k))
    subspace = np.empty(replicates)
    for b in range(replicates):
        # fresh noise of the release's law, from the check's own stream
        noisy = symmetric_gaussian_noise(p, sigma, rng, value=base)
        if tau:  # the release's diagonal is a public constant: no noise on it
            np.fill_diagonal(noisy, np.diag(base))
        # Lanczos (p >= 1000) to 1e-8: the distances are judged against 0.45
        v = top_eigh(noisy, k, start=released[:, 0], tol=1e-8)[1]
        del noisy
        cos = np.abs(np.einsum("ij,ij->j", v, released))
        pcs[b] = np.sqrt(np.clip(1.0 - cos**2, 0.0, 1.0))
        subspace[b] = _sin_max(v[:, :dim], released[:, :dim]) if dim < p else 0.0
    return Resolvability(
        pc_sin=np.quantile(pcs, level, axis=0),
        subspace_sin=float(np.quantile(subspace, level)),
        subspace_dim=dim,
        threshold=THRESHOLD,
        quantile=level,
        replicates=replicates,
        sigma=sigma,
        method=method,
    )


def enforce_resolved(
    resolvability: Resolvability | None, accuracy: str, result: Any, release: str = "direction"
) -> None:
    """Act on the check after a release: warn, raise with ``result`` attached, or nothing.

    The release has been made and its cost recorded by then (a check on the
    released matrix cannot come earlier), so ``accuracy="error"`` raises an
    :class:`~dppca.core.exceptions.InaccurateReleaseError` whose ``result`` is the
    release, spent and usable.
    """
    if resolvability is None or accuracy == "ignore":
        return
    problem = resolvability.problem()
    if problem is None:
        return
    text = f"the private {release} release: {problem}"
    if accuracy == "error":
        raise InaccurateReleaseError(
            text + " The release was made and its cost recorded; it is on this error's "
            "`result`. Pass accuracy='warn' to receive it with a warning instead.",
            result=result,
        )
    warnings.warn(text, AccuracyWarning, stacklevel=_user_stacklevel())


def enforce_released(result: _R, accuracy: str, release: str, *, own: bool) -> _R:
    """:func:`enforce_resolved` on the directions a scree or score release made (``own``).

    Directions given by the caller were judged when they were released; only
    those released by this call are judged here. Returns ``result``.
    """
    if own:
        directions = getattr(result, "directions_release", None)
        enforce_resolved(getattr(directions, "resolvability", None), accuracy, result, release)
    return result


#: A column whose released diagonal entry, less two noise sds, is at least this
#: share of the released trace is named after a release (:func:`warn_dominant_column`).
DOMINANCE_SHARE = 0.5


def dominant_column(
    noisy: NDArray[np.float64], sigma: float, variables: Sequence[str]
) -> str | None:
    """A sentence naming the column that carries most of the released matrix, or None.

    The spherical Kendall matrix has trace 1, and its diagonal entry ``j`` is
    the mean share of column ``j`` in the squared length of the rows'
    differences. When one entry, less two noise sds, is at least
    ``DOMINANCE_SHARE`` of the released trace, the leading direction mostly
    follows that column, which on a table in unrelated units means its units.
    Reads the released matrix and the public sigma only (post-processing).
    """
    diag = np.diag(np.asarray(noisy, dtype=np.float64))
    total = float(diag.sum())
    j = int(np.argmax(diag))
    if total <= 0 or (diag[j] - 2.0 * sigma) / total < DOMINANCE_SHARE:
        return None
    return (
        f"column {variables[j]!r} carries {diag[j] / total:.0%} of the released matrix's "
        "trace, so the directions mostly follow that column. If the columns are measured "
        "in unrelated units, this reflects the units: use the standardised analysis "
        "(standardize=True, or dppca.dp_pca; the same in any units) or public scales."
    )


def warn_dominant_column(result: Any, accuracy: str) -> None:
    """Warn (unless ``accuracy="ignore"``) when :func:`dominant_column` names a column."""
    if accuracy == "ignore" or getattr(result, "estimator", "kendall") != "kendall":
        return
    note = dominant_column(result.noisy_matrix, result.sigma, result.variables)
    if note is not None:
        warnings.warn(
            f"the private direction release: {note}",
            AccuracyWarning,
            stacklevel=_user_stacklevel(),
        )
