"""``dppca loading``: draw a DP loading plot and print its coordinates."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..core.lazy import pandas as pd
from ._common import (
    add_accuracy_arguments,
    add_data_arguments,
    add_design_arguments,
    add_privacy_arguments,
    add_scale_argument,
    add_ties_argument,
    apply_scale,
    build_options,
    parse_int_list,
    private_scale,
    progress_for,
    read_bounds,
    read_design_input,
)
from ._ledger import add_budget_arguments, report_spending
from ._output import (
    add_release_arguments,
    add_table_argument,
    check_figure_path,
    check_release_path,
    check_table_path,
    emit_table,
    forecast_line,
    info,
    load_directions,
    meaning_line,
    print_plan,
    save_figure,
    save_release_file,
)
from ._safety import CLIError
from .directions import add_estimator_argument, check_estimator_scale
from .pca import add_standardize_argument, standardized_release

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..releases.directions.result import DirectionsResult
    from ..releases.loading.result import LoadingResult


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "loading",
        help="DP loading plot (vector, point or heatmap) and its coordinate table",
        description="Release private PC directions (noisy spherical Kendall matrix), print the "
        "loading coordinates of two PCs with the privacy cost, and optionally draw them.",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser, required=False)
    parser.add_argument(
        "--components",
        default=None,
        metavar="A,B",
        help="PCs to show, numbered from 1: a pair for vector and point plots (default 1,2), "
        "any list for a heatmap (default PC1-PC4)",
    )
    parser.add_argument(
        "--kind", choices=("vector", "point", "heatmap"), default="vector", help="plot type"
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also show ordinary (NON-PRIVATE) PCA loadings beside the DP ones; for your own "
        "check only, never for publication",
    )
    parser.add_argument(
        "--top", type=int, default=None, metavar="N", help="show only the N longest DP loadings"
    )
    parser.add_argument(
        "--uncertainty",
        type=int,
        default=None,
        metavar="B",
        help="vector/point plots: spread of the loadings under B re-perturbations of the "
        "released matrix with noise of the mechanism's size (no extra privacy cost; not "
        "sampling variability)",
    )
    add_scale_argument(parser)
    add_standardize_argument(parser, default=False)
    add_estimator_argument(parser)
    add_ties_argument(parser)
    add_design_arguments(parser)
    add_budget_arguments(parser)
    parser.add_argument("--title", default=None, help="title of the DP panel")
    parser.add_argument("--label-size", type=float, default=8.0, help="font size of labels")
    parser.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="write the figure here; the format follows the extension (.png, .svg, .pdf). "
        "Without --out only the table is printed",
    )
    add_table_argument(parser)
    add_release_arguments(parser, reuse=True)
    add_accuracy_arguments(parser)
    parser.set_defaults(func=run)


def _check_out(path: str | None) -> None:
    if path is None:
        return
    check_figure_path(path)
    directory = Path(path).parent
    if str(directory) and not directory.is_dir():
        raise CLIError(f"output directory {str(directory)!r} does not exist.")


def run(args: argparse.Namespace) -> int:
    from ..core.validation import check_random_state
    from ..releases.engine import execute
    from ..releases.loading.plan import plan_loading_options
    from ..releases.loading.release import dp_loading

    pcs = _check_options(args)
    heatmap = args.kind == "heatmap"
    data, variables, reused = _read_input(args)
    rng = check_random_state(args.seed)
    pair = cast(tuple[int, int], tuple(pcs)) if (pcs is not None and not heatmap) else (1, 2)
    if reused is not None:  # post-processing of a saved release: no new cost
        result = dp_loading(
            data if args.compare else None,
            eps=args.eps,
            delta=args.delta,
            directions=reused,
            components=pair,
            compare=args.compare,
            missing=args.missing,
        )
    elif args.standardize:  # the loadings of one private PCA fit (as 'dppca pca')
        refused = {"--scale": args.scale, "--estimator": args.estimator != "kendall"}
        result = standardized_release(
            args, "loading", data, variables, refused=refused, components=pair
        )
        if result is None:
            return 0
    else:
        assert data is not None  # a fresh release always reads the data
        # One plan: what --dry-run prints is what the release checks, draws and charges.
        n, p = len(data), len(variables)
        privacy, directions, options = build_options(
            "loading",
            args,
            bounds=read_bounds(args, variables),
            scale=private_scale(args),
            components=pair,
            compare=args.compare,
            progress=None if args.dry_run else progress_for(args, n, p),
            estimator=args.estimator,
        )
        plan = plan_loading_options(n, p, privacy, directions, options, variables)
        if args.dry_run:
            return print_plan(plan, design_named=args.design is not None)
        from ._ledger_budget import ledger_budget

        budget = ledger_budget(args, data, variables, kind="loading")
        result = execute(plan, data, budget=budget, random_state=rng)
        report_spending(budget)
        forecast_line(args, result.directions)

    emit_table(args, _table(result, pcs, heatmap=heatmap, compare=args.compare))
    _report_cost(args, result, reused=reused is not None)
    save_release_file(args, result, data, variables)
    if args.out is not None:
        _draw(args, result, pcs)
    return 0


def _check_options(args: argparse.Namespace) -> tuple[int, ...] | None:
    """Everything that can be checked without the data, before the release; the PCs."""
    _check_out(args.out)
    heatmap = args.kind == "heatmap"
    pcs = None
    if args.components is not None:
        pcs = parse_int_list(args.components, "--components", length=None if heatmap else 2)
    if args.uncertainty is not None and heatmap:
        raise CLIError("--uncertainty applies to vector and point plots, not heatmaps.")
    if args.uncertainty is not None and args.uncertainty < 1:
        raise CLIError(f"--uncertainty must be a positive integer; got {args.uncertainty}.")
    if args.top is not None and args.top < 1:
        raise CLIError(f"--top must be a positive integer; got {args.top}.")

    if args.standardize and args.directions is not None:
        raise CLIError(
            "--standardize releases the directions of one private PCA fit; drop --directions "
            "or leave out --standardize."
        )
    if args.directions is None and (args.eps is None or args.delta is None):
        raise CLIError("--eps and --delta are required (or reuse a release with --directions).")
    if args.directions is None:
        check_estimator_scale(args)
    check_table_path(args)
    check_release_path(args)
    return pcs


def _read_input(
    args: argparse.Namespace,
) -> tuple[pd.DataFrame | None, tuple[str, ...], DirectionsResult | None]:
    """The data (None when drawing a saved release alone), their variables, reused directions."""
    if args.directions is not None and args.data is None and args.dataset is None:
        # Drawing a saved release needs no data at all (unless a comparison is asked for).
        if args.compare or args.scale is not None:
            raise CLIError("--compare and --scale need the data (DATA.csv or --dataset).")
        reused = load_directions(args, None, ())
        return None, reused.variables, reused
    data, variables = read_design_input(args)
    if args.directions is not None and private_scale(args):
        raise CLIError(
            "--scale private releases new scales with new directions; drop --directions, "
            "or pass the saved release's scales as public numbers (--scale S1,S2,...)."
        )
    data = apply_scale(args, data, variables)
    if not isinstance(data, pd.DataFrame):  # chunked reader: float64 array and labels
        data = pd.DataFrame(data, columns=list(variables), copy=False)
    return data, variables, load_directions(args, data, variables)


def _table(
    result: LoadingResult, pcs: tuple[int, ...] | None, *, heatmap: bool, compare: bool
) -> pd.DataFrame:
    """The printed table: heatmap values, or the coordinates of the two PCs."""
    if heatmap:
        table = result.heatmap_table(components=list(pcs) if pcs else None)
        if compare:
            other = result.heatmap_table(
                components=list(pcs) if pcs else None, source="nonprivate"
            )
            table = pd.concat([table, other], axis=1)
    else:
        table = result.coordinates()
    return table.rename_axis("variable")


def _report_cost(args: argparse.Namespace, result: LoadingResult, *, reused: bool) -> None:
    cost = result.cost
    assert cost is not None  # the directions behind a loading plot are always private
    if reused:
        info(
            f"privacy cost: none; post-processing of the directions in {args.directions} "
            f"(released at {cost}, {cost.mechanism}, sigma={result.directions.sigma:.4g})"
        )
    else:
        info(
            f"privacy cost: {cost} ({cost.mechanism}, sigma={result.directions.sigma:.4g}); "
            "the table and figure are post-processing of that one release"
        )
        meaning_line(cost)
    if args.compare:
        info(
            "warning: the nonprivate_* columns and the non-private panel are computed without "
            "noise and are NOT private; do not publish them"
        )


def _draw(args: argparse.Namespace, result: LoadingResult, pcs: tuple[int, ...] | None) -> None:
    """Draw the figure to ``args.out`` (post-processing, on its own random stream)."""
    import matplotlib

    from ..core.validation import post_processing_rng

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..plotting import plot_loading

    drawn = plot_loading(
        result,
        kind=args.kind,
        components=pcs,
        top=args.top,
        title=args.title,
        label_size=args.label_size,
        uncertainty=args.uncertainty,
        random_state=post_processing_rng(args.seed),  # never the noise's stream
    )
    fig = cast("Figure", drawn if hasattr(drawn, "savefig") else drawn.figure)
    try:
        save_figure(fig, args.out)
    finally:
        plt.close(fig)
    info(f"wrote {args.out}")
    if args.uncertainty is not None:
        info(
            f"uncertainty: {args.uncertainty} re-perturbations of the released matrix "
            "(noise sensitivity, no extra privacy cost; not sampling variability)"
        )
