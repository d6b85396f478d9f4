"""``dppca score``: a private score plot (DP 2-D histograms in a private frame)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, cast

from ._common import (
    add_accuracy_arguments,
    add_data_arguments,
    add_design_arguments,
    add_privacy_arguments,
    add_scale_argument,
    add_ties_argument,
    build_options,
    parse_int_list,
    private_scale,
    read_bounds,
)
from ._groups import read_grouped_input, with_groups
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
    from matplotlib.figure import Figure

    from ..releases.score.result import ScoreResult


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
    add_design_arguments(parser, progress=False)
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

    from ..core.validation import check_random_state
    from ..releases.engine import execute

    matplotlib.use("Agg")
    components = parse_int_list(args.components, "--components", length=2)
    bins = _parse_bins(args.bins)
    methods = [m.strip() for m in args.method.split(",") if m.strip()]
    if args.out is not None:
        check_figure_path(args.out)  # before the release: a typo must not waste the budget
    check_table_path(args)
    check_release_path(args)
    frame, features, variables = read_grouped_input(args)
    if args.standardize:  # the score plot of one private PCA fit (as 'dppca pca')
        refused = {"--method": methods != ["add"], "--groups": args.groups}
        refused |= {"--directions": args.directions, "--scale": args.scale}
        picture = standardized_release(
            args, "score", features, variables, refused=refused, components=components, bins=bins
        )
        return 0 if picture is None else _emit(args, picture, None, features, variables)
    reused = load_directions(args, features, variables)
    data, group_labels = with_groups(args, frame, features)
    n_groups = _group_count(args, frame, group_labels)
    # One plan: what --dry-run prints is what the release checks, draws and charges.
    plan = _plan(args, len(data), variables, reused, n_groups, bins, components, methods)
    if args.dry_run:
        return print_plan(plan, design_named=args.design is not None)
    from ._ledger_budget import ledger_budget

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


def _group_count(
    args: argparse.Namespace, frame: Any, group_labels: list[str] | None
) -> int | None:
    """The number of groups (None without --groups); a dry-run needs the public labels."""
    if not args.groups:
        return None
    if args.dry_run and not group_labels:
        # the number of labels in the data is a data value: a dry-run reads none
        raise CLIError(
            "--dry-run with --groups needs the public label set, since a dry-run reads "
            "no data value (not even how many labels the column holds): pass "
            "--group-labels A,B,..."
        )
    return len(group_labels) if group_labels else int(frame[args.groups].nunique())


def _plan(
    args: argparse.Namespace,
    n: int,
    variables: tuple[str, ...],
    reused: Any,
    n_groups: int | None,
    bins: Any,
    components: Any,
    methods: list[str],
) -> Any:
    """The score release's plan, its option objects built once from the arguments."""
    from ..core.options import evolve
    from ..core.scalar_checks import check_positive_int
    from ..releases.scaled import check_scale_settings, with_private_scales
    from ..releases.score.plan import plan_score_options
    from ..releases.score.settings import ScoreGiven

    bounds = read_bounds(args, variables)
    scale = check_scale_settings(private_scale(args), bounds=bounds, directions=reused)
    privacy, options, design = build_options(
        "score",
        args,
        bounds=bounds,
        bins=bins,
        components=components,
        method=methods,
        groups_public=args.groups_public,
    )  # checked once here; each step of the private-scale stretch derives its own
    groups = None if n_groups is None else check_positive_int(n_groups, "groups")
    given = ScoreGiven(directions=reused is not None, groups=groups)
    p = len(variables)
    return with_private_scales(
        lambda e: plan_score_options(
            n, p, evolve(privacy, eps=e), options, given, variables, design
        ),
        privacy.eps,
        scale,
        variables,
    )


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
    from ..core.validation import check_bins_cap

    if text is None:
        return None
    values = parse_int_list(text, "--bins")
    if len(values) not in (1, 2):
        raise CLIError(f"--bins must be one or two integers; got {text!r}.")
    bins = values[0] if len(values) == 1 else cast(tuple[int, int], values)
    check_bins_cap(bins, "--bins")
    return bins


def _samples(args: argparse.Namespace, result: ScoreResult) -> dict[str, Any] | None:
    """Synthetic points per method for ``--sample``, or None.

    The samples get a stream of their own (derived from the same seed), so
    published synthetic points never expose the generator behind the noise.
    """
    from ..core.validation import post_processing_rng
    from ..releases.score.result import sample_points

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
