"""The elementwise pass of one tile of the exact design, compiled or in numpy.

Given the Gram tile ``G = Y_I Y_J^T`` of two row blocks and their squared
norms, :func:`weights_tile` overwrites ``G`` with the Laplacian weights

    w_ab = 1 / d_ab,   d_ab = |y_a|^2 + |y_b|^2 - 2 G_ab   (a squared distance),

sets ``w_ab = 0`` for the pairs that must take the exact route instead (the
*close* pairs: ``d_ab <= CLOSE_REL * (|y_a|^2 + |y_b|^2)`` or
``d_ab <= CLOSE_TINY``) and, on a diagonal tile, for the pairs with ``b <= a``;
adds the column sums of the weights into ``colsum``; and returns the number of
close pairs. A weight is never 0 otherwise (``d_ab`` is finite because the
caller keeps ``|y|^2 <= 5e299``), so the close pairs are the zeros of the tile.

Two implementations compute the same thing:

* ``numba`` (the optional extra ``dppca[fast]``): one fused pass over the tile,
  vectorised, without temporaries, releasing the GIL so tiles run in threads;
* ``numpy``: the fallback, a few passes with b x b temporaries.

Both make the same floating-point operations in the same order (the same
comparisons, correctly rounded reciprocals, column sums added row by row), so
their results are bit-identical and a seeded release does not depend on which
one ran. The numba function is compiled on first use and cached on disk when a
cache directory is writable.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "CLOSE_REL",
    "CLOSE_TINY",
    "NUMBA_MIN_PAIRS",
    "kernel_backend",
    "weights_fn",
    "weights_tile",
]

# A pair goes the explicit-difference route when its Gram-based squared distance is
# at most CLOSE_REL * (|y_a|^2 + |y_b|^2). The Laplacian's rounding error for a pair is
# about eps_machine * (|y_a|^2 + |y_b|^2) / d <= 2.2e-16 / 1e-2 per unit weight, far
# below the 1e-10 accuracy target. Both tests are relative, so rescaling the data
# changes nothing; CLOSE_TINY only keeps weights (and sums of weights) finite.
CLOSE_REL = 1e-2
CLOSE_TINY = 1e-280
#: Computations with fewer pairs use numpy unless numba is already loaded (n ~ 14000).
NUMBA_MIN_PAIRS = 10**8

WeightsFn = Callable[
    [NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], bool, NDArray[np.float64]],
    int,
]

_cache: dict[str, Any] = {}
_load_lock = threading.Lock()  # threads (or Dask tasks) may ask for the kernel at once


def _weights_numpy(
    G: NDArray[np.float64],
    sq_i: NDArray[np.float64],
    sq_j: NDArray[np.float64],
    diagonal: bool,
    colsum: NDArray[np.float64],
) -> int:
    """The numpy fallback of :func:`weights_tile` (a few passes, two b x b temporaries)."""
    scale = np.add.outer(sq_i, sq_j)
    G *= -2.0
    G += scale  # squared distances
    scale *= CLOSE_REL
    near = np.less_equal(G, scale)
    near |= G <= CLOSE_TINY  # NaN cannot occur: |y|^2 <= 5e299 keeps every term finite
    del scale
    if diagonal:
        near[np.tril_indices(G.shape[0], m=G.shape[1])] = True  # not pairs: weight 0
        n_close = int(np.count_nonzero(near)) - _lower_count(G.shape)
    else:
        n_close = int(np.count_nonzero(near))
    np.copyto(G, np.inf, where=near)  # 1 / inf = 0: the weight of a close pair
    np.reciprocal(G, out=G)
    colsum += G.sum(axis=0)  # axis 0 of a C array: rows added in order, as in numba
    return n_close


def _lower_count(shape: tuple[int, int]) -> int:
    """Number of positions (a, b) with b <= a in a tile of this shape."""
    rows, cols = shape
    return sum(min(a + 1, cols) for a in range(rows))


def _compile_numba() -> WeightsFn:
    """Compile the fused kernel (imports numba, about 0.3 s, only when first used)."""
    import numba

    def fused(G, sq_i, sq_j, diagonal, colsum):  # pragma: no cover - compiled
        bi, bj = G.shape
        n_close = 0
        col = np.zeros(bj)  # summed from 0 and then added, as in the numpy fallback
        for a in range(bi):
            sa = sq_i[a]
            lo = a if diagonal else -1
            # A fixed trip count with masks (no branch, no variable start) keeps the
            # loop vectorised.
            for b in range(bj):
                s = sa + sq_j[b]
                d = s - 2.0 * G[a, b]
                far = (d > CLOSE_REL * s) & (d > CLOSE_TINY)
                valid = b > lo
                w = 1.0 / d
                w = w if (far and valid) else 0.0
                n_close += 1 if (valid and not far) else 0
                G[a, b] = w
                col[b] += w
        for b in range(bj):
            colsum[b] += col[b]
        return n_close

    # error_model="numpy": 1/0 is inf, not a Python exception; that check would
    # stop the loop from being vectorised. The result of such a division is
    # never used (the pair is close and its weight is 0).
    options: dict[str, Any] = {"nogil": True, "error_model": "numpy", "fastmath": False}
    try:
        compiled = numba.njit(cache=True, **options)(fused)
        compiled(np.zeros((2, 2)), np.ones(2), np.ones(2), True, np.zeros(2))
    except Exception:  # no writable cache directory: compile in memory only
        compiled = numba.njit(cache=False, **options)(fused)
    return compiled


def _load_numba() -> WeightsFn | None:
    try:
        import numba  # noqa: F401
    except ImportError:
        return None
    return _compile_numba()


def weights_fn(n_pairs: int | None = None) -> WeightsFn:
    """The implementation of :func:`weights_tile` for a computation of ``n_pairs`` pairs.

    Loading numba and the compiled kernel costs about 0.6 CPU-seconds once per
    process, while the fused pass saves about 2 ns per pair over numpy, so
    numba is loaded only for computations of at least ``NUMBA_MIN_PAIRS``
    pairs (or any size once it is loaded). ``DPPCA_KERNEL=numpy`` or ``numba``
    in the environment forces a choice. Both give bit-identical weights.
    """
    want = os.environ.get("DPPCA_KERNEL", "").strip().lower()
    if want == "numpy":
        return _weights_numpy
    if "numba" not in _cache:
        big = n_pairs is None or n_pairs >= NUMBA_MIN_PAIRS
        if not (big or want == "numba"):
            return _weights_numpy
        with _load_lock:
            if "numba" not in _cache:
                _cache["numba"] = _load_numba()
    return _cache["numba"] or _weights_numpy


def kernel_backend(n_pairs: int | None = None) -> str:
    """The implementation used for ``n_pairs`` pairs: ``"numba"`` or ``"numpy"``.

    ``"numba"`` when numba is installed (``pip install 'dppca[fast]'``), the
    computation is large enough (see :func:`weights_fn`) and the environment
    variable ``DPPCA_KERNEL`` is not ``numpy``.
    """
    return "numpy" if weights_fn(n_pairs) is _weights_numpy else "numba"


def weights_tile(
    G: NDArray[np.float64],
    sq_i: NDArray[np.float64],
    sq_j: NDArray[np.float64],
    diagonal: bool,
    colsum: NDArray[np.float64],
) -> int:
    """Turn the Gram tile ``G`` into weights in place; return the number of close pairs.

    See the module documentation. The tile's column sums are added to ``colsum``
    (length ``G.shape[1]``).
    """
    return int(weights_fn(G.size)(G, sq_i, sq_j, bool(diagonal), colsum))
