"""Reading a data file in chunks for ``--design balanced``, through the rule for messy tables.

:mod:`dppca.cli._common`'s ``read_design_input`` calls it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.data_checks import check_finite_values
from ..core.lazy import pandas as pd
from ..core.reading import csv_options, read_table_file
from ._output import note
from ._safety import CLIError

__all__ = ["MISSING", "read_chunked"]

#: How the command line names the option that analyses tables with missing values.
MISSING = "pass --missing zero"


def read_chunked(
    args: argparse.Namespace, path: Path, columns: list[str] | None
) -> tuple[Any, tuple[str, ...]]:
    """The file's analysed columns as one float64 array, parsed in chunks, and their names.

    The rule of :func:`dppca.core.tables.tidy_table` applies chunk by chunk
    (:func:`dppca.core.reading.read_table_file`): booleans as 0/1, non-numeric
    columns left out with a note (refused if named by ``--columns``), missing
    values refused or, with ``--missing zero``, kept for the zero-term rule.
    """
    try:
        table = read_table_file(
            path, columns, missing=args.missing, option=MISSING, **csv_options(args)
        )
    except pd.errors.EmptyDataError:
        raise CLIError(f"data file {str(path)!r} is empty.") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CLIError(f"data file {str(path)!r} is not a readable data file: {first}") from None
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    X, names = table.data, table.variables
    if len(names) < 2 and table.left_out:
        raise CLIError(
            f"data file {str(path)!r} has non-numeric column(s) "
            f"{', '.join(map(repr, table.left_out))} and the analysis needs 2 numeric "
            "columns; choose numeric columns with --columns."
        )
    for message in table.notes:
        note(message)
    try:  # named here: the array carries no names, so the library could only say 'V2'
        check_finite_values(X, names, f"data file {str(path)!r}")
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return X, names
