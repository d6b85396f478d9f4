"""The app's data side: uploads, column choices and group labels (no Shiny)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.data_checks import check_finite_values
from ..core.tables import check_missing as table_missing
from ..core.tables import column_kind, tidy_table

__all__ = [
    "MAX_UPLOAD_BYTES",
    "MISSING_BOX",
    "MISSING_HELP",
    "DataError",
    "Selection",
    "numeric_columns",
    "parse_labels",
    "read_csv_upload",
    "select_data",
]

#: Largest accepted upload, in bytes.
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
#: The label of the page's checkbox for tables with missing values (``missing="zero"``).
MISSING_BOX = "Analyse missing values (missing = zero)"
#: What the page says under that checkbox.
MISSING_HELP = (
    "Without it, a chosen column with a missing value (an empty cell, or a cell that is not "
    "a number) is refused. With it, no row is left out: a cell missing in either row of a "
    "pair adds nothing to that pair's term, n stays the number of rows and the cost is "
    "unchanged. "
    "Text columns are always left out, and True/False columns are analysed as 0/1."
)


class DataError(ValueError):
    """A data or settings problem, worded for the page (no traceback)."""


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    """Names of the columns the analysis accepts: numbers, and booleans (as 0/1).

    The rule of :func:`dppca.core.tables.column_kind`, as for the library and
    the command line.
    """
    return [str(c) for c in frame.columns if column_kind(frame[c]) != "other"]


def _megabytes(size: int) -> str:
    return f"{size / 1024 / 1024:.3g} MB"


def read_csv_upload(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    size: int | None = None,
    limit: int = MAX_UPLOAD_BYTES,
) -> pd.DataFrame:
    """Read an uploaded CSV file, or raise :class:`DataError` with a readable reason.

    Parameters
    ----------
    path : path-like
        Where the upload was stored.
    name : str, optional
        The file name the user chose (shown in messages); default the path's name.
    size : int, optional
        Its size in bytes as reported by the browser. The larger of it and
        the measured size is checked, so a browser cannot understate it.
    limit : int, default=MAX_UPLOAD_BYTES
        Largest accepted size; checked before the file is parsed.

    Returns
    -------
    pandas.DataFrame
        With at least one row and one numeric column.
    """
    name = os.path.basename(os.fspath(path)) if name is None else str(name)
    if not name.lower().endswith(".csv"):
        raise DataError(f"{name!r} is not a CSV file: choose a file whose name ends in .csv.")
    # The bytes actually stored count, whatever size the browser declared.
    measured = os.path.getsize(path)
    size = measured if size is None else max(int(size), measured)
    if size > limit:
        raise DataError(
            f"{name!r} is too large ({_megabytes(size)}); the limit is {_megabytes(limit)}."
        )
    if size == 0:
        raise DataError(f"{name!r} is empty.")
    with open(path, "rb") as fh:
        head = fh.read(8192)
    if b"\x00" in head:
        raise DataError(f"{name!r} is not a text CSV file (it holds binary data).")
    from ..core.reading import raw_header, sniff_csv_layout
    from ..core.tables import check_unique_columns

    # European files (semicolons, decimal commas) are recognised and read as such.
    sep, decimal = sniff_csv_layout(path)
    try:
        check_unique_columns(raw_header(path, sep), repr(name))
        frame = pd.read_csv(path, sep=sep, decimal=decimal)
    except pd.errors.EmptyDataError:
        raise DataError(f"{name!r} is empty.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{name!r} could not be read as CSV: {first}") from None
    if frame.shape[0] == 0:
        raise DataError(f"{name!r} has a header but no rows.")
    if not numeric_columns(frame):
        raise DataError(
            f"{name!r} has no numeric columns; the analysis needs at least two columns "
            "of numbers (check the separator: it must be a comma)."
        )
    return frame


@dataclass(frozen=True, eq=False)
class Selection:
    """The analysed part of a table: numeric columns and optional group labels."""

    X: pd.DataFrame
    groups: np.ndarray | None = None
    group_column: str | None = None
    groups_public: bool = False
    group_labels: tuple[str, ...] | None = None
    #: Number of groups a score release would show (public list or labels found).
    n_groups: int | None = None
    #: The missing-values rule ("refuse" or "zero"), and what the rule for messy tables did.
    missing: str = "refuse"
    notes: tuple[str, ...] = ()
    # The shape is read once here, so pricing a release never touches the data.
    _n: int = field(init=False, repr=False)
    _columns: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_n", int(self.X.shape[0]))
        object.__setattr__(self, "_columns", tuple(str(c) for c in self.X.columns))

    @property
    def n(self) -> int:
        """Number of rows."""
        return self._n

    @property
    def columns(self) -> tuple[str, ...]:
        """The analysed columns, in order."""
        return self._columns


def select_data(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    group: str | None = None,
    groups_public: bool = False,
    group_labels: Sequence[str] | str | None = None,
    missing: str = "refuse",
) -> Selection:
    """Check a choice of columns and return what the analysis will use.

    The chosen columns go through the one rule for messy tables
    (:func:`dppca.core.tables.tidy_table`), as in the library and on the
    command line: booleans become 0/1, the table's non-numeric columns (other
    than the group column) are left out with a note, and missing values in a
    chosen column are refused unless ``missing="zero"`` (the page's checkbox
    :data:`MISSING_BOX`), under which a missing cell adds nothing to a pair's term
    and n stays every row. The group column is not analysed.

    Raises :class:`DataError` when fewer than two numeric columns are chosen,
    when the group column is also an analysed column, when a chosen column
    has missing values (under ``"refuse"``) or infinite ones, or the group
    column has missing labels and no public list of labels is given.
    ``group_labels`` (a sequence or comma-separated text; empty means none)
    is the public list of possible labels: then the released label set is
    that list, and rows with other labels belong to no group. The message
    names the columns only: the app runs on the data holder's machine, for
    the data holder.
    """
    columns = [str(c) for c in columns]
    numeric = set(numeric_columns(frame))
    unknown = [c for c in columns if c not in frame.columns]
    if unknown:
        raise DataError(f"unknown column(s): {', '.join(unknown)}.")
    not_numeric = [c for c in columns if c not in numeric]
    if not_numeric:
        raise DataError(f"column(s) {', '.join(not_numeric)} are not numeric.")
    if len(columns) < 2:
        raise DataError("choose at least two numeric columns.")
    if group is not None and group in columns:
        raise DataError(
            f"the group column {group!r} is also an analysed column; remove it from one of them."
        )
    if group is not None and group not in frame.columns:
        raise DataError(f"unknown group column {group!r}.")
    text = [str(c) for c in frame.columns if str(c) not in numeric and str(c) != group]
    try:  # the text columns only give the note that they are left out
        table = tidy_table(
            frame[[*columns, *text]],
            missing=missing,
            min_cols=2,
            name="the data",
            option=f"tick '{MISSING_BOX}'",
        )
    except (TypeError, ValueError) as exc:
        raise DataError(str(exc)) from None
    try:
        check_finite_values(table.data, table.variables, "the data")
    except ValueError as exc:
        raise DataError(str(exc)) from None
    if table.n < 4:
        raise DataError(f"the data need at least 4 rows; got {table.n}.")
    labels = None
    public_labels = parse_labels(group_labels)
    if group is not None:
        if public_labels is None and table.rows(frame[group].isna().to_numpy()).any():
            raise DataError(
                f"the group column {group!r} has missing labels; give the public list of "
                "labels (rows with a missing label then belong to no group)."
            )
        labels = table.rows(frame[group].astype(str).to_numpy())
    n_groups = None
    if labels is not None:
        n_groups = len(public_labels) if public_labels is not None else len(pd.unique(labels))
    return Selection(
        X=pd.DataFrame(table.data, columns=columns),
        groups=labels,
        group_column=group,
        groups_public=bool(groups_public) and group is not None,
        group_labels=public_labels if group is not None else None,
        n_groups=n_groups,
        missing=table_missing(missing),
        notes=table.notes,
    )


def parse_labels(group_labels: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """A public list of group labels from a sequence or comma-separated text (None if empty)."""
    if group_labels is None:
        return None
    items = group_labels.split(",") if isinstance(group_labels, str) else list(group_labels)
    labels = tuple(str(x).strip() for x in items if str(x).strip())
    if not labels:
        return None
    if len(set(labels)) != len(labels):
        raise DataError("the list of group labels names a label twice.")
    return labels
