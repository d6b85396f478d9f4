"""The input of the commands that draw groups (``score``, ``report``): the table
with its ``--groups`` column, and the group labels given with ``--group-labels``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..core.lazy import is_dataframe
from ._common import apply_scale, numeric_part, read_data, read_design_input
from ._safety import CLIError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_grouped_input", "with_groups"]


def read_grouped_input(args: argparse.Namespace) -> tuple[pd.DataFrame, Any, tuple[str, ...]]:
    """The table as read, its numeric columns (scaled if asked) and their names.

    Without ``--groups``, ``--design balanced`` reads a file in chunks, as
    :func:`~dppca.cli._common.read_design_input` does (the table is then its
    numeric columns).
    """
    keep = (args.groups,) if args.groups else ()
    if not args.groups and getattr(args, "design", None) == "balanced":
        _check_group_flags(args)
        data, variables = read_design_input(args)
        data = apply_scale(args, data, variables)
        if not is_dataframe(data):  # chunked: a float64 array
            import pandas

            data = pandas.DataFrame(data, columns=list(variables), copy=False)
        return data, data, variables
    try:
        frame = read_data(args, keep=keep)
    except KeyError:  # --columns given and the --groups column is missing
        raise CLIError(f"--groups names no column of the data; got {args.groups!r}.") from None
    if args.groups and args.groups not in frame.columns:
        raise CLIError(f"--groups names no column of the data; got {args.groups!r}.")
    _check_group_flags(args)
    data = numeric_part(frame, drop=keep, chosen=bool(args.columns), missing=args.missing)
    variables = tuple(str(c) for c in data.columns)
    return frame, apply_scale(args, data, variables), variables


def _check_group_flags(args: argparse.Namespace) -> None:
    for flag, given in (
        ("--groups-public", args.groups_public),
        ("--group-labels", args.group_labels),
    ):
        if given and not args.groups:
            raise CLIError(f"{flag} needs --groups.")


def with_groups(
    args: argparse.Namespace, frame: pd.DataFrame, features: Any
) -> tuple[Any, list[str] | None]:
    """The features with the --groups column appended, and the --group-labels."""
    if not args.groups:
        return features, None
    group_labels = None
    labels = frame[args.groups]
    if args.group_labels is not None:  # compare as text, as the labels are typed
        group_labels = [g.strip() for g in args.group_labels.split(",")]
        labels = labels.astype(str).where(labels.notna(), None)
    return features.assign(**{args.groups: labels.to_numpy()}), group_labels
