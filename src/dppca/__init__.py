"""dppca: differentially private PCA visualization.

Private principal component directions from the Gaussian-noised spherical
Kendall matrix (g-DPPCA), and the PCA pictures built on them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .core.exceptions import (
    AccuracyWarning,
    BudgetExceededError,
    DataWarning,
    InaccurateReleaseError,
    PrivacyWarning,
    TiedRowsError,
)
from .releases._fit_registry import register_fit_planner

if TYPE_CHECKING:  # type checkers and readers see every public name where it lives
    from .kernels.kendall import spherical_kendall
    from .privacy.accounting import Accountant, Budget, MemoryStore
    from .privacy.calibration import calibrate_noise
    from .privacy.cost import PrivacyCost, compose
    from .privacy.headroom import Headroom
    from .privacy.totals import compose_tight, tight_total
    from .privacy.tradeoff import attacker_sentence, tradeoff_curve
    from .release_io import load_release, save_release
    from .releases.directions.plan import plan_pc_dir
    from .releases.directions.release import dp_pc_dir, pc_dir
    from .releases.directions.result import DirectionsResult
    from .releases.loading.plan import plan_loading
    from .releases.loading.release import dp_loading
    from .releases.loading.result import LoadingResult
    from .releases.pca.plan import plan_pca
    from .releases.pca.release import dp_pca
    from .releases.pca.result import PCAResult
    from .releases.pca.split import PCASplit
    from .releases.report import plan_report
    from .releases.score.plan import plan_score
    from .releases.score.release import dp_score
    from .releases.score.result import ScoreResult, sample_points
    from .releases.scree.controls import ClippedControl, HuberControl, PMWMControl
    from .releases.scree.plan import plan_scree
    from .releases.scree.release import dp_scree
    from .releases.scree.result import ScreeResult
    from .releases.splits import ScoreSplit, ScreeSplit
    from .reporting import Report, report

# Where each public name lives. ``import dppca`` loads none of these modules: a
# name's module is imported at its first use (PEP 562), so a short command (a
# ``--dry-run``, a ledger query) does not pay for the releases it never runs.
_LAZY: dict[str, str] = {
    "spherical_kendall": ".kernels.kendall",
    **dict.fromkeys(("Accountant", "Budget", "MemoryStore"), ".privacy.accounting"),
    "Headroom": ".privacy.headroom",
    **dict.fromkeys(("PrivacyCost", "compose"), ".privacy.cost"),
    "calibrate_noise": ".privacy.calibration",
    **dict.fromkeys(("compose_tight", "tight_total"), ".privacy.totals"),
    **dict.fromkeys(("attacker_sentence", "tradeoff_curve"), ".privacy.tradeoff"),
    **dict.fromkeys(("load_release", "save_release"), ".release_io"),
    "DirectionsResult": ".releases.directions.result",
    **dict.fromkeys(("dp_pc_dir", "pc_dir"), ".releases.directions.release"),
    "plan_pc_dir": ".releases.directions.plan",
    "LoadingResult": ".releases.loading.result",
    "dp_loading": ".releases.loading.release",
    "plan_loading": ".releases.loading.plan",
    "PCAResult": ".releases.pca.result",
    "PCASplit": ".releases.pca.split",
    "dp_pca": ".releases.pca.release",
    "plan_pca": ".releases.pca.plan",
    "plan_report": ".releases.report",
    **dict.fromkeys(("ScoreResult", "sample_points"), ".releases.score.result"),
    "dp_score": ".releases.score.release",
    "plan_score": ".releases.score.plan",
    **dict.fromkeys(("ClippedControl", "HuberControl", "PMWMControl"), ".releases.scree.controls"),
    "ScreeResult": ".releases.scree.result",
    "dp_scree": ".releases.scree.release",
    "plan_scree": ".releases.scree.plan",
    **dict.fromkeys(("ScoreSplit", "ScreeSplit"), ".releases.splits"),
    **dict.fromkeys(("Report", "report"), ".reporting"),
    # The scikit-learn estimator: scikit-learn is an optional extra (so DPPCA is not
    # in __all__, and ``from dppca import *`` works without it).
    "DPPCA": ".sklearn",
}


def _plan_pca(*args: Any, **kwargs: Any) -> Any:
    """``dppca.plan_pca``, imported at the first standardised picture."""
    from .releases.pca.plan import plan_pca

    return plan_pca(*args, **kwargs)


# dp_loading, dp_scree and dp_score with standardize=True run the one private PCA fit.
register_fit_planner(_plan_pca)


__all__ = [
    "Accountant",
    "AccuracyWarning",
    "Budget",
    "BudgetExceededError",
    "ClippedControl",
    "DataWarning",
    "DirectionsResult",
    "Headroom",
    "HuberControl",
    "InaccurateReleaseError",
    "LoadingResult",
    "MemoryStore",
    "PCAResult",
    "PCASplit",
    "PMWMControl",
    "PrivacyCost",
    "PrivacyWarning",
    "Report",
    "ScoreResult",
    "ScoreSplit",
    "ScreeResult",
    "ScreeSplit",
    "TiedRowsError",
    "__version__",
    "attacker_sentence",
    "calibrate_noise",
    "compose",
    "compose_tight",
    "dp_loading",
    "dp_pc_dir",
    "dp_pca",
    "dp_score",
    "dp_scree",
    "load_release",
    "pc_dir",
    "plan_loading",
    "plan_pc_dir",
    "plan_pca",
    "plan_report",
    "plan_score",
    "plan_scree",
    "report",
    "sample_points",
    "save_release",
    "spherical_kendall",
    "tight_total",
    "tradeoff_curve",
]


# Subpackages reachable as attributes after a bare ``import dppca``, as
# ``dppca.datasets.load_iris()``; each is imported at its first use.
_SUBPACKAGES = frozenset({"datasets", "plotting", "privacy", "sklearn"})


def __getattr__(name: str) -> object:
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dppca' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
