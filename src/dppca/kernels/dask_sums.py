"""Dask backend of the spherical Kendall kernels (optional extra ``dppca[dask]``).

The pair sum is split into independent tasks that run on whatever Dask
scheduler is active (a ``distributed`` client if one is the default, else the
local scheduler): tiles of row blocks I <= J for the exact design, chunks of
consecutive permuted positions for the balanced design. A task calls
:func:`dppca.kernels.pairsums.tile_sums` (the same Gram tile, fused weight pass and
close-pair route as the in-memory path, which instead hoists the p x p
products out of its tile loop) or :func:`dppca.kernels.pairsums.balanced_chunk` (as in
memory) and returns a small ``PairSums``
(a p x p matrix and tie counts); the client adds them in a fixed order, so the
result does not depend on which task finishes first. Only the pre-noise
matrix is computed here: any noise is added once, on the client, afterwards.

This module imports dask; ``import dppca`` does not import it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.data_checks import is_numeric_dtype
from ..core.progress import ProgressCallback
from .pairsums import (
    PairSums,
    balanced_chunk,
    balanced_chunks,
    exact_tiles,
    tile_sums,
)

__all__ = ["check_dask_data", "dask_balanced_pair_sum", "dask_pair_sum"]

# Tiles are bigger than in memory: each task has a fixed scheduling overhead.
_DASK_BLOCK = 2048
_DASK_MIN_CHUNK = 4096


def _import_dask() -> Any:
    try:
        import dask
        import dask.array
    except ImportError:  # pragma: no cover - dask is a test dependency
        raise ImportError(
            "Dask input needs the optional dependency dask; install it with "
            "pip install 'dppca[dask]'."
        ) from None
    return dask


def check_dask_data(X: Any, *, name: str = "X") -> tuple[Any, tuple[str, ...]]:
    """Validate a Dask array or DataFrame; return a float64 Dask array and variable names.

    The same checks as :func:`dppca.core.validation.check_data` (numeric, two
    dimensions, at least 2 rows, finite values); the finiteness check reads
    the data once. Row counts of a DataFrame's partitions are computed.
    """
    dask = _import_dask()
    da = dask.array
    if hasattr(X, "to_dask_array") and hasattr(X, "columns"):
        bad = [str(c) for c, t in X.dtypes.items() if not is_numeric_dtype(t)]
        if bad:
            raise TypeError(
                f"{name} must have only numeric columns; non-numeric: "
                f"{', '.join(repr(c) for c in bad[:5])}. Drop or encode them first."
            )
        variables = tuple(str(c) for c in X.columns)
        arr = X.to_dask_array(lengths=True)
    elif isinstance(X, da.Array):
        arr = X
        if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
            raise TypeError(
                f"{name} must hold real numbers (integer or float); got dtype {arr.dtype}."
            )
        if arr.ndim != 2:
            raise ValueError(
                f"{name} must be two-dimensional (rows are observations); got {arr.ndim} "
                "dimension(s)."
            )
        variables = tuple(f"V{j + 1}" for j in range(arr.shape[1]))
    else:
        raise TypeError(
            f"{name} must be a dask array or a dask DataFrame; got {type(X).__name__}."
        )
    arr = arr.astype(np.float64)
    if any(np.isnan(c) for c in arr.chunks[0]):
        arr = arr.compute_chunk_sizes()
    n, p = arr.shape
    if n < 2:
        raise ValueError(f"{name} must have at least 2 rows; got {n}.")
    if p < 1:
        raise ValueError(f"{name} must have at least 1 column(s); got {p}.")
    finite = np.asarray(da.isfinite(arr).all(axis=0).compute())
    if not finite.all():
        cols = np.flatnonzero(~finite)
        shown = ", ".join(repr(variables[j]) for j in cols[:5]) + (" ..." if len(cols) > 5 else "")
        raise ValueError(
            f"{name} contains NaN or infinite values (columns {shown}); "
            "remove or impute them before the analysis."
        )
    return arr, variables


def _active_client(tasks: list[Any]) -> Any:
    """The ``distributed`` client that dask would use for ``tasks``, or None.

    Follows dask's own choice (``dask.base.get_scheduler``): a default client,
    unless ``dask.config.set(scheduler=...)`` says otherwise.
    """
    if "distributed" not in sys.modules:  # no client can exist; do not import it
        return None
    import dask.base
    from distributed import Client

    scheduler = dask.base.get_scheduler(collections=tasks)
    owner = getattr(scheduler, "__self__", None)
    return owner if isinstance(owner, Client) else None


def _run(tasks: list[Any], sizes: list[int], progress: ProgressCallback | None) -> list[Any]:
    """Compute delayed ``tasks`` on the active scheduler; results in task order.

    ``sizes[t]`` pairs are reported to ``progress`` when task ``t`` finishes.
    """
    dask = _import_dask()
    total = int(sum(sizes))
    client = _active_client(tasks)
    if client is not None:
        from distributed import as_completed

        futures = client.compute(tasks)
        if progress is not None:
            index = {f.key: t for t, f in enumerate(futures)}
            done = 0
            for future in as_completed(futures):
                done += sizes[index[future.key]]
                progress(done, total)
        return list(client.gather(futures))
    if progress is None:
        return list(dask.compute(*tasks))
    from dask.callbacks import Callback

    weight = {task.key: size for task, size in zip(tasks, sizes, strict=True)}
    state = {"done": 0}

    def posttask(key: Any, result: Any, dsk: Any, state_: Any, worker_id: Any) -> None:
        if key in weight:
            state["done"] += weight[key]
            progress(state["done"], total)

    with Callback(posttask=posttask):
        return list(dask.compute(*tasks))


def _merge(results: list[PairSums], p: int) -> PairSums:
    total = PairSums(p)
    for part in results:
        total.merge(part)
    return total


def dask_pair_sum(
    arr: Any, *, ties: str, block_size: int | None, progress: ProgressCallback | None
) -> PairSums:
    """Exact design on a Dask array: one task per tile of row blocks I <= J.

    The accuracy shift is the first row of the data (one value of each column)
    instead of the in-memory path's middle order statistics, which would need
    a distributed selection. Because the matrix is translation invariant this
    changes rounding only; data whose first row lies far out may send more
    pairs to the (exact) explicit-difference route.
    """
    dask = _import_dask()
    n, p = arr.shape
    block = _DASK_BLOCK if block_size is None else block_size
    arr = arr.rechunk((block, p))
    shift = np.asarray(arr[0].compute(), dtype=np.float64)
    blocks = arr.to_delayed().ravel()
    tile = dask.delayed(tile_sums, pure=True)
    tasks, sizes = [], []
    for i0, _i1, j0, _j1, size in exact_tiles(n, block):
        tasks.append(tile(blocks[i0 // block], blocks[j0 // block], shift, i0, j0, ties))
        sizes.append(size)
    return _merge(_run(tasks, sizes, progress), p)


def dask_balanced_pair_sum(
    arr: Any,
    order: NDArray[np.int64],
    m: int,
    *,
    ties: str,
    block_size: int | None,
    progress: ProgressCallback | None,
) -> PairSums:
    """Balanced design on a Dask array: rows permuted by ``order``, one task per chunk.

    Each task receives its chunk of permuted rows and the first ``m`` rows
    after it (wrapping around), the only rows its pairs need.
    """
    dask = _import_dask()
    n, p = arr.shape
    chunk = max(_DASK_MIN_CHUNK, m) if block_size is None else max(block_size, m)
    chunk = min(chunk, n)
    with dask.config.set({"array.slicing.split_large_chunks": False}):
        permuted = arr[order].rechunk((chunk, p))
    blocks = permuted.to_delayed().ravel()
    step = dask.delayed(balanced_chunk, pure=True)
    join = dask.delayed(np.concatenate, pure=True)
    tasks, sizes = [], []
    for a, b in balanced_chunks(n, m, chunk):
        pieces = [blocks[a // chunk]]
        need, pos = m, b % n
        while need > 0:  # the next m positions, possibly across chunks and the wrap
            take = min(need, min(pos // chunk * chunk + chunk, n) - pos)
            offset = pos % chunk
            pieces.append(blocks[pos // chunk][offset : offset + take])
            need -= take
            pos = (pos + take) % n
        tasks.append(step(join(pieces), m, ties, a, n))
        sizes.append((b - a) * m)
    total = _merge(_run(tasks, sizes, progress), p)
    if total.example is not None:
        total.example = (int(order[total.example[0]]), int(order[total.example[1]]))
    return total
