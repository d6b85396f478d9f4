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
from .privacy.accounting import Budget
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
from .releases.scree._controls import ClippedControl, HuberControl, PMWMControl
from .releases.scree._plan import plan_scree
from .releases.scree._release import dp_scree
from .releases.scree._result import ScreeResult
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
