"""``dppca directions``: print private PC directions."""

from __future__ import annotations

import argparse
import dataclasses

from ..directions import dp_pc_dir
from ._common import (
    add_data_arguments,
    add_design_arguments,
    add_privacy_arguments,
    progress_for,
    read_design_input,
)
from ._ledger import add_budget_arguments, ledger_budget, report_spending


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "directions",
        help="private PC directions (g-DPPCA) as a table",
        description="Estimate private PC directions from the noisy spherical Kendall matrix "
        "and print them.",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser)
    parser.add_argument("-k", type=int, default=None, help="number of directions (default all)")
    parser.add_argument(
        "--ties", choices=("error", "zero"), default="error",
        help="rows closer than 1.5e-8: stop with an error, or let them contribute nothing",
    )  # fmt: skip
    add_design_arguments(parser)
    add_budget_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    data, variables = read_design_input(args)
    budget = ledger_budget(args, data, variables, kind="directions")
    result = dp_pc_dir(
        data, args.k, eps=args.eps, delta=args.delta, random_state=args.seed,
        calibration=args.calibration, ties=args.ties, design=args.design, m=args.m,
        progress=progress_for(args, len(data)), budget=budget,
    )  # fmt: skip
    report_spending(budget)
    result = dataclasses.replace(result, variables=variables)  # labels: post-processing
    print(result.to_frame().round(4).to_string())
    print(f"privacy cost: {result.cost} ({result.cost.mechanism}, sigma={result.sigma:.4g})")
    return 0
