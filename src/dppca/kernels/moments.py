"""The all-pairs clipped moments of the scree, row by row: compiled or in numpy.

For rows ``x_1, ..., x_n`` (already minus any public shift), their projections
``y = x V`` on ``k`` orthonormal directions and a clip level ``C``, row ``a``'s
partial sums over its partners ``b > a`` are

    w_al = sum_b c_ab q_abl,   s_a = sum_b min(t_ab, C),

with ``h_ab = sum_j (x_aj - x_bj)^2 / 2`` (the squared norm of
``z = (x_a - x_b) / sqrt(2)``, from the explicit difference), the squared
projections ``q_abl = (y_al - y_bl)^2 / 2``, ``t_ab = max(h_ab, sum_l q_abl)``
(NaN counting as infinity) and ``c_ab = C / t_ab`` when ``t_ab > C``, else 1;
a pair with an infinite (overflowing) norm adds nothing to ``w``. Every
pair's contribution is computed from its own two rows only and lies in the
polytope of :func:`dppca.kernels.pair_moments.moment_sensitivity` whatever the rounding:
its projections add up to at most the ``t_ab`` it is scaled by.

Two implementations fill the ``(n, k + 1)`` table of partial sums:

* ``numba`` (the optional extra ``dppca[fast]``): blocks of eight consecutive
  rows against chunks of 128 partners (the chunk's columns and scratch stay in
  L1 cache), vectorised over the partners, with the eight rows' running sums
  side by side (eight independent additions, not one chain of dependent ones:
  the chain's latency was most of the old one-row-a-pass kernel's time),
  releasing the GIL so that groups of rows run in threads;
* ``numpy``: the fallback, row blocks against all later rows, with bounded
  temporaries.

Both make the same floating-point operations in the same order: the squared
norm summed over the columns in order, the projections likewise, and each
row's partial sums added partner by partner from ``b = a + 1`` on (numpy's
``add.accumulate`` is sequential, like the compiled loop; adding the zeros of
the masked pairs changes no bit). So the table, and the moments the caller
sums from it, are bit-identical whichever ran and whatever the number of
threads (tests check it). Deterministic: no randomness, no privacy.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .threads import _runner

__all__ = ["NUMBA_MIN_PAIRS", "moment_backend", "moment_rows"]

#: Below this many pairs (n = 1415) numpy is used unless numba is already
#: loaded: loading numba and this kernel costs about 0.5 CPU-s once per
#: process (compiled code cached on disk), the compiled pass saves about
#: 70 ns (k = 3) to 300 ns (k = p) per pair at p = 50, so it pays from about
#: here in the first call and at every size after.
NUMBA_MIN_PAIRS = 10**6
#: Elements per temporary of the numpy fallback (rows of a block times partners).
_NUMPY_TILE = 1 << 18
#: Rows a block of the compiled kernel sums side by side (its sums stay in
#: registers; each row's own sum still runs over its partners in order). The
#: kernel's two summing loops are written out for eight.
_LANES = 8
#: Partners a block of the compiled kernel takes at a time (its scratch stays in L1).
_CHUNK = 128
#: Rows per task (each task takes rows from both ends, so tasks are of equal size).
_ROWS_PER_TASK = 64

RowsFn = Callable[
    [
        NDArray[np.float64],
        NDArray[np.float64],
        NDArray[np.float64],
        float,
        NDArray[np.float64],
        NDArray[np.int64],
    ],
    None,
]

_cache: dict[str, Any] = {}
_load_lock = threading.Lock()


def _rows_numpy(
    xt: NDArray[np.float64],
    y: NDArray[np.float64],
    yt: NDArray[np.float64],
    clip: float,
    out: NDArray[np.float64],
    rows: NDArray[np.int64],
) -> None:
    """The numpy fallback: the given rows, in blocks of consecutive rows."""
    n = xt.shape[1]
    rows = np.sort(rows)
    start = 0
    while start < rows.size:
        a0 = int(rows[start])
        width = max(1, _NUMPY_TILE // max(1, n - a0))
        stop = start
        while stop < rows.size and rows[stop] < a0 + width and rows[stop] - a0 == stop - start:
            stop += 1
        _block_numpy(xt, y, yt, clip, out, a0, a0 + (stop - start))
        start = stop


def _block_numpy(
    xt: NDArray[np.float64],
    y: NDArray[np.float64],
    yt: NDArray[np.float64],
    clip: float,
    out: NDArray[np.float64],
    a0: int,
    a1: int,
) -> None:
    """Rows ``a0:a1`` against partners ``a0 + 1:`` (pairs with ``b <= a`` masked)."""
    p, n = xt.shape
    k = y.shape[1]
    cols = slice(a0 + 1, n)
    with np.errstate(all="ignore"):  # overflow is handled, never reported
        acc = np.zeros((a1 - a0, n - a0 - 1))
        tmp = np.empty_like(acc)
        for j in range(p):
            np.subtract(xt[j, a0:a1, None], xt[j, None, cols], out=tmp)
            np.multiply(tmp, tmp, out=tmp)
            acc += tmp
        acc *= 0.5
        acc[np.isnan(acc)] = np.inf
        psum = np.zeros_like(acc)
        for j in range(k):
            _half_square(yt, j, a0, a1, cols, tmp)
            psum += tmp
        psum[np.isnan(psum)] = np.inf
        np.maximum(acc, psum, out=acc)  # the norm t
        valid = np.arange(a0 + 1, n)[None, :] > np.arange(a0, a1)[:, None]
        clipped = acc > clip
        scale = np.where(clipped, clip / np.where(clipped, acc, 1.0), 1.0)
        scale[acc == np.inf] = 0.0
        np.minimum(acc, clip, out=acc)
        acc[~valid] = 0.0
        out[a0:a1, k] = np.add.accumulate(acc, axis=1)[:, -1] if n - a0 > 1 else 0.0
        use = valid & (scale > 0.0)
        for j in range(k):
            _half_square(yt, j, a0, a1, cols, tmp)
            tmp *= scale
            tmp[~use] = 0.0
            out[a0:a1, j] = np.add.accumulate(tmp, axis=1)[:, -1] if n - a0 > 1 else 0.0


def _half_square(
    yt: NDArray[np.float64], j: int, a0: int, a1: int, cols: slice, out: NDArray[np.float64]
) -> None:
    """``(y_aj - y_bj)^2 / 2`` for rows ``a0:a1`` and partners ``cols``, into ``out``."""
    np.subtract(yt[j, a0:a1, None], yt[j, None, cols], out=out)
    np.multiply(out, out, out=out)
    out *= 0.5


def _compile_numba() -> RowsFn:
    """Compile the row-block kernel (imports numba; cached on disk when possible)."""
    import numba

    options: dict[str, Any] = {"nogil": True, "error_model": "numpy", "fastmath": False}

    def kernel(xt, y, yt, clip, out, rows):  # pragma: no cover - compiled
        p, n = xt.shape
        k = yt.shape[0]
        # per block of up to 8 consecutive rows, one chunk of partners at a time:
        # tt (the norm, then min(t, clip)), qq (projections), cc (scale), vv (one
        # direction's clipped terms), each (8, chunk): small enough for L1
        tt = np.empty((_LANES, _CHUNK))
        qq = np.empty((_LANES, _CHUNK))
        cc = np.empty((_LANES, _CHUNK))
        vv = np.empty((_LANES, _CHUNK))
        w = np.empty((k + 1, _LANES))  # row k: the sums s
        i = 0
        while i < rows.size:
            a0 = rows[i]
            width = 1
            while width < _LANES and i + width < rows.size and rows[i + width] == a0 + width:
                width += 1
            for j in range(k + 1):
                for r in range(_LANES):
                    w[j, r] = 0.0
            b0 = a0 + 1
            while b0 < n:
                m = min(_CHUNK, n - b0)
                for r in range(width):
                    a = a0 + r
                    tr = tt[r]
                    qr = qq[r]
                    cr = cc[r]
                    for b in range(m):
                        tr[b] = 0.0
                        qr[b] = 0.0
                    # the squared norm, column by column in order (four a pass)
                    j = 0
                    while j + 4 <= p:
                        e0, e1, e2, e3 = xt[j, a], xt[j + 1, a], xt[j + 2, a], xt[j + 3, a]
                        f0 = xt[j, b0 : b0 + m]
                        f1 = xt[j + 1, b0 : b0 + m]
                        f2 = xt[j + 2, b0 : b0 + m]
                        f3 = xt[j + 3, b0 : b0 + m]
                        for b in range(m):
                            d = e0 - f0[b]
                            u = tr[b] + d * d
                            d = e1 - f1[b]
                            u = u + d * d
                            d = e2 - f2[b]
                            u = u + d * d
                            d = e3 - f3[b]
                            tr[b] = u + d * d
                        j += 4
                    for jj in range(j, p):
                        e0 = xt[jj, a]
                        f0 = xt[jj, b0 : b0 + m]
                        for b in range(m):
                            d = e0 - f0[b]
                            tr[b] += d * d
                    # the squared projections, direction by direction in order
                    j = 0
                    while j + 4 <= k:
                        e0, e1, e2, e3 = yt[j, a], yt[j + 1, a], yt[j + 2, a], yt[j + 3, a]
                        f0 = yt[j, b0 : b0 + m]
                        f1 = yt[j + 1, b0 : b0 + m]
                        f2 = yt[j + 2, b0 : b0 + m]
                        f3 = yt[j + 3, b0 : b0 + m]
                        for b in range(m):
                            d = e0 - f0[b]
                            u = qr[b] + 0.5 * (d * d)
                            d = e1 - f1[b]
                            u = u + 0.5 * (d * d)
                            d = e2 - f2[b]
                            u = u + 0.5 * (d * d)
                            d = e3 - f3[b]
                            qr[b] = u + 0.5 * (d * d)
                        j += 4
                    for jj in range(j, k):
                        e0 = yt[jj, a]
                        f0 = yt[jj, b0 : b0 + m]
                        for b in range(m):
                            d = e0 - f0[b]
                            qr[b] += 0.5 * (d * d)
                    lo = a + 1 - b0  # partners b0 + b with b < lo do not follow row a
                    # no reduction in this loop, so it vectorises (divisions included)
                    for b in range(m):
                        h = 0.5 * tr[b]
                        h = np.inf if h != h else h
                        q = qr[b]
                        q = np.inf if q != q else q
                        t = h if h >= q else q
                        # an infinite norm adds nothing to w, even at clip = inf
                        keep = 1.0 if t < np.inf else 0.0
                        ok = b >= lo
                        c = clip / t if t > clip else keep
                        cr[b] = c if ok else 0.0
                        t = clip if t > clip else t  # min(t, clip)
                        tr[b] = t if ok else 0.0
                for r in range(width, _LANES):  # lanes without a row add zeros
                    for b in range(m):
                        tt[r, b] = 0.0
                        vv[r, b] = 0.0
                # the eight rows' sums side by side, each in order of b (written
                # out: eight independent chains, held in registers)
                s0, s1, s2, s3 = w[k, 0], w[k, 1], w[k, 2], w[k, 3]
                s4, s5, s6, s7 = w[k, 4], w[k, 5], w[k, 6], w[k, 7]
                v0, v1, v2, v3 = tt[0], tt[1], tt[2], tt[3]
                v4, v5, v6, v7 = tt[4], tt[5], tt[6], tt[7]
                for b in range(m):
                    s0 += v0[b]
                    s1 += v1[b]
                    s2 += v2[b]
                    s3 += v3[b]
                    s4 += v4[b]
                    s5 += v5[b]
                    s6 += v6[b]
                    s7 += v7[b]
                w[k, 0], w[k, 1], w[k, 2], w[k, 3] = s0, s1, s2, s3
                w[k, 4], w[k, 5], w[k, 6], w[k, 7] = s4, s5, s6, s7
                for j in range(k):
                    f0 = yt[j, b0 : b0 + m]
                    for r in range(width):
                        e0 = yt[j, a0 + r]
                        cr = cc[r]
                        vr = vv[r]
                        for b in range(m):
                            c = cr[b]
                            d = e0 - f0[b]
                            v = c * (0.5 * (d * d))
                            vr[b] = v if c > 0.0 else 0.0  # adding 0.0 changes no bit
                    s0, s1, s2, s3 = w[j, 0], w[j, 1], w[j, 2], w[j, 3]
                    s4, s5, s6, s7 = w[j, 4], w[j, 5], w[j, 6], w[j, 7]
                    v0, v1, v2, v3 = vv[0], vv[1], vv[2], vv[3]
                    v4, v5, v6, v7 = vv[4], vv[5], vv[6], vv[7]
                    for b in range(m):
                        s0 += v0[b]
                        s1 += v1[b]
                        s2 += v2[b]
                        s3 += v3[b]
                        s4 += v4[b]
                        s5 += v5[b]
                        s6 += v6[b]
                        s7 += v7[b]
                    w[j, 0], w[j, 1], w[j, 2], w[j, 3] = s0, s1, s2, s3
                    w[j, 4], w[j, 5], w[j, 6], w[j, 7] = s4, s5, s6, s7
                b0 += m
            for r in range(width):
                for j in range(k + 1):
                    out[a0 + r, j] = w[j, r]
            i += width

    sample = (np.ones((2, 3)), np.ones((3, 1)), np.ones((1, 3)), 1.0, np.zeros((3, 2)))
    try:
        compiled = numba.njit(cache=True, **options)(kernel)
        compiled(*sample, np.arange(3, dtype=np.int64))
    except Exception:  # no writable cache directory: compile in memory only
        compiled = numba.njit(cache=False, **options)(kernel)
    return compiled


def _load_numba() -> RowsFn | None:
    try:
        import numba  # noqa: F401
    except ImportError:
        return None
    return _compile_numba()


def _rows_fn(n_pairs: int) -> RowsFn:
    """numba for at least ``NUMBA_MIN_PAIRS`` pairs (or once loaded); ``DPPCA_KERNEL`` forces."""
    want = os.environ.get("DPPCA_KERNEL", "").strip().lower()
    if want == "numpy":
        return _rows_numpy
    if "numba" not in _cache:
        if not (n_pairs >= NUMBA_MIN_PAIRS or want == "numba"):
            return _rows_numpy
        with _load_lock:
            if "numba" not in _cache:
                _cache["numba"] = _load_numba()
    return _cache["numba"] or _rows_numpy


def moment_backend(n: int) -> str:
    """``"numba"`` or ``"numpy"``: the implementation :func:`moment_rows` uses for ``n`` rows."""
    return "numpy" if _rows_fn(n * (n - 1) // 2) is _rows_numpy else "numba"


def moment_rows(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    clip: float,
    *,
    n_jobs: int | None = None,
) -> NDArray[np.float64]:
    """The ``(n, k + 1)`` table of row ``a``'s partial sums over partners ``b > a``.

    ``x`` is ``(n, p)`` (already shifted), ``y = x V`` is ``(n, k)``. Tasks of
    rows taken from both ends (equal work) run in threads
    (:func:`dppca.kernels.threads._runner`; a task calls no BLAS, so nothing
    oversubscribes the cores, with or without threadpoolctl); each task writes its own rows,
    so the table does not depend on ``n_jobs``. Memory beyond the inputs:
    O(threads n) for numba, O(threads 2^18) elements for numpy.
    """
    n = x.shape[0]
    k = y.shape[1]
    out = np.zeros((n, k + 1))
    if n < 2:
        return out
    fn = _rows_fn(n * (n - 1) // 2)
    xt = np.ascontiguousarray(x.T)
    yt = np.ascontiguousarray(y.T)
    y = np.ascontiguousarray(y)
    half = (n + 1) // 2
    tasks = []
    for t0 in range(0, half, _ROWS_PER_TASK):
        front = np.arange(t0, min(t0 + _ROWS_PER_TASK, half), dtype=np.int64)
        back = n - 1 - front
        tasks.append(np.unique(np.concatenate([front, back])))
    with _runner(n_jobs, len(tasks), blas=False) as run:  # no BLAS call in a task
        for _ in run(lambda rows: fn(xt, y, yt, float(clip), out, rows), tasks):
            pass
    return out
