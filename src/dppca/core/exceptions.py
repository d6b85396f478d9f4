"""Exceptions and warnings raised by dppca."""

from __future__ import annotations

__all__ = [
    "AccuracyWarning",
    "BudgetExceededError",
    "DataWarning",
    "InaccurateReleaseError",
    "PrivacyWarning",
    "TiedRowsError",
]


class PrivacyWarning(UserWarning):
    """A setting weakens or qualifies the differential-privacy guarantee.

    Raised, for example, when the classic Gaussian calibration is used with
    ``eps >= 1``, where its textbook proof no longer applies.

    Examples
    --------
    >>> import warnings
    >>> from dppca import PrivacyWarning, dp_pc_dir
    >>> from dppca.datasets import load_wine
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     res = dp_pc_dir(load_wine(), 2, eps=2.0, delta=1e-6, calibration="classic",
    ...                     random_state=0)
    >>> any(issubclass(w.category, PrivacyWarning) for w in caught)
    True
    """


class DataWarning(UserWarning):
    """A note about the table itself: non-numeric columns left out.

    Issued by the one rule for messy tables (:mod:`dppca.core.tables`) on every
    face: as this warning in Python, as a line on stderr on the command line,
    on the page in the app. It names columns only, never a value or a count
    of rows (nor which columns have missing cells), and says nothing about
    privacy (column types are part of the table's layout; see
    :mod:`dppca.core.tables` for what of it depends on the cells).

    Examples
    --------
    >>> import warnings
    >>> from dppca import DataWarning, dp_pc_dir
    >>> from dppca.datasets import load_iris_g
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     res = dp_pc_dir(load_iris_g(), 2, eps=1.0, delta=1e-6, random_state=0)
    >>> [str(w.message) for w in caught if w.category is DataWarning]  # doctest: +ELLIPSIS
    [...species...]
    >>> res.variables
    ('sepal_length', 'sepal_width', 'petal_length', 'petal_width')
    """


class BudgetExceededError(ValueError):
    """A release would spend more privacy budget than remains.

    Examples
    --------
    >>> from dppca import Budget, BudgetExceededError, PrivacyCost
    >>> budget = Budget(eps=1.0, delta=1e-5)
    >>> try:
    ...     budget.spend(PrivacyCost(2.0, 1e-6, "gaussian", "directions"))
    ... except BudgetExceededError:
    ...     print("refused; spent:", budget.spent)
    refused; spent: (0.0, 0.0)
    """


class TiedRowsError(ValueError):
    """Two rows are too close for the spherical Kendall matrix.

    The spherical Kendall matrix normalises every pairwise difference. A pair
    whose difference cannot be normalised (exact duplicates: two equal rows)
    is a tie; the rule has no unit, so rescaling the data
    changes nothing. The error itself reveals
    that such a pair exists in the data; pass ``ties="zero"`` to let those pairs
    contribute nothing instead, which keeps the privacy guarantee.

    Examples
    --------
    >>> import numpy as np
    >>> from dppca import TiedRowsError, spherical_kendall
    >>> X = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]])  # rows 0 and 1 are equal
    >>> try:
    ...     spherical_kendall(X, ties="error")
    ... except TiedRowsError as err:
    ...     print(err.n_pairs)
    1
    >>> spherical_kendall(X, ties="zero").shape  # the tied pair contributes nothing
    (2, 2)
    """

    def __init__(self, message: str, *, n_pairs: int, example: tuple[int, int]) -> None:
        super().__init__(message)
        self.n_pairs = n_pairs
        self.example = example


class AccuracyWarning(UserWarning):
    """A setting is likely to make a private output useless (not a privacy problem).

    Decided from public quantities only (n, eps, options), never from the data:
    for example a private score frame whose quantile scans have too little
    budget for the number of rows.

    Examples
    --------
    >>> import warnings
    >>> from dppca import AccuracyWarning, dp_pc_dir
    >>> from dppca.datasets import load_iris
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")  # eps=0.05 for 150 rows: forecast as noise
    ...     res = dp_pc_dir(load_iris().iloc[:, :4], 2, eps=0.05, delta=1e-6,
    ...                     random_state=0)
    >>> any(issubclass(w.category, AccuracyWarning) for w in caught)
    True
    """


class InaccurateReleaseError(ValueError):
    """A release was refused, or judged after the fact, as mostly noise.

    With ``accuracy="error"`` it is raised in two places. Before any data are
    read, when the data-free forecast says the release would be noise: nothing
    is spent and ``result`` is None. After a direction release, when the
    post-release check (:mod:`dppca.releases.resolvability`) finds the released
    directions not separated from the noise: a release cannot be un-spent, so
    its cost is recorded (in the budget or ledger given) and the release is on
    ``result``. The message says what went wrong and what would help.

    Examples
    --------
    >>> from dppca import InaccurateReleaseError, dp_pc_dir
    >>> from dppca.datasets import load_iris
    >>> try:
    ...     dp_pc_dir(load_iris().iloc[:, :4], 2, eps=0.01, delta=1e-6, accuracy="error")
    ... except InaccurateReleaseError as err:
    ...     print(err.result)  # refused before any data were read: nothing spent
    None
    """

    def __init__(self, message: str, *, result: object = None) -> None:
        super().__init__(message)
        self.result = result
