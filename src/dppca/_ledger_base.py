"""What the privacy ledger and its budget view share: the error, keys, file and records.

:func:`fingerprint` identifies a dataset by a hash of its values, shape and
column names (:func:`frame_fingerprint` for a table's numeric columns),
:func:`default_ledger_path` says where the ledger file lives, and two helpers
turn a cost into the row the ledger stores and back. Split out of
:mod:`dppca.ledger`, which re-exports every public name here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._lazy import pandas as pd
from .accounting import PrivacyCost

__all__ = ["LedgerError", "default_ledger_path", "fingerprint", "frame_fingerprint"]


class LedgerError(ValueError):
    """A ledger cannot do what was asked (no total set, a fixed total, a bad file)."""


def fingerprint(data: Any, columns: Sequence[str]) -> str:
    """A hex digest that identifies a dataset: its values, shape and column names.

    Parameters
    ----------
    data : array-like of shape (n, p)
        The numeric data, converted to float64 (``-0.0`` counts as ``0.0``).
    columns : sequence of str
        One name per column.

    Returns
    -------
    str
        64 hexadecimal digits (SHA-256).

    Notes
    -----
    The digest is stored on the data holder's machine only. It is not a
    private release: anyone who can guess the whole table can confirm the
    guess with it, so do not publish it.

    Examples
    --------
    >>> import numpy as np
    >>> a = fingerprint(np.eye(3), ["x", "y", "z"])
    >>> a == fingerprint(np.eye(3), ["x", "y", "w"]), len(a)
    (False, 64)
    """
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise ValueError(f"data must be two-dimensional; got {arr.ndim} dimension(s).")
    names = [str(c) for c in columns]
    if len(names) != arr.shape[1]:
        raise ValueError(
            f"columns must name every column of data ({arr.shape[1]}); got {len(names)}."
        )
    values = np.ascontiguousarray(arr, dtype="<f8") + 0.0  # one bit pattern for zero
    h = hashlib.sha256(b"dppca-fingerprint-v1\0")
    h.update(json.dumps(names, ensure_ascii=False).encode("utf-8") + b"\0")
    h.update(np.asarray(values.shape, dtype="<i8").tobytes())
    h.update(values.data.cast("B"))
    return h.hexdigest()


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """The :func:`fingerprint` of a table's numeric columns (all of them).

    The app and the command line key their budgets with this: analysing other
    columns of the same table spends from the same budget, because the rows
    are the same people.
    """
    from ._validation import is_numeric_dtype

    names = [c for c in frame.columns if is_numeric_dtype(frame[c].dtype)]
    values = frame[names].to_numpy(dtype=np.float64, na_value=np.nan)
    return fingerprint(values, [str(c) for c in names])


def default_ledger_path() -> Path:
    """Where the ledger lives unless told otherwise.

    ``$DPPCA_LEDGER`` if set; else ``$XDG_STATE_HOME/dppca/ledger.sqlite``;
    else ``~/.local/state/dppca/ledger.sqlite`` (on Windows under
    ``%LOCALAPPDATA%``).
    """
    override = os.environ.get("DPPCA_LEDGER")
    if override:
        return Path(override).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    if not state and os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        state = os.environ["LOCALAPPDATA"]
    base = Path(state).expanduser() if state else Path.home() / ".local" / "state"
    return base / "dppca" / "ledger.sqlite"


def _check_fp(fp: object) -> str:
    if not isinstance(fp, str) or not fp:
        raise TypeError(f"fp must be a fingerprint string; got {type(fp).__name__}.")
    return fp


_BASIC_FIELDS = ("eps", "delta", "mechanism", "released", "parts")


def _detail(leaf: PrivacyCost) -> str | None:
    """Fields of a cost beyond the basic ones (an accountant's parameters), as JSON."""
    extra = {
        f.name: getattr(leaf, f.name)
        for f in dataclasses.fields(leaf)
        if f.name not in _BASIC_FIELDS
    }
    if not extra:
        return None
    return json.dumps(extra, default=repr)


def _leaf(
    eps: float, delta: float, mechanism: str, released: str, detail: str | None
) -> PrivacyCost:
    known = {f.name for f in dataclasses.fields(PrivacyCost)}
    extra = {k: v for k, v in json.loads(detail).items() if k in known} if detail else {}
    try:
        return PrivacyCost(float(eps), float(delta), mechanism, released, **extra)
    except (TypeError, ValueError):  # a field of another version: keep the basic cost
        return PrivacyCost(float(eps), float(delta), mechanism, released)
