"""Type aliases shared across the package."""

from __future__ import annotations

from typing import Literal, Union

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

Data = Union[ArrayLike, pd.DataFrame]
RandomStateLike = Union[None, int, np.integer, np.random.Generator]
Calibration = Literal["classic", "analytic"]
Ties = Literal["error", "zero"]

__all__ = ["Calibration", "Data", "RandomStateLike", "Ties"]
