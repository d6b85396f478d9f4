"""``dppca scree``: private scree / PVE table and, optionally, its plot."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, cast

from ..core.lazy import is_dataframe
from ._common import (
    add_accuracy_arguments,
    add_data_arguments,
    add_design_arguments,
    add_privacy_arguments,
    add_scale_argument,
    add_ties_argument,
    apply_scale,
    build_options,
    private_scale,
    read_bounds,
    read_design_input,
)
from ._ledger import add_budget_arguments, report_spending
from ._output import (
    add_output_argument,
    add_release_arguments,
    add_table_argument,
    check_figure_path,
    check_release_path,
    check_table_path,
    emit_table,
    forecast_line,
    info,
    load_directions,
    print_plan,
    report_cost,
    save_figure,
    save_release_file,
)
from ._safety import CLIError
from .pca import add_standardize_argument, standardized_release

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure
    from numpy.typing import NDArray

    from ..releases.scree.result import ScreeResult

# The estimators of dppca.releases.scree.METHODS, named here so that building the
# parser does not import the releases (tests/test_startup.py checks they agree).
_METHODS = ("clipped", "pmwm", "huber")


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
        help=f"estimator(s), comma-separated, from {', '.join(_METHODS)} (default clipped); "
        "several methods share the budget",
    )
    parser.add_argument(
        "--clip",
        type=float,
        default=None,
        help="public clip level for the squared norms of pair differences, in squared "
        "data units (default: chosen privately by a scan)",
    )
    parser.add_argument(
        "--kind",
        choices=("pve_total", "pve", "scree"),
        default="pve_total",
        help="what the plot shows: shares of the total variance (default), of the k "
        "components, or the variances",
    )
    parser.add_argument(
        "--no-mono",
        dest="mono",
        action="store_false",
        help="keep the raw estimates instead of their non-increasing fit",
    )
    add_ties_argument(parser)
    add_design_arguments(parser, progress=False)
    add_scale_argument(parser)
    add_standardize_argument(parser, default=False)
    add_budget_arguments(parser)
    add_output_argument(parser, required=False, help="write the plot to FILE (.png, .svg or .pdf)")
    add_table_argument(parser)
    add_release_arguments(parser, reuse=True)
    add_accuracy_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..core.options import evolve
    from ..releases.engine import execute
    from ..releases.scaled import check_scale_settings, with_private_scales
    from ..releases.scree.controls import ClippedControl
    from ..releases.scree.plan import plan_scree_options

    methods = [m.strip() for m in args.method.split(",") if m.strip()]
    if not methods:
        raise CLIError("--method must name at least one of clipped, pmwm, huber.")
    control = None
    if args.clip is not None:
        if "clipped" not in methods:
            raise CLIError("--clip applies to the clipped method; add it to --method.")
        control = {"clipped": ClippedControl(clip=args.clip)}
    if args.out is not None:  # fail on a bad extension before spending the budget
        check_figure_path(args.out)
    check_table_path(args)
    check_release_path(args)
    data, variables = read_design_input(args)  # in chunks with --design balanced
    if not is_dataframe(data):  # the chunked reader's float64 array
        import pandas

        data = pandas.DataFrame(data, columns=list(variables), copy=False)
    if args.standardize:  # the scree of one private PCA fit (as 'dppca pca')
        refused = {"--method": args.method != "clipped", "--clip": args.clip}
        refused |= {"--no-mono": not args.mono, "--directions": args.directions}
        refused |= {"--scale": args.scale}
        picture = standardized_release(args, "scree", data, variables, refused=refused, k=args.k)
        return 0 if picture is None else _emit(args, picture, None, data, variables)
    data = apply_scale(args, data, variables)
    reused = load_directions(args, data, variables)
    k = reused.k if (reused is not None and args.k is None) else args.k
    bounds = read_bounds(args, variables)
    # One plan: what --dry-run prints is what the release checks, draws and charges.
    scale = check_scale_settings(private_scale(args), bounds=bounds, directions=reused)
    privacy, options, design = build_options(
        "scree",
        args,
        bounds=bounds,
        k=k,
        method=methods,
        control=control,
        mono=args.mono,
    )  # checked once here; each step of the private-scale stretch derives its own
    n, p, given = len(data), len(variables), reused is not None
    plan = with_private_scales(
        lambda e: plan_scree_options(
            n, p, evolve(privacy, eps=e), options, given, variables, design
        ),
        privacy.eps,
        scale,
        variables,
    )
    if args.dry_run:
        return print_plan(plan, design_named=args.design is not None)
    from ._ledger_budget import ledger_budget

    budget = ledger_budget(args, data, variables, kind="scree")
    result: ScreeResult = execute(
        plan, data, budget=budget, random_state=args.seed, directions=reused
    )
    report_spending(budget)
    forecast_line(args, result)
    return _emit(args, result, reused, data, variables)


def _emit(
    args: argparse.Namespace,
    result: ScreeResult,
    reused: Any,
    data: Any,
    variables: tuple[str, ...],
) -> int:
    """The released table, cost, release file and plot of a scree release."""
    emit_table(args, scree_table(result))
    info(f"total variance (private): {result.trace:.4g}")
    report_cost(args, result, reused)
    save_release_file(args, result, data, variables)
    if args.out is not None:
        import matplotlib.pyplot as plt

        ax = result.plot(kind=args.kind)
        fig = cast("Figure", ax.figure)
        try:
            save_figure(fig, args.out)
        finally:
            plt.close(fig)
        info(f"plot written to {args.out}")
    return 0


def scree_table(result: ScreeResult) -> pd.DataFrame:
    """The released table plus, per method, the public half-width and what the fit did.

    ``halfwidth_<m>`` is :attr:`ScreeResult.interval_halfwidth` (2 noise sd,
    from the plan and the clip level); ``fit_<m>`` says ``tied PCa-PCb`` for a
    value the monotone fit pooled with its neighbours and ``below noise`` for
    one it set to 0, and is empty where the value is the method's own.
    """
    table = result.to_frame().rename_axis("component")
    halfwidth = result.interval_halfwidth
    groups, zeros = result.tie_groups, result.clipped_to_zero
    for i, method in enumerate(result.methods):
        if halfwidth is not None:
            table[f"halfwidth_{method}"] = halfwidth[i]
        table[f"fit_{method}"] = _fit_notes(result.pc_labels, groups[i], zeros[i])
    return table


def _fit_notes(
    labels: tuple[str, ...], groups: NDArray[np.int64], zeros: NDArray[np.bool_]
) -> list[str]:
    """One note per PC: the run it is tied in, ``below noise``, or empty."""
    notes = []
    for j in range(len(labels)):
        if zeros[j]:
            notes.append("below noise")
        elif groups[j]:
            run = [labels[i] for i in range(len(labels)) if groups[i] == groups[j]]
            notes.append(f"tied {run[0]}-{run[-1]}")
        else:
            notes.append("")
    return notes
