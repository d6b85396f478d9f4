"""The checked, public settings of a fit (:func:`dppca.dp_pca`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ...core.validation import check_components, check_k

if TYPE_CHECKING:
    from ...core.options import PrivacyOptions
    from .options import PCAOptions

__all__ = ["PCASettings"]


def _check_scales(scales: object, p: int) -> NDArray[np.float64]:
    """Public scales: p finite values > 0."""
    try:
        values = np.array(scales, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(
            f"scales must be an array of p = {p} positive numbers; got {type(scales).__name__}."
        ) from None
    if values.shape != (p,) or not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(
            f"scales must hold p = {p} finite numbers > 0 (public scales of the columns, "
            "from a codebook, never from the data)."
        )
    return values


@dataclass(frozen=True)
class PCASettings:
    """The checked, public settings of a fit (no data, no budget).

    Held: the fit's options and privacy settings (each checked once, where
    it was made) and the names of the p columns. Derived from them and
    checked when the settings are built: what the fit needs of the shape
    (``components`` and ``k`` against p, the bounds and public scales against
    the columns) and the analysis they choose, ``"standardized"``,
    ``"units"`` or ``"scaled"``, with the source of its scales.
    """

    options: PCAOptions
    privacy: PrivacyOptions
    variables: tuple[str, ...]

    def __post_init__(self) -> None:
        # every derived setting is checked here, once, in this order
        _ = self.components, self.box, self._scaling, self.k

    # What the fit's options and privacy settings say, read through them.
    compare = property(lambda self: self.options.compare, doc="Compare with the exact fit.")
    bins = property(lambda self: self.options.bins, doc="The score plot's bins.")
    debias = property(lambda self: self.options.debias, doc="Debias the eigenvalues.")
    accuracy = property(lambda self: self.privacy.accuracy, doc="The accuracy rule.")
    calibration = property(lambda self: self.privacy.calibration, doc="The noise calibration.")
    missing = property(lambda self: self.privacy.missing, doc="The missing-value rule.")
    score = property(
        lambda self: True if self.options.score is None else self.options.score,
        doc="Whether the fit draws a score plot (``score=None`` means yes).",
    )

    @cached_property
    def components(self) -> tuple[int, int]:
        """The two PCs of the score plot, checked against p."""
        return check_components(self.options.components, len(self.variables))

    @cached_property
    def box(self) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """The public bounds as (lower, upper) arrays over the columns, or None."""
        return self.privacy.box(self.variables)

    @cached_property
    def _scaling(self) -> tuple[str, NDArray[np.float64] | None, str | None]:
        """The analysis, its public scales and where its scales come from."""
        p = len(self.variables)
        options, box = self.options, self.box
        public = None if options.scales is None else _check_scales(options.scales, p)
        if not options.standardize:
            return ("units", None, None) if public is None else ("scaled", public, "public")
        source = None
        if public is not None:
            source = "public"
        elif box is not None:
            public, source = box[1] - box[0], "bounds"
        elif self.score:
            source = "private"
        if public is not None and not np.all(public > 0):
            raise ValueError("bounds must have upper > lower in every column.")
        return "standardized", public, source

    analysis = property(lambda self: self._scaling[0], doc="The analysis the options choose.")
    scales = property(lambda self: self._scaling[1], doc="Public scales of the columns, or None.")
    scale_source = property(
        lambda self: self._scaling[2], doc='``"public"``, ``"bounds"``, ``"private"`` or None.'
    )

    @property
    def parts(self) -> tuple[str, ...]:
        """The parts of the fit that spend, in draw order."""
        used: list[str] = []
        if self.scale_source == "private":
            used.append("scales")
        used.append("directions")
        if self.analysis != "standardized":
            used.append("scree")
        if self.score:
            if self.box is None:
                used.append("frame")
            used.append("score")
        return tuple(used)

    @cached_property
    def shares(self) -> dict[str, float]:
        """The basic split of eps over :attr:`parts` (the options' ``split``)."""
        return self.options.split.shares(self.parts, self.analysis)

    @cached_property
    def k(self) -> int:
        """The components estimated: at least those the score plot shows."""
        p, top = len(self.variables), max(self.components)
        default = p if self.analysis == "standardized" else min(p, max(3, top))
        return max(check_k(self.options.k, p) if self.options.k is not None else default, top)
