"""The checked, public settings of a fit (:func:`dppca.dp_pca`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["PCASettings"]


@dataclass(frozen=True)
class PCASettings:
    """The checked, public settings of a fit (no data, no budget)."""

    analysis: str
    k: int
    components: tuple[int, int]
    score: bool
    compare: bool
    variables: tuple[str, ...]
    box: tuple[NDArray[np.float64], NDArray[np.float64]] | None
    scales: NDArray[np.float64] | None
    scale_source: str | None
    accuracy: str
    calibration: str
    bins: Any
    debias: bool
