"""A scikit-learn estimator for private PCA directions: :class:`DPPCA`.

Written against scikit-learn's public API only (``BaseEstimator``,
``TransformerMixin``, ``ClassNamePrefixFeaturesOutMixin`` and the validation
helpers); it does not subclass scikit-learn's ``PCA``, so changes inside that
class cannot break it. scikit-learn is an optional extra: ``pip install
"dppca[sklearn]"``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

try:
    from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
    from sklearn.utils.validation import check_is_fitted
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError(
        'dppca.DPPCA needs scikit-learn; install it with: python3 -m pip install "dppca[sklearn]"'
    ) from exc

try:  # scikit-learn >= 1.6 (which also renamed force_all_finite)
    from sklearn.utils.validation import validate_data as _validate_data

    _FINITE_ARG = "ensure_all_finite"
except ImportError:  # pragma: no cover - scikit-learn 1.3 to 1.5
    _FINITE_ARG = "force_all_finite"

    def _validate_data(estimator: Any, X: Any, **kwargs: Any) -> Any:
        return estimator._validate_data(X, **kwargs)


from .core.exceptions import PrivacyWarning
from .core.lazy import is_dataframe
from .core.tables import check_missing, tidy_table
from .core.types import Calibration, Ties
from .core.validation import check_table
from .privacy.accounting import PrivacyCost
from .releases.directions import DirectionsResult, plan_pc_dir
from .releases.engine import ReleasePlan, execute
from .releases.scree import ScreeResult, ScreeSplit, plan_scree

__all__ = ["DPPCA"]


def _messy_table_rule(X: Any, *, missing: str = "refuse", rows: bool = True) -> Any:
    """The one rule for messy tables (:mod:`dppca.core.tables`) before scikit-learn's checks.

    A DataFrame loses its non-numeric columns (with a ``DataWarning`` from
    ``fit``) and has its booleans as 0/1; with ``missing="zero"`` (``fit``
    only, arrays too) missing cells stay NaN for the zero-term rule. ``rows=False`` (``transform``,
    which must return one score per row) leaves rows and missing values to
    scikit-learn's own checks.
    """
    if not rows:
        if not is_dataframe(X):
            return X
        import pandas as pd

        # the same columns as fit, every row kept (a missing cell: scikit-learn refuses it)
        table = tidy_table(X, missing="zero", min_cols=0)
        return pd.DataFrame(table.data, columns=list(table.variables), index=X.index)
    if not (is_dataframe(X) or missing == "zero"):
        return X  # an array: scikit-learn's checks, as for any estimator
    table = check_table(X, min_rows=1, missing=missing)
    if not is_dataframe(X):
        return table.data
    import pandas as pd

    return pd.DataFrame(table.data, columns=list(table.variables))


_TRANSFORM_WARNING = (
    "the scores returned by transform are computed from each row without noise, so they "
    "are NOT differentially private: publish them only for public data. Pass "
    "public_transform=True to declare that the data you transform are public (this "
    "silences the warning); components_ stay private either way."
)


class DPPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Differentially private PCA directions as a scikit-learn transformer.

    ``fit`` releases private principal directions (g-DPPCA: the spherical
    Kendall matrix with Gaussian noise, :func:`dppca.dp_pc_dir`) and, with
    ``variances=True``, private variances along them (:func:`dppca.dp_scree`,
    which then releases the directions itself and shares the budget).

    Parameters
    ----------
    n_components : int, default=None
        Number of directions kept, in [1, n_features]; None keeps all. The
        whole noisy matrix is released either way, so this does not change
        the cost.
    eps : float, default=1.0
        Privacy parameter of each fit, > 0.
    delta : float, default=1e-5
        Privacy parameter of each fit, in (0, 1).
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise. None (fresh entropy) for a release you publish;
        a known seed lets anyone remove the noise.
    calibration : {"classic", "analytic"}, default="analytic"
        Gaussian noise calibration.
    ties : {"error", "zero"}, default="zero"
        Rows that (almost) coincide: ``"zero"`` lets such pairs contribute
        nothing (no leak); ``"error"`` raises, which reveals they exist.
    bounds : object, default=None
        Public bounds on the data, passed to the library functions when they
        accept a ``bounds`` argument (else a non-None value raises).
    variances : bool, default=False
        Also release private variances (``explained_variance_`` and
        ``explained_variance_ratio_``), sharing (eps, delta) with the directions.
    direction_share : float, default=0.35
        With ``variances=True``, the share of (eps, delta) for the directions,
        passed to :func:`dppca.dp_scree` as ``ScreeSplit(directions=...)`` (a
        plain number here, as scikit-learn parameters are).
    public_transform : bool, default=False
        The caller's declaration that the data passed to ``transform`` are
        public (for example new public data, or a use where the row scores
        are never shown). False: ``transform`` warns that the scores are not
        private.
    missing : {"refuse", "zero"}, default="refuse"
        Missing values in ``fit``: refused, or (``"zero"``) analysed with the
        zero-term rule of :func:`dppca.core.tables.check_missing` (n stays
        every row; a missing cell adds nothing to a pair's term). Either way a
        DataFrame's booleans are analysed as 0/1 and its non-numeric columns
        are left out with a ``DataWarning`` (:mod:`dppca.core.tables`), in
        ``fit`` and ``transform`` alike.
    dropna : bool, default=False
        The old spelling of ``missing="zero"``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Private directions, one per row, PC1 first.
    explained_variance_ : ndarray of shape (n_components,)
        Private variances along the directions (``variances=True`` only).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Private proportions of the (private) total variance (``variances=True`` only).
    cost_ : PrivacyCost
        What the last fit spent.
    directions_ : DirectionsResult
        The private directions release (save it with :func:`dppca.save_release`).
    scree_ : ScreeResult or None
        The private variance release (``variances=True``).
    n_components_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    Notes
    -----
    Privacy: neighbouring datasets have the same n and differ in one row;
    n is public. Each call of ``fit`` (or ``fit_transform``) is a new
    release costing (eps, delta) on the rows it sees. In a ``Pipeline`` that
    is one release per fit; in ``GridSearchCV`` or ``cross_val_score`` every
    fold and every parameter candidate is a separate fit, and the refit
    another, so a row used in m fits has spent m * (eps, delta) by basic
    composition: count them in your budget. Leave ``random_state=None`` there:
    an integer seed gives every fit (every clone, every fold) the same noise
    draw, and the difference of two such releases on overlapping rows cancels
    the noise, so the guarantee above would not hold.

    ``transform(X)`` returns ``X @ components_.T``: the rows are not centred
    (no mean is released; the spherical Kendall matrix needs none), so the
    scores differ from centred PCA scores by a constant shift per component.
    The components are private, but each score is a function of its own row,
    computed without noise: scores of private data are not private, hence
    the warning unless ``public_transform=True``. ``inverse_transform`` maps
    scores back with ``Z @ components_`` (a projection through the origin).

    Scikit-learn's estimator checks pass with ``public_transform=True``
    (tests/test_sklearn.py lists the ones skipped and why).

    Examples
    --------
    >>> from dppca import DPPCA
    >>> from dppca.datasets import load_gau
    >>> est = DPPCA(n_components=2, eps=0.5, delta=1e-5, random_state=0).fit(load_gau())
    >>> est.components_.shape
    (2, 20)
    >>> print(est.cost_)
    (eps=0.5, delta=1e-05)
    """

    def __init__(
        self,
        n_components: int | None = None,
        *,
        eps: float = 1.0,
        delta: float = 1e-5,
        random_state: Any = None,
        calibration: Calibration = "analytic",
        ties: Ties = "zero",
        bounds: Any = None,
        variances: bool = False,
        direction_share: float = 0.35,
        public_transform: bool = False,
        missing: str = "refuse",
        dropna: bool = False,
    ) -> None:
        self.n_components = n_components
        self.eps = eps
        self.delta = delta
        self.random_state = random_state
        self.calibration = calibration
        self.ties = ties
        self.bounds = bounds
        self.variances = variances
        self.direction_share = direction_share
        self.public_transform = public_transform
        self.missing = missing
        self.dropna = dropna

    # -- fitting ----------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> DPPCA:
        """Release private directions (and variances) of ``X``; ``y`` is ignored.

        Each call spends (eps, delta) on the rows of ``X``.
        """
        if not isinstance(self.variances, bool):
            raise TypeError(f"variances must be True or False; got {self.variances!r}.")
        min_rows = 4 if self.variances else 2
        missing = check_missing(self.missing, self.dropna)
        X = _messy_table_rule(X, missing=missing)
        finite: dict[str, Any] = {}
        if missing == "zero":  # NaN cells are the zero-term rule's; inf is still refused
            finite = {_FINITE_ARG: "allow-nan"}
        data = _validate_data(
            self, X, dtype=np.float64, ensure_min_samples=min_rows, reset=True, **finite
        )
        names = getattr(self, "feature_names_in_", None)
        variables = (
            tuple(str(c) for c in names)
            if names is not None
            else tuple(f"x{j}" for j in range(data.shape[1]))
        )
        import pandas as pd

        frame = pd.DataFrame(data, columns=list(variables), copy=False)
        k = self.n_components
        p = data.shape[1]
        if k is not None and (
            isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= p
        ):
            raise ValueError(
                f"n_components must be None or an integer in [1, n_features] = [1, {p}]; "
                f"got {k!r}."
            )
        cost: PrivacyCost | None
        n = data.shape[0]
        common = {
            "eps": self.eps,
            "delta": self.delta,
            "calibration": self.calibration,
            "ties": self.ties,
            "bounds": self.bounds,
            "variables": variables,
            "missing": missing,
        }
        if self.variances:
            plan: ReleasePlan = plan_scree(
                n, p, k, split=ScreeSplit(directions=self.direction_share), **common
            )
            scree = execute(plan, frame, random_state=self.random_state)
            directions = scree.directions_release
            cost = scree.cost
            self._explained_variance: NDArray[np.float64] | None = np.array(
                scree.scree, dtype=np.float64
            )
            self._explained_variance_ratio: NDArray[np.float64] | None = np.array(
                scree.pve_total, dtype=np.float64
            )
        else:
            plan = plan_pc_dir(n, p, k, **common)
            directions = execute(plan, frame, random_state=self.random_state)
            scree = None
            cost = directions.cost
            self._explained_variance = self._explained_variance_ratio = None
        assert isinstance(directions, DirectionsResult)
        self.directions_ = directions
        self.scree_: ScreeResult | None = scree
        self.components_ = np.array(directions.directions.T, dtype=np.float64)
        self.n_components_ = int(self.components_.shape[0])
        self.cost_: PrivacyCost | None = cost
        return self

    @property
    def _n_features_out(self) -> int:
        return self.n_components_

    # -- private variances --------------------------------------------------------------
    def _variance(self, name: str, value: Any) -> NDArray[np.float64]:
        if not hasattr(self, "components_"):
            raise AttributeError(f"{name} is set by fit; this DPPCA is not fitted yet.")
        if value is None:
            raise AttributeError(
                f"{name} is released only with variances=True (private variances cost part "
                "of the budget); refit with DPPCA(..., variances=True)."
            )
        return value

    @property
    def explained_variance_(self) -> NDArray[np.float64]:
        """Private variances along the components (``variances=True`` only)."""
        return self._variance("explained_variance_", getattr(self, "_explained_variance", None))

    @property
    def explained_variance_ratio_(self) -> NDArray[np.float64]:
        """Private proportions of the total variance (``variances=True`` only)."""
        return self._variance(
            "explained_variance_ratio_", getattr(self, "_explained_variance_ratio", None)
        )

    # -- transforming -------------------------------------------------------------------
    def transform(self, X: Any) -> NDArray[np.float64]:
        """Project ``X`` on the private components (no centring); see the class Notes.

        Warns
        -----
        PrivacyWarning
            Unless ``public_transform=True``: the scores are not private.
        """
        check_is_fitted(self, "components_")
        data = _validate_data(
            self, _messy_table_rule(X, rows=False), dtype=np.float64, reset=False
        )
        if not self.public_transform:
            warnings.warn(_TRANSFORM_WARNING, PrivacyWarning, stacklevel=2)
        return data @ self.components_.T

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> NDArray[np.float64]:
        """``fit(X).transform(X)``: one release, then the (non-private) row scores."""
        return self.fit(X, y).transform(X)

    def inverse_transform(self, X: Any) -> NDArray[np.float64]:
        """Map scores back to feature space: ``X @ components_`` (post-processing)."""
        check_is_fitted(self, "components_")
        scores = np.asarray(X, dtype=np.float64)
        if scores.ndim != 2 or scores.shape[1] != self.n_components_:
            raise ValueError(
                f"X must have shape (n, {self.n_components_}) (one column per component); "
                f"got {scores.shape}."
            )
        return scores @ self.components_

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags
