"""The result of a direction release, and the sign rule its directions follow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ...core.lazy import pandas as pd
from ...core.types import LoadingKind
from ...privacy.cost import PrivacyCost
from ..forecast import Forecast
from ..protocol import ResultMixin, drawer
from ..resolvability import Resolvability

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["DirectionsResult", "orient_signs"]


@dataclass(frozen=True, eq=False, repr=False)
class DirectionsResult(ResultMixin):
    """PC directions and the matrix they were computed from.

    Attributes
    ----------
    directions : ndarray of shape (p, k)
        Orthonormal columns, PC1 first, ordered by decreasing eigenvalue.
    eigenvalues : ndarray of shape (k,)
        Eigenvalues of ``matrix`` for the returned columns. For a private
        result these belong to the released noisy matrix: they are
        not variances and do not measure explained variance.
    noisy_matrix : ndarray of shape (p, p) or None
        The released noisy matrix (private results only): the spherical
        Kendall matrix K-tilde, or Kendall's tau matrix over p with
        ``estimator="tau"``. Any function of it is post-processing.
    sigma : float or None
        Standard deviation of the diagonal noise (sigma_K); None if not private.
    n : int
        Number of rows of the data (public under the replacement model).
    variables : tuple of str
        Variable labels, one per row of ``directions``.
    cost : PrivacyCost or None
        The privacy cost of the release; None if not private.
    calibration : str or None
        ``"classic"`` or ``"analytic"`` for private results.
    private : bool
        Computed: True for a release (it has a ``cost``), False for
        :func:`~dppca.pc_dir`, whose output is computed from the sample covariance
        without any noise; not a constructor argument.
    sensitivity : str or None
        ``"tight"`` (``2 sqrt(2) / n``) or ``"seed"`` (``4 / n``): the Frobenius
        sensitivity the noise was calibrated to.
    bounds : ndarray of shape (p, 2) or None
        The public bounds the data were clipped to before the release, if any.
    forecast : Forecast or None
        The data-free accuracy forecast made before the release.
    resolvability : Resolvability or None
        The post-release check of a private release: how far each PC and the
        judged subspace are from the noise-free ones, and which PCs are not
        separated from the noise (:func:`dppca.releases.resolvability.assess_directions`).
    scales : ndarray of shape (p,) or None
        With ``scale="private"``: what the data were divided by before the
        Kendall matrix, the released per-variable scales (1 for a column whose
        scale was released as about 0, see ``scale_note``).
    scale_note : str or None
        Names the columns whose private scale was about 0 (left unscaled).
    estimator : str or None
        The matrix that was released with noise: ``"kendall"`` (the spherical
        Kendall matrix) or ``"tau"`` (Kendall's tau matrix over p); None for
        :func:`~dppca.pc_dir`.

    Examples
    --------
    >>> from dppca import dp_pc_dir
    >>> from dppca.datasets import load_wine
    >>> res = dp_pc_dir(load_wine(), 2, eps=1.0, delta=1e-6, random_state=0)
    >>> res
    DirectionsResult(p=13, k=2, n=178, eps=1, delta=1e-06)
    >>> res.directions.shape, res.to_frame().columns.tolist()
    ((13, 2), ['PC1', 'PC2'])
    >>> bool(abs(res.directions.T @ res.directions - [[1, 0], [0, 1]]).max() < 1e-12)
    True
    """

    directions: NDArray[np.float64]
    eigenvalues: NDArray[np.float64]
    noisy_matrix: NDArray[np.float64] | None
    sigma: float | None
    n: int
    variables: tuple[str, ...]
    cost: PrivacyCost | None
    calibration: str | None = None
    sensitivity: str | None = None
    bounds: NDArray[np.float64] | None = None
    forecast: Forecast | None = None
    resolvability: Resolvability | None = None
    scales: NDArray[np.float64] | None = None
    scale_note: str | None = None
    estimator: str | None = "kendall"

    def __post_init__(self) -> None:
        arrays = (self.directions, self.eigenvalues, self.noisy_matrix, self.bounds, self.scales)
        for a in arrays:
            if a is not None:
                a.setflags(write=False)

    def nonprivate_parts(self) -> tuple[str, ...]:
        """``("directions",)`` for non-private directions (:func:`~dppca.pc_dir`), else empty."""
        return () if self.cost is not None else ("directions",)

    @property
    def has_comparison(self) -> bool:
        """Always False: directions carry no comparison part."""
        return False

    @property
    def p(self) -> int:
        """Number of variables."""
        return int(self.directions.shape[0])

    @property
    def k(self) -> int:
        """Number of directions kept."""
        return int(self.directions.shape[1])

    @property
    def eps(self) -> float | None:
        """Epsilon spent on this release (None if not private)."""
        return None if self.cost is None else self.cost.eps

    @property
    def delta(self) -> float | None:
        """Delta spent on this release (None if not private)."""
        return None if self.cost is None else self.cost.delta

    @property
    def pc_labels(self) -> tuple[str, ...]:
        """Column labels ``PC1, ..., PCk``."""
        return tuple(f"PC{i + 1}" for i in range(self.k))

    def to_frame(self) -> pd.DataFrame:
        """The directions as a table: variables as index, columns ``PC1``, ``PC2``, ..."""
        return pd.DataFrame(
            np.array(self.directions), index=list(self.variables), columns=list(self.pc_labels)
        )

    def plot(self, kind: LoadingKind = "vector", *, ax: Any = None, **kwargs: Any) -> Axes:
        """Draw a loading plot of these directions (no new privacy cost).

        Parameters
        ----------
        kind : {"vector", "point", "heatmap"}, default="vector"
            The display; see :func:`dppca.plotting.plot_loading`.
        ax : matplotlib Axes, optional
            Where to draw; a new figure by default.
        **kwargs
            Passed to :func:`dppca.plotting.plot_loading`.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on, as for every result's ``plot()``.
        """
        return drawer(self)(self, kind=kind, ax=ax, **kwargs)

    def __repr__(self) -> str:
        head = f"DirectionsResult(p={self.p}, k={self.k}, n={self.n}"
        if self.cost is None:
            return head + ", non-private)"
        return head + f", eps={self.cost.eps:.4g}, delta={self.cost.delta:.3g})"


def orient_signs(vectors: NDArray[np.float64]) -> NDArray[np.float64]:
    """Flip each column so that its largest-magnitude entry is positive.

    The rule looks only at the vectors themselves (ties go to the first such
    entry), so applied to private vectors it is post-processing.
    """
    vectors = np.array(vectors, dtype=np.float64, copy=True)
    if vectors.size == 0:
        return vectors
    lead = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[lead, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return vectors * signs
