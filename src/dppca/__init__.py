"""dppca: differentially private PCA visualization.

Private principal component directions from the Gaussian-noised spherical
Kendall matrix (g-DPPCA), and the PCA pictures built on them.
"""

from __future__ import annotations

from ._version import __version__
from .core.exceptions import (
    AccuracyWarning,
    BudgetExceededError,
    DataWarning,
    InaccurateReleaseError,
    PrivacyWarning,
    TiedRowsError,
)
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
from .releases.standardized import register_fit_planner as _register_fit_planner
from .reporting import Report, report

# dp_loading, dp_scree and dp_score with standardize=True run the one private PCA fit.
_register_fit_planner(plan_pca)

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
    # The scikit-learn estimator is loaded on first use: scikit-learn is an optional extra
    # (so DPPCA is not in __all__, and ``from dppca import *`` works without it).
    if name == "DPPCA":
        from .sklearn import DPPCA

        return DPPCA
    raise AttributeError(f"module 'dppca' has no attribute {name!r}")
