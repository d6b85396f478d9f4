"""The identities the ledger keys on: a dataset's fingerprint and a release's content hash.

:func:`fingerprint` names a dataset by the multiset of its rows;
:func:`content_hash` names a release by its released values as a release
file encodes them. :mod:`dppca.privacy.ledger` is the public home of
:func:`fingerprint`; :mod:`dppca.release_io` hashes releases with
:func:`content_hash`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.lazy import pandas as pd

__all__ = ["content_hash", "fingerprint", "legacy_fingerprints", "payload_hash", "table_digest"]


def fingerprint(data: Any, columns: Sequence[str] | None = None) -> str:
    """A hex digest that names a dataset: its rows, over all its numeric columns.

    Parameters
    ----------
    data : DataFrame or array-like of shape (n, p)
        The table as read, before any column choice or scaling. For a
        DataFrame every column the rule for messy tables analyses counts
        (numbers, and booleans as 0/1, see :func:`dppca.core.tables.column_kind`);
        text columns, such as group labels, do not. An array is converted to float64.
    columns : sequence of str, optional
        One name per column of an array; default the DataFrame's names, else
        ``V1..Vp``.

    Returns
    -------
    str
        64 hexadecimal digits (SHA-256).

    Notes
    -----
    The key of a dataset's budget in the ledger and the ``data_fingerprint``
    of a release file. It depends on the multiset of rows and the column
    names only: reordering the rows or the columns gives the same digest
    (the rows are the same people), any changed value (``-0.0`` counts as
    ``0.0``, every NaN as one NaN), row or name gives another. Which columns
    are analysed, and how they are scaled, does not matter: every analysis of
    the same rows spends from one budget, whatever the ``missing`` rule
    (missing cells count as NaN). Booleans count as 0/1, so a
    flag written ``True``/``False`` or ``1``/``0`` names the same dataset.

    The digest is stored on the data holder's machine only. It is not a
    private release: anyone who can guess the whole table can confirm the
    guess with it, so do not publish it.

    Examples
    --------
    >>> import numpy as np
    >>> a = fingerprint(np.eye(3), ["x", "y", "z"])
    >>> a == fingerprint(np.eye(3)[::-1], ["x", "y", "z"]), len(a)
    (True, 64)
    """
    from ..core.tables import check_unique_columns

    if isinstance(data, pd.DataFrame):
        from ..core.tables import tidy_table

        # the columns the rule for messy tables analyses, as it reads them
        table = tidy_table(data, missing="zero", min_cols=0, name="data")
        if columns is None:
            columns = list(table.variables)
        data = table.data
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise ValueError(f"data must be two-dimensional; got {arr.ndim} dimension(s).")
    names = [f"V{j + 1}" for j in range(arr.shape[1])] if columns is None else list(columns)
    names = [str(c) for c in names]
    check_unique_columns(names, "columns")
    if len(names) != arr.shape[1]:
        raise ValueError(
            f"columns must name every column of data ({arr.shape[1]}); got {len(names)}."
        )
    order = sorted(range(len(names)), key=lambda j: names[j])
    values = np.array(arr, dtype="<f8")[:, order] + 0.0  # one bit pattern for zero
    values[np.isnan(values)] = np.nan  # one bit pattern for NaN
    if values.shape[0] > 1 and values.shape[1]:
        # Rows in a canonical order (lexicographic, NaN last): the digest
        # sees the multiset of rows, not their order.
        values = values[np.lexsort(values.T[::-1])]
    values = np.ascontiguousarray(values)
    h = hashlib.sha256(b"dppca-fingerprint-v2\0")
    h.update(json.dumps([names[j] for j in order], ensure_ascii=False).encode("utf-8") + b"\0")
    h.update(np.asarray(values.shape, dtype="<i8").tobytes())
    h.update(values.data.cast("B"))
    return h.hexdigest()


def table_digest(frame: Any) -> str:
    """A SHA-256 of a whole table: every column (numbers, booleans and text), rows in any order.

    Unlike :func:`fingerprint`, which keys a budget by the numeric columns,
    this digest sees text and label columns too; it decides whether a table is
    exactly a bundled, public one (:func:`dppca.datasets.bundled_name`).
    """
    from ..core.tables import column_kind

    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        return ""
    order = sorted(range(len(columns)), key=lambda j: columns[j])
    parts: list[list[Any]] = []
    for j in order:
        col = frame.iloc[:, j]
        if column_kind(col) != "other":
            if col.dtype == object:
                col = col.astype("boolean")
            values = col.to_numpy(dtype=np.float64, na_value=np.nan) + 0.0
            parts.append([None if v != v else float(v) for v in values.tolist()])
        else:
            parts.append([None if v is None or v != v else str(v) for v in col.tolist()])
    rows = sorted(zip(*parts, strict=True), key=repr) if parts else []
    text = json.dumps([[columns[j] for j in order], rows], ensure_ascii=False)
    return hashlib.sha256(b"dppca-table-v1\0" + text.encode("utf-8")).hexdigest()


def legacy_fingerprints(data: Any) -> tuple[str, ...]:
    """The keys earlier dppca versions gave the same table, for ledgers they wrote.

    The first ledger (schema 1) keyed a table by rule v1: a SHA-256 of its
    integer and float columns (booleans and text left out) in file order,
    their names, the shape and the values row by row, rows in file order.
    :func:`fingerprint` (rule v2) replaced it, so a ledger of that version
    holds its spending under a key the current rule never produces;
    :meth:`dppca.privacy.ledger.Ledger.key` looks these keys up and moves what
    they recorded onto the current key, so no spending is forgotten.

    Parameters
    ----------
    data : DataFrame or array-like of shape (n, p)
        The table as read (an array counts as all numeric, named ``V1..Vp``).

    Returns
    -------
    tuple of str
        The v1 key (one today; a later change of rule adds its own).

    Examples
    --------
    >>> import numpy as np
    >>> keys = legacy_fingerprints(np.eye(3))
    >>> len(keys), len(keys[0])
    (1, 64)
    """
    if isinstance(data, pd.DataFrame):
        numeric = [
            c
            for c in data.columns
            if pd.api.types.is_numeric_dtype(data[c].dtype)
            and not pd.api.types.is_bool_dtype(data[c].dtype)
            and not pd.api.types.is_complex_dtype(data[c].dtype)
        ]
        names = [str(c) for c in numeric]
        try:
            arr = data[numeric].to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            return ()
    else:
        try:
            arr = np.asarray(data, dtype=np.float64)
        except (TypeError, ValueError):
            return ()
        if arr.ndim != 2:
            return ()
        names = [f"V{j + 1}" for j in range(arr.shape[1])]
    values = np.ascontiguousarray(arr, dtype="<f8") + 0.0  # one bit pattern for zero
    h = hashlib.sha256(b"dppca-fingerprint-v1\0")
    h.update(json.dumps(names, ensure_ascii=False).encode("utf-8") + b"\0")
    h.update(np.asarray(values.shape, dtype="<i8").tobytes())
    h.update(values.tobytes())
    return (h.hexdigest(),)


def content_hash(encoded: Any) -> str:
    """SHA-256 of a release's values as a release file encodes them, in canonical JSON.

    ``encoded`` is the ``"result"`` entry of a release file (see
    :mod:`dppca.release_io`): floats by their shortest round-trip repr, keys
    sorted, no spaces, so the same release gives the same digest whether it
    comes from memory or from a file.
    """
    text = json.dumps(
        encoded, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def payload_hash(payload: str) -> str:
    """The :func:`content_hash` of the release in a release file's text."""
    try:
        document = json.loads(payload)
        return content_hash(document["result"])
    except (ValueError, TypeError, KeyError):
        raise ValueError(
            "payload must be the text of a release file (dppca.release_io.release_text)."
        ) from None
