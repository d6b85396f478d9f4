"""The checked, public settings of a fit (:func:`dppca.dp_pca`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from ...core.options import PrivacyOptions
    from .options import PCAOptions

__all__ = ["PCASettings"]


@dataclass(frozen=True)
class PCASettings:
    """The checked, public settings of a fit (no data, no budget).

    The fields are what the plan derives from the shape and the options;
    the options and privacy settings themselves are held, checked once, and
    the rest reads through them.
    """

    analysis: str
    k: int
    components: tuple[int, int]
    score: bool
    variables: tuple[str, ...]
    box: tuple[NDArray[np.float64], NDArray[np.float64]] | None
    scales: NDArray[np.float64] | None
    scale_source: str | None
    options: PCAOptions
    privacy: PrivacyOptions

    # What the fit's options and privacy settings say, read through them.
    compare = property(lambda self: self.options.compare, doc="Compare with the exact fit.")
    bins = property(lambda self: self.options.bins, doc="The score plot's bins.")
    debias = property(lambda self: self.options.debias, doc="Debias the eigenvalues.")
    accuracy = property(lambda self: self.privacy.accuracy, doc="The accuracy rule.")
    calibration = property(lambda self: self.privacy.calibration, doc="The noise calibration.")
    missing = property(lambda self: self.privacy.missing, doc="The missing-value rule.")
