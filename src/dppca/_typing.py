"""Type aliases shared across the package."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

Data = ArrayLike | pd.DataFrame
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
