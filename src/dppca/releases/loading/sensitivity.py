"""How far loadings move under fresh noise of the release's own size.

:class:`NoiseSensitivity` holds the directions recomputed from the released
noisy matrix after adding fresh noise of the released scale; computing it is
post-processing of public values, at no privacy cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...core.lazy import pandas as pd
from ...core.scalar_checks import check_positive_int
from ...core.types import RandomStateLike
from ...core.validation import check_components, check_sensitivity_work, post_processing_rng
from ...privacy.mechanisms import reperturbed_matrices
from ..directions.result import DirectionsResult

__all__ = ["MAX_DRAWS", "NoiseSensitivity", "match_signs", "reperturbed_directions"]

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


def reperturbed_directions(
    res: DirectionsResult, draws: int, random_state: RandomStateLike
) -> NoiseSensitivity:
    """The body of :meth:`LoadingResult.noise_sensitivity` (internal); see there."""
    check_sensitivity_work(draws, res.p)  # issue 14: bounded memory
    draws = check_positive_int(draws, "draws")
    if draws > MAX_DRAWS:
        raise ValueError(f"draws must be at most {MAX_DRAWS}; got {draws}.")
    if not res.private or res.noisy_matrix is None or res.sigma is None:
        raise ValueError(
            "noise sensitivity needs a private release (its noisy matrix and sigma); "
            "these directions are not private."
        )
    rng = post_processing_rng(random_state)  # never the noise stream
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
