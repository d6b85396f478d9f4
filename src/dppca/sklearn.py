"""A scikit-learn estimator for one private PCA: :class:`DPPCA`.

Written against scikit-learn's public API only (``BaseEstimator``,
``TransformerMixin``, ``ClassNamePrefixFeaturesOutMixin`` and the validation
helpers); it does not subclass scikit-learn's ``PCA``, so changes inside that
class cannot break it. scikit-learn is an optional extra: ``pip install
"dppca[sklearn]"``.
"""

from __future__ import annotations

import copy
import numbers
import warnings
from collections.abc import Mapping
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


from .core.data_checks import check_table
from .core.exceptions import PrivacyWarning
from .core.lazy import is_dataframe
from .core.options import document_design
from .core.tables import check_missing, tidy_table
from .core.types import Calibration, Design, Ties
from .privacy.accounting import Accountant
from .privacy.cost import PrivacyCost
from .releases.directions.plan import plan_pc_dir
from .releases.directions.result import DirectionsResult
from .releases.engine import execute
from .releases.pca.release import dp_pca
from .releases.pca.result import PCAResult
from .releases.pca.split import PCASplit
from .releases.scree.result import ScreeResult

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


@document_design
class DPPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """One private PCA as a scikit-learn transformer.

    ``fit`` is one private PCA of the table (:func:`dppca.dp_pca`): the
    analysis is chosen by ``standardize`` before any data are read, and the
    directions, the variances and (when the analysis needs them) the scales
    that ``transform`` divides by all come from that one fit, which records
    exactly ``(eps, delta)``.

    Parameters
    ----------
    n_components : int, default=None
        Number of directions kept, in [1, n_features]; None keeps all.
    eps : float, default=1.0
        Privacy parameter of each fit, > 0.
    delta : float, default=1e-5
        Privacy parameter of each fit, in (0, 1).
    standardize : bool, default=True
        True: the standardised (correlation) PCA, the same in any units of the
        columns; the directions come from Kendall's tau and the variances from
        the same release at no extra cost, and ``transform`` divides the rows
        by the fit's scales (public ``scales``, else the widths of public
        ``bounds``, else private scales released by the fit with its score
        plot). False: the PCA of the table in its units (the spherical
        Kendall directions, the seed's method), or of the table divided by
        public ``scales``; see ``variances``.
    scales : array-like of shape (n_features,), default=None
        Public scales of the columns (a codebook's, never the data's); see
        :func:`dppca.dp_pca`.
    bounds : object, default=None
        Public bounds of the columns (see :func:`dppca.dp_pca`); the data are
        clipped to them.
    split : PCASplit or dict, default=None
        Weights of the parts of the fit (see :class:`dppca.PCASplit`).
    variances : bool, default=False
        Only with ``standardize=False`` and no ``scales``: False releases the
        directions alone (:func:`dppca.dp_pc_dir`, the whole budget on them;
        no ``explained_variance_``); True releases a fit with its private
        variances. A standardised or scaled fit always has its variances.
    budget : Accountant, default=None
        An accountant (:class:`dppca.Budget` in memory, or a ledger's
        :class:`~dppca.privacy.ledger.LedgerBudget`): each fit
        is checked against it before any data are read and charged
        ``(eps, delta)``; a fit it cannot afford raises
        ``BudgetExceededError``. The same accountant is shared by every
        clone (``clone``, ``Pipeline``, ``GridSearchCV``), so every fit of a
        search is charged to it.
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What a fit does with a forecast or post-release accuracy problem.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise. None (fresh entropy) for a release you publish;
        a known seed lets anyone remove the noise.
    calibration : {"classic", "analytic"}, default="analytic"
        Gaussian noise calibration.
    ties : {"error", "zero"}, default="zero"
        Rows that (almost) coincide in the directions-only release:
        ``"zero"`` lets such pairs contribute nothing (no leak); ``"error"``
        raises, which reveals they exist. The fit uses ``"zero"``.
    public_transform : bool, default=False
        The caller's declaration that the data passed to ``transform`` are
        public. False: ``transform`` warns that the scores are not private.
    missing : {"refuse", "zero"}, default="refuse"
        Missing values in ``fit``: refused, or (``"zero"``) analysed with the
        zero-term rule of :func:`dppca.core.tables.check_missing` (n stays
        every row; a missing cell adds nothing to a pair's term). Either way a
        DataFrame's booleans are analysed as 0/1 and its non-numeric columns
        are left out with a ``DataWarning`` (:mod:`dppca.core.tables`), in
        ``fit`` and ``transform`` alike.
    dropna : bool, default=False
        The old spelling of ``missing="zero"``.
    design : {"exact", "balanced"} or None, default=None
        %(design)s
        A standardised fit uses Kendall's tau.
    m : int, optional
        %(m)s

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Private directions, one per row, PC1 first.
    explained_variance_ : ndarray of shape (n_components,)
        Private variances along the directions (of the standardised table
        when standardised).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Private proportions of the total variance.
    scale_ : ndarray of shape (n_features,) or None
        What ``transform`` divides the columns by (public or private scales);
        None in the table's units.
    analysis_ : str
        ``"standardized"``, ``"units"`` or ``"scaled"``.
    pca_ : PCAResult or None
        The fit (``pca_.plot(kind)`` draws its pictures, ``pca_.summary()``
        its tables); None for the directions-only release.
    cost_ : PrivacyCost
        What the last fit spent.
    directions_ : DirectionsResult
        The private directions release (save it with :func:`dppca.save_release`).
    scree_ : ScreeResult or None
        The private variances (None for the directions-only release).
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
    another: pass ``budget`` to have each one charged (and refused once the
    total is spent). An in-memory :class:`dppca.Budget` is shared by clones
    in one process; with ``n_jobs`` above 1 the workers get copies, so use a
    ledger's budget (kept in its file) there. Leave ``random_state=None`` in
    a search: an integer seed gives every fit the same noise draw, and the
    difference of two such releases on overlapping rows cancels the noise.

    ``transform(X)`` returns ``(X / scale_) @ components_.T`` (``X @
    components_.T`` in the table's units): the rows are not centred (no mean
    is released; neither Kendall matrix needs one), so the scores differ
    from centred PCA scores by a constant shift per component. The
    components and scales are private, but each score is a function of its
    own row, computed without noise: scores of private data are not private,
    hence the warning unless ``public_transform=True``. ``inverse_transform``
    maps scores back with ``(Z @ components_) * scale_``.

    Scikit-learn's estimator checks pass with ``public_transform=True``
    (tests/test_sklearn.py lists the ones skipped and why).

    Examples
    --------
    >>> from dppca import DPPCA
    >>> from dppca.datasets import load_gau
    >>> est = DPPCA(n_components=2, eps=0.5, delta=1e-5, random_state=0).fit(load_gau())
    >>> est.components_.shape, est.analysis_
    ((2, 20), 'standardized')
    >>> print(est.cost_)
    (eps=0.5, delta=1e-05)
    """

    def __init__(
        self,
        n_components: int | None = None,
        *,
        eps: float = 1.0,
        delta: float = 1e-5,
        standardize: bool = True,
        scales: Any = None,
        bounds: Any = None,
        split: PCASplit | Mapping[str, float] | None = None,
        variances: bool = False,
        budget: Accountant | None = None,
        accuracy: str = "warn",
        random_state: Any = None,
        calibration: Calibration = "analytic",
        ties: Ties = "zero",
        public_transform: bool = False,
        missing: str = "refuse",
        dropna: bool = False,
        design: Design | None = None,
        m: int | None = None,
    ) -> None:
        self.n_components = n_components
        self.eps = eps
        self.delta = delta
        self.standardize = standardize
        self.scales = scales
        self.bounds = bounds
        self.split = split
        self.variances = variances
        self.budget = budget
        self.accuracy = accuracy
        self.random_state = random_state
        self.calibration = calibration
        self.ties = ties
        self.public_transform = public_transform
        self.missing = missing
        self.dropna = dropna
        self.design = design
        self.m = m

    # -- fitting ----------------------------------------------------------------------
    def _directions_only(self) -> bool:
        """Whether ``fit`` releases the directions alone (the seed's release)."""
        for name in ("standardize", "variances"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False; got {getattr(self, name)!r}.")
        return not self.standardize and self.scales is None and not self.variances

    def fit(self, X: Any, y: Any = None) -> DPPCA:
        """One private PCA of ``X`` (see the class docstring); ``y`` is ignored.

        Each call spends (eps, delta) on the rows of ``X`` and charges ``budget``.
        """
        alone = self._directions_only()
        missing = check_missing(self.missing, self.dropna)
        X = _messy_table_rule(X, missing=missing)
        finite: dict[str, Any] = {}
        if missing == "zero":  # NaN cells are the zero-term rule's; inf is still refused
            finite = {_FINITE_ARG: "allow-nan"}
        data = _validate_data(
            self,
            X,
            dtype=np.float64,
            ensure_min_samples=2 if alone else 4,
            ensure_min_features=1 if alone else 2,  # a fit has a PC1-PC2 plane
            reset=True,
            **finite,
        )
        names = getattr(self, "feature_names_in_", None)
        variables = (
            tuple(str(c) for c in names)
            if names is not None
            else tuple(f"x{j}" for j in range(data.shape[1]))
        )
        import pandas as pd

        frame = pd.DataFrame(data, columns=list(variables), copy=False)
        n, p = data.shape
        k = self.n_components
        if k is not None and (
            isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= p
        ):
            raise ValueError(
                f"n_components must be None or an integer in [1, n_features] = [1, {p}]; "
                f"got {k!r}."
            )
        keep = p if k is None else int(k)
        fit: PCAResult | None = None
        if alone:
            plan = plan_pc_dir(
                n,
                p,
                k,
                eps=self.eps,
                delta=self.delta,
                calibration=self.calibration,
                ties=self.ties,
                bounds=self.bounds,
                accuracy=self.accuracy,
                variables=variables,
                missing=missing,
                design=self.design,
                m=self.m,
            )
            directions = execute(plan, frame, budget=self.budget, random_state=self.random_state)
            scree, cost, scale, analysis = None, directions.cost, None, "units"
            self._explained_variance: NDArray[np.float64] | None = None
            self._explained_variance_ratio: NDArray[np.float64] | None = None
        else:
            fit = self._fit_pca(frame, keep, missing)
            directions, scree, cost, analysis = fit.directions, fit.scree, fit.cost, fit.analysis
            scale = None if fit.scales is None else np.array(fit.scales, dtype=np.float64)
            self._explained_variance = np.array(fit.variances[:keep], dtype=np.float64)
            self._explained_variance_ratio = np.array(fit.pve[:keep], dtype=np.float64)
        assert isinstance(directions, DirectionsResult)
        self.pca_: PCAResult | None = fit
        self.analysis_: str = analysis
        self.directions_ = directions
        self.scree_: ScreeResult | None = scree
        self.scale_: NDArray[np.float64] | None = scale
        self.components_ = np.array(directions.directions[:, :keep].T, dtype=np.float64)
        self.n_components_ = int(self.components_.shape[0])
        self.cost_: PrivacyCost | None = cost
        return self

    def _fit_pca(self, frame: Any, keep: int, missing: str) -> PCAResult:
        """The one private PCA of ``frame`` (see the class docstring)."""
        if self.ties != "zero":
            raise ValueError(
                f"ties={self.ties!r} applies to the directions-only release "
                "(standardize=False, variances=False); a fit uses ties='zero'."
            )
        return dp_pca(
            frame,
            eps=self.eps,
            delta=self.delta,
            standardize=self.standardize,
            k=max(keep, 2),
            # a standardised fit without public scales gets its private scales with its
            # score plot; otherwise the score plot is not needed here
            score=self.standardize and self.scales is None and self.bounds is None,
            bounds=self.bounds,
            scales=self.scales,
            split=self.split,
            calibration=self.calibration,
            accuracy=self.accuracy,
            budget=self.budget,
            random_state=self.random_state,
            missing=missing,
            design=self.design,
            m=self.m,
        )

    @property
    def _n_features_out(self) -> int:
        return self.n_components_

    # -- private variances --------------------------------------------------------------
    def _variance(self, name: str, value: Any) -> NDArray[np.float64]:
        if not hasattr(self, "components_"):
            raise AttributeError(f"{name} is set by fit; this DPPCA is not fitted yet.")
        if value is None:
            raise AttributeError(
                f"{name} is not released by the directions-only release "
                "(standardize=False, variances=False); refit with standardize=True (the "
                "variances are free) or DPPCA(..., variances=True)."
            )
        return value

    @property
    def explained_variance_(self) -> NDArray[np.float64]:
        """Private variances along the components (not for the directions-only release)."""
        return self._variance("explained_variance_", getattr(self, "_explained_variance", None))

    @property
    def explained_variance_ratio_(self) -> NDArray[np.float64]:
        """Private proportions of the total variance (not for the directions-only release)."""
        return self._variance(
            "explained_variance_ratio_", getattr(self, "_explained_variance_ratio", None)
        )

    # -- transforming -------------------------------------------------------------------
    def transform(self, X: Any) -> NDArray[np.float64]:
        """Project ``X`` (divided by ``scale_``) on the private components; no centring.

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
        if self.scale_ is not None:
            data = data / self.scale_
        return data @ self.components_.T

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> NDArray[np.float64]:
        """``fit(X).transform(X)``: one release, then the (non-private) row scores."""
        return self.fit(X, y).transform(X)

    def inverse_transform(self, X: Any) -> NDArray[np.float64]:
        """Map scores back to feature space: ``(X @ components_) * scale_`` (post-processing)."""
        check_is_fitted(self, "components_")
        scores = np.asarray(X, dtype=np.float64)
        if scores.ndim != 2 or scores.shape[1] != self.n_components_:
            raise ValueError(
                f"X must have shape (n, {self.n_components_}) (one column per component); "
                f"got {scores.shape}."
            )
        back = scores @ self.components_
        return back if self.scale_ is None else back * self.scale_

    # -- scikit-learn protocol ----------------------------------------------------------
    def __sklearn_clone__(self) -> DPPCA:
        """A clone that shares this estimator's accountant (``budget``), never a copy.

        scikit-learn deep-copies parameters that are not estimators; a copied
        accountant would let each clone spend the whole total again.
        """
        shell = copy.copy(self)
        shell.budget = None
        new: DPPCA = BaseEstimator.__sklearn_clone__(shell)
        new.budget = self.budget
        return new

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags
