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
    """


class DataWarning(UserWarning):
    """A note about the table itself: non-numeric columns left out.

    Issued by the one rule for messy tables (:mod:`dppca.core.tables`) on every
    face: as this warning in Python, as a line on stderr on the command line,
    on the page in the app. It names columns only, never a value or a count
    of rows (nor which columns have missing cells), and says nothing about
    privacy (column types are part of the table's layout; see
    :mod:`dppca.core.tables` for what of it depends on the cells).
    """


class BudgetExceededError(ValueError):
    """A release would spend more privacy budget than remains."""


class TiedRowsError(ValueError):
    """Two rows are too close for the spherical Kendall matrix.

    The spherical Kendall matrix normalises every pairwise difference. A pair
    whose difference cannot be normalised (exact duplicates: two equal rows)
    is a tie; the rule has no unit, so rescaling the data
    changes nothing. The error itself reveals
    that such a pair exists in the data; pass ``ties="zero"`` to let those pairs
    contribute nothing instead, which keeps the privacy guarantee.
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
    """

    def __init__(self, message: str, *, result: object = None) -> None:
        super().__init__(message)
        self.result = result
