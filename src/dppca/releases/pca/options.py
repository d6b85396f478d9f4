"""The options of a private PCA fit, checked once: :class:`PCAOptions`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.options import (
    Boolean,
    Check,
    Constraint,
    _Checked,
    check_components_option,
    check_k_option,
)
from ...core.scalar_checks import check_bool
from ...core.validation import check_bins_cap
from .split import check_pca_split

__all__ = ["PCAOptions"]


def _check_score(value: object, name: str) -> bool | None:
    return None if value is None else check_bool(value, name)  # None: decided by the plan


def _check_bins(value: object, name: str) -> Any:
    check_bins_cap(value, name)  # the rule and the range against n: the score's plan
    return value


@dataclass(frozen=True, eq=False)
class PCAOptions(_Checked):
    """The settings of a private PCA fit besides the shared ones.

    ``split`` becomes a :class:`~dppca.PCASplit`; ``scales`` (public scales of
    the columns) and ``components`` are checked against p by the plan.
    """

    standardize: bool = True
    k: int | None = None
    components: tuple[int, int] = (1, 2)
    score: bool | None = None
    bins: Any = None
    scales: Any = None
    split: Any = None
    compare: bool = False
    debias: bool = True

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = {
        "standardize": Boolean(),
        "k": Check(check_k_option, (0, 1.5)),
        "components": Check(check_components_option, ("12", 1)),
        "score": Check(_check_score, (1, "yes")),
        "bins": Check(_check_bins, (10**9,)),
        "split": Check(lambda value, name: check_pca_split(value), ("scree",)),
        "compare": Boolean(),
        "debias": Boolean(),
    }
