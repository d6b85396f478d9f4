"""One private PCA of a table: :func:`dp_pca`, its plan and its result."""

from .plan import PCAPlan, plan_pca
from .release import dp_pca
from .result import PCAResult, PCASummary
from .split import PCASplit

__all__ = ["PCAPlan", "PCAResult", "PCASplit", "PCASummary", "dp_pca", "plan_pca"]
