"""Type aliases shared across the package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import pandas as pd

    Data = ArrayLike | pd.DataFrame
else:  # the same, without importing pandas at run time (only annotations use it)
    Data = ArrayLike
RandomStateLike = int | np.integer | np.random.Generator | None
Calibration = Literal["classic", "analytic"]
Ties = Literal["error", "zero"]
Design = Literal["exact", "balanced"]
LoadingKind = Literal["vector", "point", "heatmap"]
Sensitivity = Literal["tight", "seed"]
Accuracy = Literal["warn", "error", "ignore"]
SignReference = Literal["private", "nonprivate"]

__all__ = [
    "Accuracy",
    "Calibration",
    "Data",
    "Design",
    "LoadingKind",
    "RandomStateLike",
    "Sensitivity",
    "SignReference",
    "Ties",
]
