"""``dppca directions``: private PC directions as a CSV table."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING

from ._common import (
    add_accuracy_arguments,
    add_data_arguments,
    add_design_arguments,
    add_privacy_arguments,
    add_scale_argument,
    apply_scale,
    build_options,
    private_scale,
    progress_for,
    read_bounds,
    read_design_input,
)
from ._layout import quick_layout
from ._ledger import add_budget_arguments, report_spending
from ._output import (
    add_release_arguments,
    add_table_argument,
    check_release_path,
    check_table_path,
    emit_table,
    forecast_line,
    info,
    meaning_line,
    print_plan,
    save_release_file,
)
from ._safety import CLIError

if TYPE_CHECKING:
    from ..releases.directions.result import DirectionsResult


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "directions",
        help="private PC directions (g-DPPCA) as a table",
        description="Estimate private PC directions from the noisy spherical Kendall matrix "
        "(or Kendall's tau matrix with --estimator tau) and print them as CSV on stdout "
        "(messages go to stderr). Save the release with --save-release to reuse it in "
        "loading, scree and score (--directions) at no new cost.",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser)
    parser.add_argument("-k", type=int, default=None, help="number of directions (default all)")
    parser.add_argument(
        "--ties",
        choices=("zero", "error"),
        default="zero",
        help="duplicate rows (a difference that cannot be normalised): let them contribute "
        "nothing (default) or stop with an error (which reveals that duplicates exist)",
    )
    add_scale_argument(parser)
    add_estimator_argument(parser)
    add_design_arguments(parser)
    add_table_argument(parser)
    add_release_arguments(parser, reuse=False)
    add_accuracy_arguments(parser)
    add_budget_arguments(parser)
    parser.set_defaults(func=run)


def add_estimator_argument(parser: argparse.ArgumentParser) -> None:
    """``--estimator {kendall,tau}``: the matrix released with noise."""
    parser.add_argument(
        "--estimator",
        choices=("kendall", "tau"),
        default="kendall",
        help="the matrix released with noise: the spherical Kendall matrix (default), or "
        "Kendall's tau matrix over p, which does not depend on the columns' units (for raw, "
        "unrelated units without public scales; no --scale)",
    )


def check_estimator_scale(args: argparse.Namespace) -> None:
    """Refuse ``--scale`` with ``--estimator tau`` (before any data are read)."""
    if getattr(args, "estimator", "kendall") == "tau" and args.scale is not None:
        raise CLIError(
            "--scale cannot be used with --estimator tau: Kendall's tau matrix does not "
            "change when a column is divided by a positive scale; drop --scale."
        )


def run(args: argparse.Namespace) -> int:
    from ..releases.directions.plan import plan_directions
    from ..releases.engine import execute

    check_estimator_scale(args)
    check_table_path(args)
    check_release_path(args)
    # A dry run needs only n and the column names: a plain CSV file gives them
    # without pandas (the same plan; anything unusual is read in full).
    layout = quick_layout(args) if args.dry_run else None
    if layout is None:
        data, variables = read_design_input(args)
        data = apply_scale(args, data, variables)
        n = len(data)
    else:
        n, variables = layout
    # One plan: what --dry-run prints is what the release checks, draws and charges.
    privacy, options = build_options(
        "directions",
        args,
        bounds=read_bounds(args, variables),
        scale=private_scale(args),
        k=args.k,
        progress=None if args.dry_run else progress_for(args, n, len(variables)),
        estimator=args.estimator,
    )
    plan = plan_directions(n, len(variables), privacy, options, variables)
    if args.dry_run:
        return print_plan(plan, design_named=args.design is not None)
    from ._ledger_budget import ledger_budget

    budget = ledger_budget(args, data, variables, kind="directions")
    result: DirectionsResult = execute(plan, data, budget=budget, random_state=args.seed)
    report_spending(budget)
    forecast_line(args, result)
    result = dataclasses.replace(result, variables=variables)  # labels: post-processing
    emit_table(args, result.to_frame().rename_axis("variable"))
    assert result.cost is not None  # dp_pc_dir always releases privately
    info(f"privacy cost: {result.cost} ({result.cost.mechanism}, sigma={result.sigma:.4g})")
    meaning_line(result.cost)
    if result.scales is not None:
        shown = ", ".join(f"{v}={s:.4g}" for v, s in zip(variables, result.scales, strict=True))
        info(f"private scales: {shown}")
        if result.scale_note:
            info(result.scale_note)
    save_release_file(args, result, data, variables)
    return 0
