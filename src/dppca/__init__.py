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
    from .privacy.accounting import (
        Budget,
        Headroom,
        PrivacyCost,
        calibrate_noise,
        compose,
        compose_tight,
        tight_total,
    )
    from .privacy.tradeoff import attacker_sentence, tradeoff_curve
    from .release_io import load_release, save_release
    from .releases.directions import DirectionsResult, dp_pc_dir, pc_dir, plan_pc_dir
    from .releases.loading import LoadingResult, dp_loading, plan_loading
    from .releases.pca import PCAResult, PCASplit, dp_pca, plan_pca
    from .releases.report import plan_report
    from .releases.score import ScoreResult, dp_score, plan_score, sample_points
    from .releases.scree import (
        ClippedControl,
        HuberControl,
        PMWMControl,
        ScreeResult,
        dp_scree,
        plan_scree,
    )
    from .releases.splits import ScoreSplit, ScreeSplit
    from .reporting import Report, report

# Where each public name lives. ``import dppca`` loads none of these modules: a
# name's module is imported at its first use (PEP 562), so a short command (a
# ``--dry-run``, a ledger query) does not pay for the releases it never runs.
_LAZY: dict[str, str] = {
    "spherical_kendall": ".kernels.kendall",
    **dict.fromkeys(
        (
            "Budget",
            "Headroom",
            "PrivacyCost",
            "calibrate_noise",
            "compose",
            "compose_tight",
            "tight_total",
        ),
        ".privacy.accounting",
    ),
    **dict.fromkeys(("attacker_sentence", "tradeoff_curve"), ".privacy.tradeoff"),
    **dict.fromkeys(("load_release", "save_release"), ".release_io"),
    **dict.fromkeys(
        ("DirectionsResult", "dp_pc_dir", "pc_dir", "plan_pc_dir"), ".releases.directions"
    ),
    **dict.fromkeys(("LoadingResult", "dp_loading", "plan_loading"), ".releases.loading"),
    **dict.fromkeys(("PCAResult", "PCASplit", "dp_pca", "plan_pca"), ".releases.pca"),
    "plan_report": ".releases.report",
    **dict.fromkeys(("ScoreResult", "dp_score", "plan_score", "sample_points"), ".releases.score"),
    **dict.fromkeys(
        (
            "ClippedControl",
            "HuberControl",
            "PMWMControl",
            "ScreeResult",
            "dp_scree",
            "plan_scree",
        ),
        ".releases.scree",
    ),
    **dict.fromkeys(("ScoreSplit", "ScreeSplit"), ".releases.splits"),
    **dict.fromkeys(("Report", "report"), ".reporting"),
    # The scikit-learn estimator: scikit-learn is an optional extra (so DPPCA is not
    # in __all__, and ``from dppca import *`` works without it).
    "DPPCA": ".sklearn",
}


def _plan_pca(*args: Any, **kwargs: Any) -> Any:
    """``dppca.plan_pca``, imported at the first standardised picture."""
    from .releases.pca import plan_pca

    return plan_pca(*args, **kwargs)


# dp_loading, dp_scree and dp_score with standardize=True run the one private PCA fit.
register_fit_planner(_plan_pca)


__all__ = [
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


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dppca' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
