"""``dppca report``: one self-contained HTML page from one budget."""

from __future__ import annotations

import argparse
from pathlib import Path

from ._common import (
    CLIError,
    add_data_arguments,
    add_privacy_arguments,
    add_scale_argument,
    add_table_argument,
    add_ties_argument,
    apply_scale,
    check_table_path,
    emit_table,
    info,
    numeric_part,
    parse_int_list,
    read_data,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="one HTML page: loading, scree and score plots, tables, ledger and methods",
        description="Release private directions once and reuse them for the loading, "
        "scree/PVE and score plots, all from one budget (--eps, --delta), and write one "
        "self-contained HTML page (inline images, no network) with the figures, their "
        "tables, the privacy ledger and a methods paragraph with references.",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser)
    parser.set_defaults(calibration="analytic")
    parser.add_argument("--out", required=True, metavar="FILE.html", help="the HTML page to write")
    parser.add_argument("-k", type=int, default=None, help="PCs in the scree (default all)")
    parser.add_argument(
        "--components", default="1,2", metavar="A,B",
        help="the two PCs of the loading and score plots (default 1,2)",
    )  # fmt: skip
    parser.add_argument(
        "--shares", default=None, metavar="D,S,P",
        help="split of the budget over directions, scree and score (default 0.4,0.3,0.3)",
    )  # fmt: skip
    parser.add_argument(
        "--groups", default=None, metavar="COLUMN",
        help="a column with group labels for the score plot (removed from the features)",
    )  # fmt: skip
    parser.add_argument(
        "--groups-public", action="store_true",
        help="declare the group labels (and so the group sizes) public",
    )  # fmt: skip
    parser.add_argument(
        "--score-range", type=float, default=1e6, metavar="R",
        help="public bound on the scores for the private frame (default 1e6)",
    )  # fmt: skip
    parser.add_argument("--title", default=None, help="title of the page")
    add_ties_argument(parser)
    parser.set_defaults(ties="zero")
    add_scale_argument(parser)
    add_table_argument(parser)
    parser.set_defaults(func=run)


def _shares(text: str | None) -> dict[str, float] | None:
    if text is None:
        return None
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise CLIError(f"--shares must be three comma-separated numbers; got {text!r}.") from None
    if len(values) != 3:
        raise CLIError(f"--shares must be three comma-separated numbers; got {text!r}.")
    return dict(zip(("directions", "scree", "score"), values, strict=True))


def _ledger(args: argparse.Namespace):
    """The persistent ledger named on the command line, if the option and module exist."""
    path = getattr(args, "ledger", None)
    if path in (None, "", "off", "none"):
        return None
    try:
        from ..ledger import Ledger
    except ImportError:  # pragma: no cover - before the ledger lands
        return None
    return Ledger(path)


def run(args: argparse.Namespace) -> int:
    if Path(args.out).suffix.lower() not in {".html", ".htm"}:
        raise CLIError(f"--out must end in .html; got {args.out!r}.")
    directory = Path(args.out).parent
    if str(directory) and not directory.is_dir():
        raise CLIError(f"output directory {str(directory)!r} does not exist.")
    if args.data is not None and Path(args.data).resolve() == Path(args.out).resolve():
        raise CLIError("--out would overwrite the data file.")
    check_table_path(args)
    components = parse_int_list(args.components, "--components", length=2)
    shares = _shares(args.shares)
    keep = (args.groups,) if args.groups else ()
    try:
        frame = read_data(args, keep=keep)
    except KeyError:
        raise CLIError(f"--groups names no column of the data; got {args.groups!r}.") from None
    if args.groups and args.groups not in frame.columns:
        raise CLIError(f"--groups names no column of the data; got {args.groups!r}.")
    if args.groups_public and not args.groups:
        raise CLIError("--groups-public needs --groups.")
    data = numeric_part(frame, drop=keep, chosen=bool(args.columns))
    variables = tuple(str(c) for c in data.columns)
    data = apply_scale(args, data, variables)
    if args.groups:
        data = data.assign(**{args.groups: frame[args.groups].to_numpy()})
    from ..reporting import report

    result = report(
        data, eps=args.eps, delta=args.delta, out=args.out, k=args.k,
        components=components, groups=args.groups, groups_public=args.groups_public,
        shares=shares, calibration=args.calibration, ties=args.ties,
        score_range=args.score_range, title=args.title, random_state=args.seed,
        ledger=_ledger(args),
    )  # fmt: skip
    emit_table(args, result.budget.to_frame(), index=False)
    info(f"privacy cost: {result.cost} (directions once, reused by loading, scree and score)")
    info(f"wrote {args.out}")
    return 0
