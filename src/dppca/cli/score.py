"""``dppca score``: a private score plot (DP 2-D histograms in a private frame)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, cast

from ..core.validation import check_bins_cap, check_random_state, post_processing_rng
from ..releases.engine import execute
from ..releases.scaled import check_scale_settings, with_private_scales
from ..releases.score import plan_score, sample_points
from ._common import (
    CLIError,
    add_accuracy_arguments,
    add_data_arguments,
    add_output_argument,
    add_privacy_arguments,
    add_release_arguments,
    add_scale_argument,
    add_table_argument,
    add_ties_argument,
    apply_scale,
    check_figure_path,
    check_release_path,
    check_table_path,
    emit_table,
    forecast_line,
    info,
    load_directions,
    numeric_part,
    parse_int_list,
    print_plan,
    private_scale,
    read_bounds,
    read_data,
    report_cost,
    save_figure,
    save_release_file,
)
from ._ledger import add_budget_arguments, ledger_budget, report_spending
from .pca import add_standardize_argument, standardized_release

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..releases.score import ScoreResult


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help="private score plot: DP histograms of two PCs in a private frame",
        description="Release a differentially private score plot: private PC directions, a "
        "frame from pure-DP quantiles and noisy two-dimensional histograms, per group if "
        "asked. The whole call costs (--eps, --delta).",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser)
    parser.add_argument(
        "--components",
        default="1,2",
        metavar="A,B",
        help="the two PCs to show, numbered from 1 (default 1,2)",
    )
    parser.add_argument(
        "--bins",
        default=None,
        metavar="MX,MY",
        help="bins along x and y, or one number for both (default: round(n ** 0.25))",
    )
    parser.add_argument(
        "--method",
        default="add",
        metavar="M[,M]",
        help="histogram methods: add, sparse or add,sparse (they share the budget)",
    )
    parser.add_argument(
        "--groups",
        default=None,
        metavar="COLUMN",
        help="a column with group labels (removed from the features); the label set is "
        "treated as public",
    )
    parser.add_argument(
        "--group-labels",
        default=None,
        metavar="A,B,...",
        help="the public list of group labels: only these are released, whatever the "
        "data hold (rows with other labels count for the frame only)",
    )
    parser.add_argument(
        "--groups-public",
        action="store_true",
        help="declare the group labels (and so the group sizes) public; otherwise group "
        "sizes are released with noise",
    )
    parser.add_argument(
        "--sample",
        choices=("center", "uniform"),
        default=None,
        help="also draw synthetic points from each released histogram",
    )
    add_ties_argument(parser)
    add_scale_argument(parser)
    add_standardize_argument(parser, default=False)
    add_table_argument(parser)
    add_output_argument(
        parser,
        required=False,
        help="figure file (.png, .svg or .pdf); without it only the bin table is printed",
    )
    add_release_arguments(parser, reuse=True)
    add_accuracy_arguments(parser)
    add_budget_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    components = parse_int_list(args.components, "--components", length=2)
    bins = _parse_bins(args.bins)
    methods = [m.strip() for m in args.method.split(",") if m.strip()]
    if args.out is not None:
        check_figure_path(args.out)  # before the release: a typo must not waste the budget
    check_table_path(args)
    check_release_path(args)
    frame, features, variables = _read_input(args)
    if args.standardize:  # the score plot of one private PCA fit (as 'dppca pca')
        refused = {"--method": methods != ["add"], "--groups": args.groups}
        refused |= {"--directions": args.directions, "--scale": args.scale}
        picture = standardized_release(
            args, "score", features, variables, refused=refused, components=components, bins=bins
        )
        return 0 if picture is None else _emit(args, picture, None, features, variables)
    reused = load_directions(args, features, variables)
    data, group_labels = _with_groups(args, frame, features)
    bounds = read_bounds(args, variables)
    n_groups = None
    if args.groups:
        n_groups = len(group_labels) if group_labels else frame[args.groups].nunique()
    # One plan: what --dry-run prints is what the release checks, draws and charges.
    scale = check_scale_settings(private_scale(args), bounds=bounds, directions=reused)
    plan = with_private_scales(
        lambda e: plan_score(
            len(data),
            len(variables),
            eps=e,
            delta=args.delta,
            bins=bins,
            components=components,
            method=methods,
            directions_given=reused is not None,
            groups=n_groups,
            groups_public=args.groups_public,
            calibration=args.calibration,
            ties=args.ties,
            bounds=bounds,
            variables=variables,
            accuracy=args.accuracy,
        ),
        args.eps,
        scale,
        variables,
    )
    if args.dry_run:
        return print_plan(plan)
    budget = ledger_budget(args, features, variables, kind="score")
    result: ScoreResult = execute(
        plan,
        data,
        budget=budget,
        random_state=check_random_state(args.seed),
        directions=reused,
        groups=args.groups,
        group_labels=group_labels,
    )
    report_spending(budget)
    forecast_line(args, result)
    return _emit(args, result, reused, features, variables)


def _emit(
    args: argparse.Namespace,
    result: ScoreResult,
    reused: Any,
    features: Any,
    variables: tuple[str, ...],
) -> int:
    """The released table, figure, frame, cost and release file of a score release."""
    samples = _samples(args, result)
    emit_table(args, result.to_frame(), index=False)
    if args.out is not None:
        import matplotlib.pyplot as plt

        fig = cast("Figure", result.plot("panels", samples=samples).figure)
        try:
            save_figure(fig, args.out)
        finally:
            plt.close(fig)
    _describe(result)
    report_cost(args, result, reused)
    save_release_file(args, result, features, variables)
    if args.out is not None:
        info(f"wrote {args.out}")
    return 0


def _parse_bins(text: str | None) -> int | tuple[int, int] | None:
    """``--bins``: None, one number for both axes, or two."""
    if text is None:
        return None
    values = parse_int_list(text, "--bins")
    if len(values) not in (1, 2):
        raise CLIError(f"--bins must be one or two integers; got {text!r}.")
    bins = values[0] if len(values) == 1 else cast(tuple[int, int], values)
    check_bins_cap(bins, "--bins")
    return bins


def _read_input(args: argparse.Namespace) -> tuple[pd.DataFrame, Any, tuple[str, ...]]:
    """The table as read, its numeric columns (scaled if asked) and their names."""
    keep = (args.groups,) if args.groups else ()
    try:
        frame = read_data(args, keep=keep)
    except KeyError:  # --columns given and the --groups column is missing
        raise CLIError(f"--groups names no column of the data; got {args.groups!r}.") from None
    if args.groups and args.groups not in frame.columns:
        raise CLIError(f"--groups names no column of the data; got {args.groups!r}.")
    for flag, given in (
        ("--groups-public", args.groups_public),
        ("--group-labels", args.group_labels),
    ):
        if given and not args.groups:
            raise CLIError(f"{flag} needs --groups.")
    data = numeric_part(frame, drop=keep, chosen=bool(args.columns), dropna=args.dropna)
    frame = frame.loc[data.index]  # the rows kept by --dropna, for the group labels
    variables = tuple(str(c) for c in data.columns)
    return frame, apply_scale(args, data, variables), variables


def _with_groups(
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


def _samples(args: argparse.Namespace, result: ScoreResult) -> dict[str, Any] | None:
    """Synthetic points per method for ``--sample``, or None.

    The samples get a stream of their own (derived from the same seed), so
    published synthetic points never expose the generator behind the noise.
    """
    if not args.sample:
        return None
    post = post_processing_rng(args.seed)
    return {
        m: sample_points(result, method=m, kind=args.sample, random_state=post)
        for m in result.methods
    }


def _describe(result: ScoreResult) -> None:
    """Print the released frame, grid and group sizes."""
    info(
        f"frame: {result.pc_labels[0]} in [{result.xlim[0]:.4g}, {result.xlim[1]:.4g}], "
        f"{result.pc_labels[1]} in [{result.ylim[0]:.4g}, {result.ylim[1]:.4g}]"
    )
    info(f"grid: {result.bins[0]} x {result.bins[1]} bins; methods: {', '.join(result.methods)}")
    if result.groups is not None:
        assert result.group_sizes is not None  # released with the groups
        kind = "exact (declared public)" if result.groups_public else "private (Laplace)"
        sizes = ", ".join(
            f"{g}={s:.0f}" for g, s in zip(result.groups, result.group_sizes, strict=True)
        )
        info(f"group sizes, {kind}: {sizes}")
