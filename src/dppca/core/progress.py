"""Progress reporting for long computations: a callback protocol and a text bar.

Kernels call ``progress(done, total)`` with counts of pairs. Nothing here is
data-dependent beyond those counts, which depend on the public ``n`` (and on
the design) only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["ProgressCallback", "ProgressLike", "TextBar", "resolve_progress"]

ProgressCallback = Callable[[int, int], object]
ProgressLike = bool | ProgressCallback | None


class TextBar:
    """A one-line text progress bar, ``[#####.....]  50% 1.2e+07/2.5e+07 pairs``.

    Parameters
    ----------
    stream : file-like, optional
        Where the bar is drawn; default ``sys.stderr`` (looked up at each call,
        so redirection by the caller is honoured).
    width : int, default=30
        Number of characters between the brackets.
    label : str, default="pairs"
        Unit of the counts.

    The bar is redrawn (with a carriage return) only when the whole percentage
    changes, and ends with a newline when ``done == total``.
    """

    def __init__(self, stream: TextIO | None = None, *, width: int = 30, label: str = "pairs"):
        self._stream = stream
        self.width = width
        self.label = label
        self._last = -1
        self._start = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        frac = 1.0 if total <= 0 else min(max(done / total, 0.0), 1.0)
        percent = int(100 * frac)
        if percent == self._last and done < total:
            return
        self._last = percent
        filled = round(self.width * frac)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.perf_counter() - self._start
        stream.write(
            f"\r[{bar}] {percent:3d}% {done:.3g}/{total:.3g} {self.label} {elapsed:.0f} s"
        )
        if done >= total:
            stream.write("\n")
        stream.flush()


def resolve_progress(progress: object) -> ProgressCallback | None:
    """Turn the ``progress`` option into a callback (or None for no reporting).

    None or False: no reporting. True: a :class:`TextBar` on stderr. A callable
    is called as ``progress(done, total)``.
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        return TextBar()
    if callable(progress):
        return progress
    raise TypeError(
        "progress must be None, False, True or a callable progress(done, total); "
        f"got {type(progress).__name__}."
    )
