"""One private PCA of a table: :func:`dp_pca`.

:func:`dp_pca` checks the table, builds the fit's plan
(:func:`~dppca.releases.pca.plan.plan_pca`) and runs it through the one
executor: budget checked once, every step drawn from one noise stream,
charged once with exactly ``(eps, delta)``, then reviewed
(:mod:`dppca.releases.pca.draw`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...core.data_checks import check_data
from ...core.exceptions import AccuracyWarning
from ...core.options import DesignOptions, document_design, release_options
from ...core.tables import MissingRule, document_missing
from ...core.types import Design, RandomStateLike
from ..engine import CheckedData, execute
from .options import PCAOptions
from .plan import plan_pca_options
from .result import SCORE_LEFT_OUT, PCAResult
from .split import PCASplit

if TYPE_CHECKING:
    from ...privacy.accounting import Accountant

__all__ = ["dp_pca"]


@document_missing
@document_design
def dp_pca(
    X: Any,
    *,
    eps: float,
    delta: float,
    standardize: bool = True,
    k: int | None = None,
    components: tuple[int, int] = (1, 2),
    score: bool | None = None,
    bins: Any = None,
    bounds: Any = None,
    scales: Any = None,
    split: PCASplit | Mapping[str, float] | None = None,
    compare: bool = False,
    calibration: str = "analytic",
    debias: bool = True,
    accuracy: str = "warn",
    budget: Accountant | None = None,
    random_state: RandomStateLike = None,
    allow_large_delta: bool = False,
    missing: MissingRule = "refuse",
    design: Design | None = None,
    m: int | None = None,
) -> PCAResult:
    """One private PCA of a table: directions, variances and score plot from one budget.

    The analysis is chosen once, before any data are read, and every picture
    follows it: the directions, the scree (private variances and PVE), the
    score plot, the loading plot, the correlation circle and the biplot all
    come from this one fit (``fit.plot(kind)``), which records exactly
    ``(eps, delta)``.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        The table, in whatever units its columns are written in.
    eps, delta : float
        The fit's whole budget. The parts share it (``split``) and the tight
        accountant stretches their shares until they compose to exactly eps.
    standardize : bool, default=True
        True: the standardised (correlation) PCA, estimated without sample
        means or standard deviations: directions from Kendall's tau matrix
        (unit-free) and the variances from the same release at no extra cost
        (the correlation ``sin(pi tau / 2)``). The score plot needs comparable
        units: public ``scales``, else the widths of public ``bounds``, else
        private scales. False: the PCA of the table in its own units (the
        spherical Kendall directions, a clipped scree and the score plot), or
        of the table divided by public ``scales`` when given.
        The default is True because users bring tables in their own units,
        where the unit-dependent analysis mostly follows the column with the
        largest numbers; see the user guide's "Which analysis" section.
    k : int, optional
        Number of PCs with a private variance (default: all p for the
        standardised analysis, where they are free; ``max(3, components)``
        otherwise).
    components : tuple of (int, int), default=(1, 2)
        The PCs of the score plot, loading plot and biplot (1-based).
    score : bool, optional
        Whether to release the score plot (its frame and histogram). By
        default it is released unless it would need private scales that the
        data-free forecast says fail at this n and budget (below about 2,000
        rows at eps 1): the standardised score plot needs its columns on
        comparable scales, so without public ``scales`` or ``bounds`` the fit
        then leaves it out and gives its budget to the other parts. That is
        the default at work, not a problem: it is recorded as a note on the
        result (``fit.notes``, shown by ``fit.summary()`` and on the
        placeholder that ``fit.plot("score")`` draws), without a warning.
        ``score=True`` releases it with private scales anyway (and warns if
        they fail); ``score=False`` leaves it out without a note.
    bins : int, str or (int, int), optional
        Bins of the score histogram (see :func:`dppca.dp_score`).
    bounds : optional
        Public bounds of the columns (a codebook's domain, never the data's
        range): the data are clipped to them and the score frame is free.
    scales : array-like of shape (p,), optional
        Public scales of the columns (a codebook's standard deviations, never
        the data's): with ``standardize=False`` the fit is the PCA of
        ``X / scales``; with ``standardize=True`` they put the score plot on
        the standardised scale.
    split : PCASplit or mapping, optional
        Weights of the parts (see :class:`dppca.PCASplit`).
    compare : bool, default=False
        Attach the matching non-private analysis (the sample correlation PCA
        for the standardised analysis, the sample covariance PCA otherwise)
        and the parts' comparisons. Not private: the result is marked so.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian noise calibration.
    debias : bool, default=True
        Standardised analysis only: subtract the noise's expected lift from
        the top eigenvalues of the private correlation estimate
        (:func:`dppca.releases.pca.correlation.correlation_eigen`; measured to
        pay on every raw-unit table tried at eps <= 1.4). Post-processing.
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do with a forecast problem (before spending) and with a
        post-release problem (after: the cost is recorded, and with
        ``"error"`` the fit is on the error's ``result``).
    budget : Accountant, optional
        Checked before any data work and charged once with ``(eps, delta)``.
    random_state : None, int or numpy.random.Generator, default=None
        The noise stream (None: fresh OS entropy). A seed is a secret.
    allow_large_delta : bool, default=False
        Accept ``delta >= 1/n``.
    missing : {"refuse", "zero"}, default="refuse"
        %(missing)s
    design : {"exact", "balanced"} or None, default=None
        %(design)s
        The standardised analysis uses Kendall's tau.
    m : int, optional
        %(m)s

    Returns
    -------
    PCAResult

    Raises
    ------
    ValueError, TypeError
        Invalid arguments (named in the message), before any data are read.
    BudgetExceededError
        ``budget`` cannot afford ``(eps, delta)``; nothing is read or drawn.
    InaccurateReleaseError
        With ``accuracy="error"``: a forecast problem (nothing spent) or a
        post-release problem (spent; the fit is on ``result``).

    Warns
    -----
    AccuracyWarning
        A forecast or post-release problem with ``accuracy="warn"``: the
        directions not separated from the noise, a score frame more than
        10 times wider or narrower than the spread of the released variances.
        A score plot left out by the default rule is a note, not a warning.

    Notes
    -----
    Privacy: neighbouring tables differ in one replaced row and n is public.
    The fit is the adaptive composition of its steps, each an existing
    release with its own sensitivity argument: the private scales (p pure
    exponential-mechanism parts), the directions (Gaussian noise on
    Kendall's tau matrix over p, Frobenius sensitivity ``2 sqrt(2) / n``,
    times ``sqrt(1 - 1/p^2)`` for odd p, or on the spherical Kendall
    matrix), the scree (clipped moments; only in units) and the score frame
    and histogram. The standardised scree is post-processing of the
    direction release (no new cost). The steps' shares are stretched to
    the largest factor whose tight composition (:func:`dppca.tight_total`)
    is at most eps at delta, and the fit records
    ``(eps, delta)``. The frame check reads released values only.

    The standardised analysis estimates the correlation PCA of an elliptical
    table exactly (Pearson = ``sin(pi tau / 2)``); for columns far from
    elliptical (skewed, many ties) it estimates the PCA of that rank
    correlation instead, a robust stand-in that can differ from Pearson's.

    Examples
    --------
    >>> from dppca.datasets import load_wine
    >>> fit = dp_pca(load_wine(), eps=1.0, delta=1e-6, random_state=0, accuracy="ignore")
    >>> fit.analysis, round(fit.cost.eps, 6), fit.directions.estimator, fit.score
    ('standardized', 1.0, 'tau', None)
    >>> fit.summary().importance.columns.tolist()
    ['variance', 'pve', 'cumulative_pve']
    """
    privacy, options, design_options = release_options(locals(), PCAOptions, DesignOptions)
    values, variables = check_data(X, min_rows=4, min_cols=2, copy=False, missing=privacy.missing)
    n, p = values.shape
    plan = plan_pca_options(n, p, privacy, options, variables, design_options)
    if plan.accuracy != "ignore":
        # a score plot left out by the default rule (score=None) is a note on the
        # result (summary, placeholder), not a warning: nothing was asked and refused
        for note in plan.notes:
            if not note.startswith(SCORE_LEFT_OUT):
                warnings.warn(note, AccuracyWarning, stacklevel=2)
    fit: PCAResult = execute(
        plan, CheckedData(values, variables), budget=budget, random_state=random_state
    )
    return fit
