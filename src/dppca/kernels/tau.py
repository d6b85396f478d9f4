"""The marginal Kendall's tau matrix: deterministic, no privacy, no randomness.

For rows ``x_1, ..., x_n`` of ``X`` write ``s_ij = sign(x_i - x_j)``, taken
coordinate by coordinate, in ``{-1, 0, 1}^p`` (a tie in a coordinate gives 0,
and so does a missing cell: NaN compares as neither above nor below). The
matrix is

    T = 2 / (n (n - 1)) * sum_{i < j} s_ij s_ij^T,

whose entry ``(a, b)`` is Kendall's tau-a of columns ``a`` and ``b`` and whose
diagonal holds ``1`` minus the share of pairs tied in that column. It uses
only the order of the values within each column, so it does not change when
any column is multiplied by a positive factor (or moved, or passed through
any strictly increasing map). A pair of rows adds nothing to entry
``(a, b)`` when one of its four cells in columns ``a`` and ``b`` is missing:
the entry sums over the pairs of rows present in both columns (the diagonal
entry ``(a, a)`` over the pairs present in ``a``), while the factor stays
``2 / (n (n - 1))`` with the public ``n``.

Computation (exact design)
--------------------------
Every entry is an integer count, ``S_ab = sum_{i<j} s_ija s_ijb``, computed
from the order of the values alone (Knight's algorithm). Each column is
replaced once by its dense ranks (missing cells marked) and the order of its
rows; then for each pair of columns ``(a, b)`` the rows are visited in
increasing order of column ``a``, one group of tied values at a time, and a
Fenwick tree over the ranks of column ``b`` counts, for every row, how many
rows visited before it (strictly lower in ``a``) lie strictly below and
strictly above it in ``b``: their difference is the row's share of ``S_ab``.
Rows tied in ``a`` are counted against each other in no direction (the group
is queried before it is inserted), rows tied in ``b`` neither (strict
inequalities), and rows missing in ``a`` or ``b`` are skipped. The work is
O(n log n) per pair of columns, O(p^2 n log n) in all, with O(n p) memory.
The diagonal comes from the sizes of the tied groups:
``S_aa = m_a (m_a - 1) / 2 - sum_g c_g (c_g - 1) / 2`` over the ``m_a`` rows
present in ``a``.

The counting loop is compiled with numba when it is installed (the ``fast``
extra) and the table is large enough to pay for loading it; pairs of columns
are shared among threads (:func:`dppca.kernels.threads._runner`; the loop
holds no GIL and calls no BLAS). Without numba the same counts come from
numpy: small tables from the sign products of all pairs (row blocks, as
BLAS products of integer-valued arrays), larger ones by counting the
inversions of each column pair with a bottom-up merge sort. All three are
sums of integers below 2^53, so they are equal, and the float64 matrix, one
count times one factor, is the same bit for bit whichever ran.

Balanced design
---------------
As for the spherical Kendall matrix (:mod:`dppca.kernels.kendall`), a random
order of the rows, drawn by the caller and passed in, pairs position ``q``
with positions ``q + 1, ..., q + m`` (mod n); the matrix averages the
``n m`` outer products with weight ``1 / (n m)``. Its sign differences are
formed chunk by chunk and summed by BLAS products, with BLAS held to one
thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.progress import ProgressCallback
from .threads import _runner, hold_blas, resolve_n_jobs

__all__ = ["kendall_tau_matrix", "tau_backend"]

#: About 8 MiB of float64 signs per product.
_CHUNK_VALUES = 1 << 20
#: Without numba, from this many rows the exact design counts by merge sort
#: rather than by the sign products of all pairs: below it the products
#: (O(n^2 p^2) in BLAS) cost less than a Python-driven pass per column pair
#: (measured at p = 20: 0.27 s against 0.21 s at n = 2000, 0.33 s against
#: 0.45 s at n = 3000; both grow as p^2).
SORT_MIN_ROWS = 2500
#: numba is loaded for the counts once ``n p`` reaches this (about 0.5 CPU-s once
#: per process, compiled code cached on disk; the products cost 0.45 s at
#: 3000 x 20, the compiled counts 0.03 s); once loaded it serves every table
#: from NUMBA_LOADED_MIN_ROWS rows on.
NUMBA_MIN_WORK = 60_000
NUMBA_LOADED_MIN_ROWS = 64

CountFn = Callable[
    [
        NDArray[np.int64],
        NDArray[np.int64],
        NDArray[np.int64],
        NDArray[np.int64],
        NDArray[np.int64],
        NDArray[np.int64],
        NDArray[np.int64],
    ],
    None,
]

_cache: dict[str, Any] = {}
_load_lock = threading.Lock()


def _signs(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sign(a - b)`` by comparison (no subtraction, so nothing overflows; NaN gives 0)."""
    return np.greater(a, b).astype(np.float64) - np.less(a, b)


def _product_sum(
    data: NDArray[np.float64], progress: ProgressCallback | None
) -> NDArray[np.float64]:
    """``sum_{i<j} s_ij s_ij^T`` over all pairs, by row blocks of sign products."""
    n, p = data.shape
    total = np.zeros((p, p))
    block = max(1, min(n, _CHUNK_VALUES // max(1, n * p)))
    pairs, done = n * (n - 1) // 2, 0
    for a in range(0, n, block):
        b = min(n, a + block)
        rows = data[a:b, None, :]
        inside = _signs(rows, data[None, a:b, :]).reshape(-1, p)
        total += 0.5 * (inside.T @ inside)
        if b < n:
            later = _signs(rows, data[None, b:, :]).reshape(-1, p)
            total += later.T @ later
        done += (b - a) * (b - a - 1) // 2 + (b - a) * (n - b)
        if progress is not None:
            progress(done, pairs)
    return 0.5 * (total + total.T)  # exact: integer sums, symmetric to the bit


def _ranks(data: NDArray[np.float64]) -> tuple[NDArray[np.int64], ...]:
    """Dense ranks per column (``-1`` when missing), rows by rank, counts present, distinct.

    Returns ``ranks`` (p, n), ``orders`` (p, n) (each column's rows by increasing
    value, the missing ones last), ``present`` (p,) and ``distinct`` (p,).
    """
    n, p = data.shape
    ranks = np.full((p, n), -1, dtype=np.int64)
    orders = np.empty((p, n), dtype=np.int64)
    present = np.empty(p, dtype=np.int64)
    distinct = np.empty(p, dtype=np.int64)
    for a in range(p):
        column = data[:, a]
        order = np.argsort(column, kind="stable")  # NaN sorts last
        values = column[order]
        m = int(n - np.count_nonzero(np.isnan(values)))
        new = np.empty(m, dtype=bool)
        if m:
            new[0] = True
            np.not_equal(values[1:m], values[: m - 1], out=new[1:])
        ranks[a, order[:m]] = np.cumsum(new) - 1
        orders[a] = order
        present[a] = m
        distinct[a] = int(np.count_nonzero(new))
    return ranks, orders, present, distinct


def _diagonal(ranks: NDArray[np.int64], present: NDArray[np.int64]) -> NDArray[np.int64]:
    """``S_aa``: pairs of rows present in ``a`` and not tied in it."""
    out = np.empty(ranks.shape[0], dtype=np.int64)
    for a in range(ranks.shape[0]):
        counts = np.bincount(ranks[a][ranks[a] >= 0])
        m = int(present[a])
        out[a] = m * (m - 1) // 2 - int(np.sum(counts * (counts - 1) // 2))
    return out


def _count_numpy(
    ranks: NDArray[np.int64],
    orders: NDArray[np.int64],
    present: NDArray[np.int64],
    distinct: NDArray[np.int64],
    first: NDArray[np.int64],
    second: NDArray[np.int64],
    out: NDArray[np.int64],
) -> None:
    """``out[t] = S_ab`` for ``(a, b) = (first[t], second[t])``, by merge-sort inversions.

    The rows present in both columns are sorted by ``(rank_a, rank_b)``; then
    ``S = C - D`` with ``D`` the strict inversions of ``rank_b`` in that order
    and ``C + D`` the pairs tied in neither column.
    """
    for t in range(first.size):
        a, b = int(first[t]), int(second[t])
        ra, rb = ranks[a], ranks[b]
        both = (ra >= 0) & (rb >= 0)
        ka, kb = ra[both], rb[both]
        m = ka.size
        if m < 2:
            out[t] = 0
            continue
        key = np.sort(ka * (int(distinct[b]) + 1) + kb)
        seq = key % (int(distinct[b]) + 1)
        split = np.flatnonzero(np.diff(key)) + 1
        tied_ab = _tied_pairs(np.diff(np.r_[0, split, m]))
        split_a = np.flatnonzero(np.diff(key // (int(distinct[b]) + 1))) + 1
        tied_a = _tied_pairs(np.diff(np.r_[0, split_a, m]))
        tied_b = _tied_pairs(np.bincount(kb))
        untied = m * (m - 1) // 2 - tied_a - tied_b + tied_ab
        out[t] = untied - 2 * _strict_inversions(seq, int(distinct[b]))


def _tied_pairs(counts: NDArray[np.int64]) -> int:
    return int(np.sum(counts * (counts - 1) // 2))


def _strict_inversions(seq: NDArray[np.int64], big: int) -> int:
    """Pairs ``i < j`` with ``seq[i] > seq[j]``: bottom-up merge sort, one level per step."""
    m = seq.size
    size = 1 << (m - 1).bit_length()
    arr = np.full(size, big, dtype=np.int64)  # padding: a suffix of maxima adds nothing
    arr[:m] = seq
    total, w = 0, 1
    while w < size:
        blocks = arr.reshape(-1, 2 * w)
        order = np.argsort(blocks, axis=1, kind="stable")  # ties: left half first
        # an element of the right half at merged position t, index j in its half,
        # has t - j left elements <= it, so w - (t - j) left elements above it
        pos_right = int(np.sum(np.nonzero(order >= w)[1]))
        total += blocks.shape[0] * (w * w + w * (w - 1) // 2) - pos_right
        arr = np.take_along_axis(blocks, order, axis=1).reshape(-1)
        w *= 2
    return total


def _compile_numba() -> CountFn:
    """Compile the Fenwick-tree count (imports numba; cached on disk when possible)."""
    import numba

    def kernel(ranks, orders, present, distinct, first, second, out):  # pragma: no cover
        n = ranks.shape[1]
        tree = np.zeros(n + 1, dtype=np.int64)
        count = np.zeros(n, dtype=np.int64)
        for t in range(first.size):
            a = first[t]
            b = second[t]
            nb = distinct[b]
            for r in range(nb + 1):
                tree[r] = 0
            for r in range(nb):
                count[r] = 0
            rank_a = ranks[a]
            rank_b = ranks[b]
            order = orders[a]
            m = present[a]
            inserted = 0
            s = 0
            i = 0
            while i < m:
                group = rank_a[order[i]]
                j = i
                while j < m and rank_a[order[j]] == group:
                    j += 1
                for q in range(i, j):  # query the group against the rows before it
                    rb = rank_b[order[q]]
                    if rb < 0:
                        continue
                    at_most = 0
                    x = rb + 1
                    while x > 0:
                        at_most += tree[x]
                        x -= x & (-x)
                    s += 2 * at_most - count[rb] - inserted  # below - above
                for q in range(i, j):  # then insert it
                    rb = rank_b[order[q]]
                    if rb < 0:
                        continue
                    count[rb] += 1
                    inserted += 1
                    x = rb + 1
                    while x <= nb:
                        tree[x] += 1
                        x += x & (-x)
                i = j
            out[t] = s

    options: dict[str, Any] = {"nogil": True, "error_model": "numpy"}
    r = np.array([[0, 1], [1, 0]], dtype=np.int64)
    sample = (r, r.copy(), np.array([2, 2]), np.array([2, 2]), np.array([0]), np.array([1]))
    try:
        compiled = numba.njit(cache=True, **options)(kernel)
        compiled(*sample, np.zeros(1, dtype=np.int64))
    except Exception:  # no writable cache directory: compile in memory only
        compiled = numba.njit(cache=False, **options)(kernel)
    return compiled


def _load_numba() -> CountFn | None:
    try:
        import numba  # noqa: F401
    except ImportError:
        return None
    return _compile_numba()


def _count_fn(n: int, p: int) -> CountFn | None:
    """The counting function for an (n, p) table, or None for the sign products.

    numba once ``n p >= NUMBA_MIN_WORK`` (or from ``NUMBA_LOADED_MIN_ROWS`` rows
    once loaded); without it the numpy merge sort from ``SORT_MIN_ROWS`` rows;
    else the products. ``DPPCA_KERNEL=numba`` or ``numpy`` forces compiled
    counts or the merge sort at every size (tests compare them).
    """
    want = os.environ.get("DPPCA_KERNEL", "").strip().lower()
    if want == "numpy":
        return _count_numpy
    if "numba" not in _cache and (n * p >= NUMBA_MIN_WORK or want == "numba"):
        with _load_lock:
            if "numba" not in _cache:
                _cache["numba"] = _load_numba()
    if _cache.get("numba") is not None and (n >= NUMBA_LOADED_MIN_ROWS or want == "numba"):
        return _cache["numba"]
    return _count_numpy if n >= SORT_MIN_ROWS else None


def tau_backend(n: int, p: int) -> str:
    """``"numba"``, ``"merge"`` or ``"products"``: what counts the exact design's pairs."""
    fn = _count_fn(n, p)
    return "products" if fn is None else "merge" if fn is _count_numpy else "numba"


def _sorted_sum(
    data: NDArray[np.float64],
    fn: CountFn,
    progress: ProgressCallback | None,
    n_jobs: int | None,
) -> NDArray[np.float64]:
    """``sum_{i<j} s_ij s_ij^T`` from the orders of the columns (Knight's algorithm)."""
    n, p = data.shape
    ranks, orders, present, distinct = _ranks(data)
    first, second = (x.astype(np.int64) for x in np.triu_indices(p, 1))
    counts = np.zeros(first.size, dtype=np.int64)
    pieces = max(1, min(first.size, 4 * resolve_n_jobs(n_jobs)))
    tasks = [t for t in np.array_split(np.arange(first.size), pieces) if t.size]
    pairs, done = n * (n - 1) // 2, 0

    def work(index: NDArray[np.int64]) -> int:
        part = np.zeros(index.size, dtype=np.int64)
        fn(ranks, orders, present, distinct, first[index], second[index], part)
        counts[index] = part
        return int(index.size)

    with _runner(n_jobs if fn is not _count_numpy else 1, len(tasks), blas=False) as run:
        for size in run(work, tasks):
            done += size
            if progress is not None:
                progress(pairs * done // max(1, first.size), pairs)
    total = np.zeros((p, p), dtype=np.int64)
    total[first, second] = counts
    total[second, first] = counts
    total[np.arange(p), np.arange(p)] = _diagonal(ranks, present)
    if progress is not None and first.size == 0:
        progress(pairs, pairs)
    return total.astype(np.float64)


def _balanced_sum(
    data: NDArray[np.float64],
    order: NDArray[np.int64],
    m: int,
    progress: ProgressCallback | None,
) -> NDArray[np.float64]:
    """Sum of ``s s^T`` over the ``n m`` pairs of the balanced design."""
    n, p = data.shape
    ordered = data[order]
    total = np.zeros((p, p))
    chunk = max(1, _CHUNK_VALUES // max(1, p))
    for step in range(1, m + 1):
        partner = np.roll(ordered, -step, axis=0)  # position q + step (mod n)
        for a in range(0, n, chunk):
            signs = _signs(ordered[a : a + chunk], partner[a : a + chunk])
            total += signs.T @ signs
        if progress is not None:
            progress(step * n, m * n)
    return 0.5 * (total + total.T)


def kendall_tau_matrix(
    data: NDArray[np.float64],
    *,
    design: str = "exact",
    m: int | None = None,
    order: NDArray[np.int64] | None = None,
    progress: ProgressCallback | None = None,
    n_jobs: int | None = None,
) -> NDArray[np.float64]:
    """Kendall's tau-a matrix of the columns of an (n, p) float64 array (internal).

    Parameters
    ----------
    data : ndarray of shape (n, p)
        float64 values, NaN for a missing cell, n >= 2 (already validated;
        only read).
    design : {"exact", "balanced"}, default="exact"
        All ``n (n - 1) / 2`` pairs, or the ``n m`` pairs of the balanced design.
    m : int, optional
        Partners per position for the balanced design, in [1, (n - 1) // 2].
    order : ndarray of int, optional
        The balanced design's order of ``range(n)``, drawn by the caller.
    progress : callable, optional
        ``progress(done, total)`` in pairs, after each block.
    n_jobs : int, optional
        Threads for the exact design's counts (default: every core); the
        result does not depend on it.

    Returns
    -------
    ndarray of shape (p, p)
        ``T = 2 / (n (n - 1)) sum_{i<j} s_ij s_ij^T`` (exact design) or
        ``1 / (n m) sum s s^T`` over the design's pairs; symmetric, with unit
        diagonal when no column has ties or missing cells.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]])
    >>> kendall_tau_matrix(x).round(3).tolist()
    [[1.0, 0.333], [0.333, 1.0]]
    """
    data = np.asarray(data, dtype=np.float64)
    n = data.shape[0]
    if design == "exact":
        fn = _count_fn(n, data.shape[1])
        with hold_blas():
            if fn is None:
                total = _product_sum(data, progress)
            else:
                total = _sorted_sum(data, fn, progress, n_jobs)
        factor = 2.0 / (n * (n - 1.0))
    else:
        if m is None or order is None:
            raise ValueError("the balanced design needs m and the order of the rows.")
        with hold_blas():
            total = _balanced_sum(data, np.asarray(order), m, progress)
        factor = 1.0 / (n * m)
    return total * factor
