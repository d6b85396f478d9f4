"""Threads for the kernels: how many, and a task runner that keeps results in order.

The in-memory kernels (:mod:`dppca.kernels.kendall`, :mod:`dppca.kernels.exact_pairs`) run
their row blocks or chunks through :func:`_runner`, which holds BLAS to one
thread and yields results in task order, so serial and threaded runs give
bit-identical results.
"""

from __future__ import annotations

import collections
import functools
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

__all__ = ["blas_single_threaded_by_env", "hold_blas", "resolve_n_jobs"]


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Threads for the kernels: ``n_jobs``, or every core this process may use."""
    if n_jobs is not None:
        return n_jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


_BLAS_THREAD_VARS = (
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OMP_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def blas_single_threaded_by_env() -> bool:
    """Whether the environment already holds BLAS to one thread (read at BLAS's load)."""
    return any(os.environ.get(name, "").strip() == "1" for name in _BLAS_THREAD_VARS)


@contextmanager
def hold_blas(threads: int = 1) -> Iterator[None]:
    """Hold BLAS (and LAPACK) to ``threads`` threads inside the block.

    A release's parallel work is the kernels' own thread pool
    (:func:`_runner`); the BLAS calls around it (the tau kernel's products,
    the scree's projections, eigensolvers, the post-release checks) are
    small or many, and BLAS's own threads spin while they wait: on a loaded
    machine that multiplies a release's CPU time several fold. The executor
    therefore runs every release inside this block. It needs threadpoolctl
    (the ``fast`` extra); without it the block changes nothing (set
    ``OPENBLAS_NUM_THREADS=1`` or the like before Python starts).

    The limit is process-wide, so overlapping holders (releases in the app's
    sessions, each in its own thread) share one: the first sets it, the last
    to leave restores what was there before, never an earlier holder's value.
    """
    global _held, _held_limits
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with _hold_lock:
        if _held == 0:
            _held_limits = threadpool_limits(limits=threads, user_api="blas")
        _held += 1
    try:
        yield
    finally:
        with _hold_lock:
            _held -= 1
            if _held == 0 and _held_limits is not None:
                _held_limits.restore_original_limits()
                _held_limits = None


_hold_lock = threading.Lock()
_held = 0
_held_limits: Any = None


@contextmanager
def _runner(
    n_jobs: int | None, n_tasks: int, *, blas: bool = True
) -> Iterator[Callable[..., Iterator[Any]]]:
    """A ``map`` that yields results in task order, on a thread pool when it pays.

    Tasks that call BLAS (``blas=True``, the Kendall tiles) must not
    oversubscribe the cores: each thread's BLAS call would start BLAS's own
    threads. BLAS is therefore held to one thread for the whole computation
    with threadpoolctl (the ``fast`` extra); every product is then computed
    the same way whatever ``n_jobs`` is, so serial and threaded runs give
    bit-identical results. Without threadpoolctl, the tasks run in threads
    only when the environment already holds BLAS to one thread
    (``OPENBLAS_NUM_THREADS=1`` or the like); otherwise serially, and BLAS
    may use its own threads inside each product. Tasks without BLAS calls
    (``blas=False``: the compiled or elementwise pair-moment rows) run in
    threads either way. A single task runs as it is (setting the limit costs
    about 0.4 ms, most of a small call).
    """
    workers = min(resolve_n_jobs(n_jobs), n_tasks)
    if n_tasks <= 1:
        yield map
        return
    if not blas:
        with _pool(workers) as run:
            yield run
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        if not blas_single_threaded_by_env():
            workers = 1
        with _pool(workers) as run:
            yield run
        return
    with threadpool_limits(limits=1, user_api="blas"), _pool(workers) as run:
        yield run


@contextmanager
def _pool(workers: int) -> Iterator[Callable[..., Iterator[Any]]]:
    """``map`` itself for one worker, else an ordered map on a pool of ``workers`` threads."""
    if workers <= 1:
        yield map
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dppca") as pool:
        yield functools.partial(_ordered_map, pool, 4 * workers)


def _ordered_map(
    pool: ThreadPoolExecutor, window: int, fn: Callable[[Any], Any], items: Iterable[Any]
) -> Iterator[Any]:
    """``pool.map(fn, items)`` with at most ``window`` tasks submitted ahead of the consumer.

    ``Executor.map`` submits every task at once and keeps each result until it
    is consumed in order, so while the first (largest) row block runs, the
    results of all the others would pile up: O(n p) memory. A window of a few
    tasks per thread keeps every thread busy (later tasks are smaller) and
    memory small.
    """
    todo = iter(items)
    pending = collections.deque(pool.submit(fn, x) for x in itertools.islice(todo, window))
    while pending:
        result = pending.popleft().result()
        for x in itertools.islice(todo, 1):
            pending.append(pool.submit(fn, x))
        yield result
