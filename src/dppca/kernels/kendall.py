"""The sample spherical Kendall matrix: deterministic, no privacy, no randomness.

(The balanced design needs a random order of the rows; the caller draws it,
with :func:`dppca.privacy.mechanisms.random_pairing`, and passes it in: this module
imports no noise module and draws nothing.)

For rows ``x_1, ..., x_n`` of ``X`` the matrix is

    K = 2 / (n (n - 1)) * sum_{i < j} u_ij u_ij^T,   u_ij = (x_i - x_j) / ||x_i - x_j||.

Computation
-----------
A pair loop costs O(n^2 p^2). Writing ``w_ij = 1 / ||x_i - x_j||^2``, the sum
over pairs is ``Y^T (D - W) Y`` for any translate ``Y`` of ``X`` (``D`` holds
the row sums of the weights ``W``), which needs only matrix products and
O(n^2 p) arithmetic. It is evaluated tile by tile over the upper triangle of
pairs, so no n x n array is formed: memory is O(n p + tile) beyond the data.

Squared distances from inner products, ``|y_i|^2 + |y_j|^2 - 2 y_i.y_j``, are
accurate only to about ``eps_machine * (|y_i|^2 + |y_j|^2)``, and the
Laplacian form amplifies that error by ``(|y_i|^2 + |y_j|^2) / d_ij^2``.
Two devices keep the result within about 1e-12 of the plain pairwise sum:

* ``Y`` is ``X`` minus, per column, one of that column's own values (a middle
  order statistic). Subtracting a nearby floating-point value is exact
  (Sterbenz's lemma), so an offset of 1e6 costs no precision. Because the
  matrix is translation invariant, this shift changes nothing but rounding;
  it is a numerical device, not a preprocessing step, and nothing computed
  from it is released.
* Every pair whose Gram-based squared distance is at most ``1e-2`` times
  ``|y_i|^2 + |y_j|^2`` (or below 1e-280) is taken out of the Laplacian and
  added from its explicit difference ``x_i - x_j`` of the original data. The
  tie decision is made on those explicit differences, so it decides exactly
  as the pairwise definition does. Both tests are relative: multiplying the
  data by any factor (1e-9, 1e9) changes no decision.

Ties have no unit either: a pair is a tie only when its difference cannot be
normalised at all, that is when it is zero: the two rows are equal (a
difference that would overflow is computed from the halved rows,
:func:`dppca.kernels.pairsums.subtract_rows`). Every explicit
difference is divided by a power of two near its largest entry before its
norm is taken, and the Gram route works on the data times one power of two
(:func:`dppca.kernels.pairsums.power_of_two_scale`); both are exact rescalings, so
data of any magnitude (1e-160, 1e155) gives the matrix of the rescaled data.

The in-memory loop (:mod:`dppca.kernels.exact_pairs`, with the thread pool of
:mod:`dppca.kernels.threads`) works by row blocks I. For each tile (I, J >= I) one
product gives the Gram tile, one fused pass (:mod:`dppca.kernels.tiles`, compiled
with numba when installed) turns it into weights with their column sums, and
one more product accumulates ``W_IJ [Y_J, 1]``, i.e. the block's rows of
``Z = W Y`` and the weights' row sums. The p x p result is formed once at the
end, ``A + A^T`` with ``A = Y^T (D Y / 2 - Z)``; no p x p product is formed per
tile. Row blocks run in a thread pool with BLAS held to one thread and are
merged in block order, so the result is the same, bit for bit, for every
number of threads. The tile size follows p and the L2 cache
(:func:`default_block`).

A Dask task is one tile, :func:`dppca.kernels.pairsums.tile_sums`, which returns the
tile's own p x p Laplacian sum (a ``PairSums``) from the same fused pass; the client merges
them in tile order. The Dask path shifts by the first row instead of the
middle order statistics (one value per column is all the device needs; a
distributed selection would cost a pass over the data).

Floating-point exceptions inside the kernels (an overflowing difference, say)
are expected and handled as described; they are never reported as warnings,
which would tell the caller something about the data.

Balanced design
---------------
``K_B = 1/(n m) * sum_q sum_{k=1..m} u u^T`` over the rows at positions ``q``
and ``q + k`` (mod n) of a random order. Its ``n m`` differences are formed
explicitly, chunk by chunk (:func:`dppca.kernels.pairsums.balanced_chunk`,
chunks in the same thread pool), in O(n m p^2) time and O(chunk m p + p^2)
memory per thread beyond the data: no Gram trick is needed, and ties follow the same rule as above.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.data_checks import check_data
from ..core.exceptions import TiedRowsError
from ..core.progress import ProgressCallback, ProgressLike, resolve_progress
from ..core.scalar_checks import check_positive_int
from ..core.tables import complete_rows
from ..core.types import Data, Design, Ties
from ..core.validation import check_design, check_design_m, check_ties
from .exact_pairs import _pair_sum
from .pairsums import PairSums, add_incomplete_pairs, balanced_chunk, balanced_chunks
from .threads import _runner

__all__ = ["BALANCED_DEFAULT_WORK", "default_design", "spherical_kendall"]

#: Pair-columns ``n (n - 1) / 2 * p`` above which a release that is not told
#: which design to use takes the balanced one: about 25 CPU-s of the exact
#: kernel (n = 100,000 at p = 20, 141,000 at p = 10, 63,000 at p = 50).
#: benchmarks/bench_design.py measures the cost in accuracy: at n = 20,000
#: (far below the threshold) the top-2 sinTheta of the balanced design
#: (m = 20) was on average at most 0.005 above the exact one's (mean + 2 se
#: at most 0.0092, over 20 seeds of five synthetic tables, eps 0.5 to 2), and
#: the gap shrinks as n grows (0.0002 at n = 50,000 on the spiked table; on
#: the near tie 0.0049 at n = 20,000 and 0.0010, se 0.0013, at 160,000).
BALANCED_DEFAULT_WORK = 1e11


def default_design(n: int, p: int) -> Design:
    """The pair design of a spherical Kendall release given none: a rule on public n, p.

    ``"balanced"`` when ``n (n - 1) / 2 * p`` exceeds
    :data:`BALANCED_DEFAULT_WORK`, else ``"exact"``. It reads the public
    shape only, so the choice reveals nothing and costs nothing; the
    privacy cost is the same for both designs.

    Examples
    --------
    >>> default_design(20_000, 20), default_design(200_000, 20)
    ('exact', 'balanced')
    """
    return "balanced" if n * (n - 1) / 2.0 * p > BALANCED_DEFAULT_WORK else "exact"


class PairRun(NamedTuple):
    """How a Kendall matrix's pair sums run, checked once and passed as one record.

    ``ties`` is the tie rule (``"error"`` or ``"zero"``), the only one of the
    four that can change the matrix; ``block_size``, ``progress`` and
    ``n_jobs`` shape the computation only (see :func:`spherical_kendall`).
    """

    ties: str
    block_size: int | None = None
    progress: ProgressCallback | None = None
    n_jobs: int | None = None


def _balanced_pair_sum(
    data: NDArray[np.float64], order: NDArray[np.int64], m: int, run: PairRun
) -> PairSums:
    """Sum of u u^T over the n m pairs of the balanced design, chunk by chunk.

    Position q of the random order ``order`` holds row ``order[q]``; it is paired
    with positions q + 1, ..., q + m (mod n). Only ``chunk + m`` rows are gathered
    per chunk, so memory is O(threads (chunk + m) m p + p^2) beyond the data.
    Chunks run in a thread pool and are merged in order.
    """
    n, p = data.shape
    ties, progress = run.ties, run.progress
    chunk = default_balanced_chunk(m, p) if run.block_size is None else run.block_size
    total = PairSums(p)
    chunks = balanced_chunks(n, m, chunk)

    def task(bounds: tuple[int, int]) -> PairSums:
        a, b = bounds
        positions = np.arange(a, b + m)
        positions[positions >= n] -= n
        return balanced_chunk(data[order[positions]], m, ties, a, n)

    with _runner(run.n_jobs, len(chunks)) as pool:
        for (_, b), sums in zip(chunks, pool(task, chunks), strict=True):
            total.merge(sums)
            if progress is not None:
                progress(b * m, n * m)
    if total.example is not None:
        total.example = (int(order[total.example[0]]), int(order[total.example[1]]))
    return total


def default_balanced_chunk(m: int, p: int) -> int:
    """Positions per chunk of the balanced design: about 8 MiB of differences."""
    return max(64, (1 << 20) // (m * p))


def _tie_message(n_ties: int, example: tuple[int, int]) -> str:
    i, j = example
    return (
        f"{n_ties} pair(s) of rows coincide (or lie too far apart for a finite "
        f"distance), for example rows {i} and {j} (0-based); their difference cannot be "
        "normalised in float64. Pass ties='zero' to let such "
        "pairs contribute nothing, which keeps the privacy guarantee and avoids this "
        "data-dependent error."
    )


def is_dask_collection(X: object) -> bool:
    """True for a Dask array or DataFrame (checked without importing dask)."""
    return hasattr(X, "__dask_graph__") and type(X).__module__.startswith("dask")


def validate_kendall_input(
    X: object, design: str, *, missing: str = "refuse"
) -> tuple[Any, tuple[str, ...]]:
    """Validated data for the kernels: a float64 ndarray, or a Dask array.

    The kernels only read the data, so an array that is already C-contiguous
    float64 is used without a copy (large tables). ``missing="zero"`` keeps
    the missing cells of an in-memory table as NaN (see :func:`check_data`);
    a Dask collection must be complete.
    """
    if is_dask_collection(X):
        if missing == "zero":
            raise ValueError(
                "missing='zero' needs an in-memory table; compute the Dask collection "
                "first, or impute its missing values."
            )
        from .dask_sums import check_dask_data

        return check_dask_data(X)
    return check_data(X, copy=False, missing=missing)


def kendall_matrix(
    data: Any,
    *,
    ties: str = "error",
    block_size: int | None = None,
    design: str = "exact",
    m: int | None = None,
    order: NDArray[np.int64] | None = None,
    progress: ProgressCallback | None = None,
    n_jobs: int | None = None,
) -> NDArray[np.float64]:
    """Spherical Kendall matrix of already validated data (internal).

    ``data`` is a float64 ndarray or a validated Dask array. The balanced design
    needs ``m`` and the random order ``order`` of ``range(n)``. ``n_jobs``
    threads (default: every core) share the in-memory computation; the result
    does not depend on it.
    """
    run = PairRun(ties, block_size, progress, n_jobs)
    return _kendall_of_run(data, run, design, m, order)


def _kendall_of_run(
    data: Any,
    run: PairRun,
    design: str,
    m: int | None,
    order: NDArray[np.int64] | None,
) -> NDArray[np.float64]:
    """:func:`kendall_matrix` with its run settings as one checked record."""
    n = data.shape[0]
    ties, block_size, progress = run.ties, run.block_size, run.progress
    dask = is_dask_collection(data)
    complete = None if dask else complete_rows(data)

    def exact(rows: NDArray[np.float64]) -> PairSums:
        """The exact pair sums of in-memory ``rows`` with this call's settings."""
        return _pair_sum(
            rows, ties=ties, block_size=block_size, progress=progress, n_jobs=run.n_jobs
        )

    if design == "exact":
        if dask:
            from .dask_sums import dask_pair_sum

            sums = dask_pair_sum(data, ties=ties, block_size=block_size, progress=progress)
        elif complete is not None:
            # missing="zero": the complete rows' pairs by the fast route, then every
            # pair holding a missing cell from the coordinates present in both rows
            sums = PairSums(data.shape[1])
            if complete.sum() >= 2:
                sums = exact(np.ascontiguousarray(data[complete]))
            if sums.example is not None:
                rows = np.flatnonzero(complete)
                sums.example = (int(rows[sums.example[0]]), int(rows[sums.example[1]]))
            add_incomplete_pairs(sums, data, complete, ties)
        else:
            sums = exact(data)
        factor = 2.0 / (n * (n - 1.0))
    else:
        assert m is not None and order is not None
        if dask:
            from .dask_sums import dask_balanced_pair_sum

            sums = dask_balanced_pair_sum(
                data, order, m, ties=ties, block_size=block_size, progress=progress
            )
        else:
            sums = _balanced_pair_sum(data, order, m, run)
        factor = 1.0 / (n * float(m))
    if sums.n_ties and ties == "error":
        assert sums.example is not None
        raise TiedRowsError(
            _tie_message(sums.n_ties, sums.example), n_pairs=sums.n_ties, example=sums.example
        )
    total = 0.5 * (sums.matrix + sums.matrix.T)
    return total * factor


def spherical_kendall(
    X: Data,
    *,
    ties: Ties = "error",
    block_size: int | None = None,
    design: Design = "exact",
    m: int | None = None,
    order: ArrayLike | None = None,
    progress: ProgressLike = None,
    n_jobs: int | None = None,
) -> NDArray[np.float64]:
    """Sample spherical Kendall matrix of the rows of ``X``.

    With ``design="exact"`` (the default) this is
    ``K = 2/(n(n-1)) * sum_{i<j} u_ij u_ij^T`` with
    ``u_ij = (x_i - x_j) / ||x_i - x_j||``: the average outer product of the unit
    pairwise differences. It is symmetric, positive semi-definite, has trace 1
    (without ties) and is unchanged by translating all rows.
    ``design="balanced"`` averages over ``n m`` pairs of a random balanced
    design instead (see Notes), in O(n m p^2) time.

    Parameters
    ----------
    X : array-like of shape (n, p), pandas.DataFrame, dask.array.Array or dask.dataframe.DataFrame
        Numeric data with n >= 2 rows (n >= 3 for the balanced design). Not
        modified. A Dask collection is computed tile by tile on the active Dask
        scheduler (needs the ``dask`` extra).
    ties : {"error", "zero"}, default="error"
        What to do with a pair whose difference cannot be normalised: exact
        duplicates (equal rows), the only ones at any magnitude. The rule has
        no unit: rescaling the data (by 1e-160 or 1e155, say) changes no
        decision and, up to the rounding of the product, not the matrix. ``"error"`` raises
        :class:`~dppca.core.exceptions.TiedRowsError`; ``"zero"`` lets such pairs
        contribute a zero matrix (the trace is then below 1). The same rule
        applies to both designs.
    block_size : int, optional
        Rows per tile of the exact design (default chosen from p and the CPU's
        L2 cache, 256 on a 1 MiB cache for p <= 256; 2048 for Dask), or
        positions per chunk of the balanced design (default about 8 MiB of
        differences; at least 4096 for Dask). Memory beyond the data is
        O(n p + threads block_size^2) for the exact design (a shifted copy of
        the data and the running ``W Y``) and O(threads block_size m p + p^2)
        for the balanced one.
    design : {"exact", "balanced"}, default="exact"
        ``"exact"``: all n(n-1)/2 pairs. ``"balanced"``: the rows are put in a
        random order and each position is paired with the next ``m`` positions
        (cyclically).
    m : int, optional
        Partners per position for the balanced design, in [1, (n - 1) // 2];
        default ``min(20, (n - 1) // 2)``, which depends on n only. Ignored by
        the exact design.
    order : array-like of int of shape (n,), optional
        The random order of the rows for the balanced design, a permutation
        of ``range(n)`` drawn without looking at the data, for example
        ``dppca.privacy.mechanisms.random_pairing(n, seed)``; required by the balanced
        design and refused by the exact one, which involves no randomness.
    progress : None, bool or callable, default=None
        Progress reporting: None or False for none, True for a text bar on
        stderr, or a callable ``progress(done, total)`` called with counts of
        pairs as the computation advances.
    n_jobs : int, optional
        Threads for an in-memory computation; default every core this process
        may use. Tiles (or chunks) run in a thread pool with BLAS held to one
        thread (needs threadpoolctl, part of the ``fast`` extra; without it the
        computation is serial) and are summed in a fixed order, so the result
        is bit-for-bit the same for every ``n_jobs``. Ignored for Dask input,
        which runs on the Dask scheduler.

    Returns
    -------
    ndarray of shape (p, p)

    Raises
    ------
    TiedRowsError
        With ``ties="error"`` when a pair is too close; the message gives the
        number of such pairs and one example pair of (0-based) row indices.

    Notes
    -----
    This function is not private. When its output feeds a private release
    (see :func:`dppca.dp_pc_dir`), an error raised under ``ties="error"`` is
    itself data-dependent: it tells whoever sees it that two rows almost
    coincide, how many such pairs there are, and where one is. With
    ``ties="zero"`` there is no such error and the sensitivity bound still
    holds, because a zero term is as bounded as a unit one.

    *Balanced design and its sensitivity.* Let ``pi`` be a uniformly random
    order of ``0, ..., n-1``, passed in as ``order`` (drawn
    without the data), and pair position ``q`` with positions ``q + 1, ..., q + m`` (mod
    n). The estimate is ``K_B = 1/(n m) * sum_q sum_{k=1..m} u u^T`` for the
    rows ``pi[q]`` and ``pi[q + k]``. Because ``m <= (n - 1)/2``, two offsets
    satisfy ``k + k' <= 2m < n``, so no pair occurs twice, no row is paired
    with itself, and every position takes part in exactly ``2m`` pairs (``m``
    as the first member, ``m`` as the second). Fix ``pi``: replacing one row
    changes exactly those ``2m`` terms, each by ``(1/(n m)) (u u^T - w w^T)``
    whose Frobenius norm is at most ``sqrt(2)/(n m)`` (``||u u^T - w w^T||_F^2
    = 2 - 2 (u^T w)^2``; a tie's zero term has norm 1 at most). The change is
    therefore at most ``2m * sqrt(2)/(n m) = 2 sqrt(2)/n``, the same bound as
    for the exact design (:func:`dppca.privacy.mechanisms.kendall_sensitivity`), so the
    Gaussian calibration of :func:`dppca.dp_pc_dir` applies unchanged. Since
    ``pi`` does not depend on the data, the bound holds for every ``pi``: the
    release is (eps, delta)-DP conditionally on ``pi`` (so even someone who
    learned ``pi`` gains nothing), and hence also as a mixture over ``pi``.
    ``pi`` itself is never released.

    *Variance.* ``K_B`` is unbiased for the population matrix, like ``K``.
    For a U-statistic with kernel variance ``zeta_2`` and first-order
    variance ``zeta_1``, ``Var(K) ~ 4 zeta_1 / n`` and the balanced design adds
    about ``(zeta_2 - 2 zeta_1) / (n m)``: relative to the sampling error of
    ``K`` the excess shrinks like ``1/m`` and does not grow with n, while the
    cost is ``O(n m p^2)`` instead of ``O(n^2 p)``. ``m = 20`` keeps the excess
    to a few per cent of the sampling variance for typical data; see
    ``benchmarks/bench_balanced.py`` for measured errors against the exact
    matrix.

    The exact computation costs O(n^2 p) arithmetic in matrix products; see
    the module documentation for how it stays accurate on near-duplicate rows
    and on data far from the origin. The balanced design uses explicit
    differences only.

    Examples
    --------
    >>> import numpy as np
    >>> from dppca import spherical_kendall
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> K = spherical_kendall(X)
    >>> K.shape, round(float(np.trace(K)), 12)
    ((3, 3), 1.0)
    >>> from dppca.privacy.mechanisms import random_pairing
    >>> KB = spherical_kendall(X, design="balanced", m=10, order=random_pairing(200, 1))
    >>> round(float(np.trace(KB)), 12), bool(np.abs(KB - K).max() < 0.05)
    (1.0, True)
    """
    design = check_design(design)
    if block_size is not None:
        block_size = check_positive_int(block_size, "block_size")
    if n_jobs is not None:
        n_jobs = check_positive_int(n_jobs, "n_jobs")
    run = PairRun(check_ties(ties), block_size, resolve_progress(progress), n_jobs)
    data, _ = validate_kendall_input(X, design)
    checked_order = None
    if design == "balanced":
        m = check_design_m(m, data.shape[0])
        checked_order = _check_order(order, data.shape[0])
    elif order is not None:
        raise TypeError("order is used by design='balanced' only; leave it None.")
    return _kendall_of_run(data, run, design, m, checked_order)


def _check_order(order: object, n: int) -> NDArray[np.int64]:
    """``order`` as a permutation of ``range(n)`` (the balanced design's row order)."""
    if order is None:
        raise TypeError(
            "design='balanced' needs order, a random order of the rows drawn without the "
            "data: pass order=dppca.privacy.mechanisms.random_pairing(n, seed)."
        )
    values = np.asarray(order)
    if (
        values.shape != (n,)
        or not np.issubdtype(values.dtype, np.integer)
        or not np.array_equal(np.sort(values), np.arange(n))
    ):
        raise ValueError(f"order must be a permutation of range(n) = range({n}).")
    return values.astype(np.int64)
