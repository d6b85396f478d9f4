"""``dppca scree``: private scree / PVE table and, optionally, its plot."""

from __future__ import annotations

import argparse

from ..scree import METHODS, ClippedControl, dp_scree
from ._common import (
    CLIError,
    add_data_arguments,
    add_output_argument,
    add_privacy_arguments,
    add_ties_argument,
    check_figure_path,
    numeric_part,
    read_data,
    save_figure,
)
from ._ledger import add_budget_arguments, ledger_budget, report_spending


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "scree",
        help="private scree / PVE values along private PC directions",
        description="Estimate the variance along private PC directions from paired "
        "differences of the rows, print the table and optionally draw the plot. The "
        "budget covers the directions, the total variance and every method.",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser)
    parser.add_argument("-k", type=int, default=None, help="number of components (default all)")
    parser.add_argument(
        "--method",
        default="clipped",
        metavar="M[,M...]",
        help=f"estimator(s), comma-separated, from {', '.join(METHODS)} (default clipped); "
        "several methods share the budget",
    )
    parser.add_argument(
        "--clip", type=float, default=None,
        help="public clipping level for the clipped method (default: private, from the data)",
    )  # fmt: skip
    parser.add_argument(
        "--kind", choices=("pve", "pve_total", "scree"), default="pve",
        help="what the plot shows (default pve)",
    )  # fmt: skip
    parser.add_argument(
        "--no-mono", dest="mono", action="store_false",
        help="keep the raw estimates instead of their non-increasing fit",
    )  # fmt: skip
    add_ties_argument(parser)
    add_budget_arguments(parser)
    add_output_argument(parser, required=False, help="write the plot to FILE (.png, .svg or .pdf)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    methods = [m.strip() for m in args.method.split(",") if m.strip()]
    if not methods:
        raise CLIError("--method must name at least one of clipped, pmwm, huber.")
    control = None
    if args.clip is not None:
        if "clipped" not in methods:
            raise CLIError("--clip applies to the clipped method; add it to --method.")
        control = {"clipped": ClippedControl(clip=args.clip)}
    data = numeric_part(read_data(args))
    if args.out is not None:  # fail on a bad extension before spending the budget
        check_figure_path(args.out)
    budget = ledger_budget(args, data, kind="scree")
    result = dp_scree(
        data, args.k, eps=args.eps, delta=args.delta, method=methods, control=control,
        mono=args.mono, random_state=args.seed, calibration=args.calibration, ties=args.ties,
        budget=budget,
    )  # fmt: skip
    report_spending(budget)
    print(result.to_frame().round(4).to_string())
    print(f"total variance (private): {result.trace:.4g}")
    print(f"privacy cost: {result.cost}")
    print(result.cost.to_frame().to_string(index=False))
    if args.out is not None:
        import matplotlib.pyplot as plt

        ax = result.plot(kind=args.kind)
        try:
            save_figure(ax.figure, args.out)
        finally:
            plt.close(ax.figure)
        print(f"plot written to {args.out}")
    return 0
