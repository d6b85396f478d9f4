"""``dppca score``: a private score plot (DP 2-D histograms in a private frame)."""

from __future__ import annotations

import argparse

from .._validation import check_bins_cap, check_random_state
from ..score import dp_score, sample_points
from ._common import (
    CLIError,
    add_data_arguments,
    add_output_argument,
    add_privacy_arguments,
    add_ties_argument,
    check_figure_path,
    numeric_part,
    parse_int_list,
    read_data,
    save_figure,
    write_atomically,
)
from ._ledger import add_budget_arguments, ledger_budget, report_spending


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
        "--components", default="1,2", metavar="A,B",
        help="the two PCs to show, numbered from 1 (default 1,2)",
    )  # fmt: skip
    parser.add_argument(
        "--bins", default=None, metavar="MX,MY",
        help="bins along x and y, or one number for both (default: round(n ** 0.25))",
    )  # fmt: skip
    parser.add_argument(
        "--method", default="add", metavar="M[,M]",
        help="histogram methods: add, sparse or add,sparse (they share the budget)",
    )  # fmt: skip
    parser.add_argument(
        "--groups", default=None, metavar="COLUMN",
        help="a column with group labels (removed from the features); the label set is "
        "treated as public",
    )  # fmt: skip
    parser.add_argument(
        "--group-labels", default=None, metavar="A,B,...",
        help="the public list of group labels: only these are released, whatever the "
        "data hold (rows with other labels count for the frame only)",
    )  # fmt: skip
    parser.add_argument(
        "--groups-public", action="store_true",
        help="declare the group labels (and so the group sizes) public; otherwise group "
        "sizes are released with noise",
    )  # fmt: skip
    parser.add_argument(
        "--sample", choices=("center", "uniform"), default=None,
        help="also draw synthetic points from each released histogram",
    )  # fmt: skip
    add_ties_argument(parser)
    add_budget_arguments(parser)
    parser.add_argument(
        "--table", default=None, metavar="FILE.csv", help="also write the bin tables as CSV"
    )
    add_output_argument(parser, required=True, help="figure file (.png, .svg or .pdf)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    components = parse_int_list(args.components, "--components", length=2)
    bins = None
    if args.bins is not None:
        values = parse_int_list(args.bins, "--bins")
        if len(values) not in (1, 2):
            raise CLIError(f"--bins must be one or two integers; got {args.bins!r}.")
        bins = values[0] if len(values) == 1 else values
        check_bins_cap(bins, "--bins")
    methods = [m.strip() for m in args.method.split(",") if m.strip()]
    check_figure_path(args.out)  # before the release: a typo must not waste the budget
    keep = (args.groups,) if args.groups else ()
    try:
        frame = read_data(args, keep=keep)
    except KeyError:  # --columns given and the --groups column is missing
        raise CLIError(f"--groups names no column of the data; got {args.groups!r}.") from None
    if args.groups and args.groups not in frame.columns:
        raise CLIError(f"--groups names no column of the data; got {args.groups!r}.")
    for flag, given in (("--groups-public", args.groups_public),
                        ("--group-labels", args.group_labels)):  # fmt: skip
        if given and not args.groups:
            raise CLIError(f"{flag} needs --groups.")
    data = numeric_part(frame, drop=keep)
    group_labels = None
    if args.groups:
        labels = frame[args.groups]
        if args.group_labels is not None:  # compare as text, as the labels are typed
            group_labels = [g.strip() for g in args.group_labels.split(",")]
            labels = labels.astype(str).where(labels.notna(), None)
        data = data.assign(**{args.groups: labels.to_numpy()})
    # One generator for the whole run: the samples continue the release's stream.
    budget = ledger_budget(args, numeric_part(frame, drop=keep), kind="score")
    rng = check_random_state(args.seed)
    result = dp_score(
        data, eps=args.eps, delta=args.delta, bins=bins, components=components,
        method=methods, groups=args.groups, groups_public=args.groups_public,
        group_labels=group_labels,
        calibration=args.calibration, ties=args.ties, random_state=rng, budget=budget,
    )  # fmt: skip
    report_spending(budget)
    samples = None
    if args.sample:
        samples = {m: sample_points(result, method=m, kind=args.sample, random_state=rng)
                   for m in result.methods}  # fmt: skip
    fig = result.plot("panels", samples=samples)
    save_figure(fig, args.out)
    if args.table:
        table = result.to_frame()
        write_atomically(args.table, lambda tmp: table.to_csv(tmp, index=False))
    print(f"frame: {result.pc_labels[0]} in [{result.xlim[0]:.4g}, {result.xlim[1]:.4g}], "
          f"{result.pc_labels[1]} in [{result.ylim[0]:.4g}, {result.ylim[1]:.4g}]")  # fmt: skip
    print(f"grid: {result.bins[0]} x {result.bins[1]} bins; methods: {', '.join(result.methods)}")
    if result.groups is not None:
        kind = "exact (declared public)" if result.groups_public else "private (Laplace)"
        sizes = ", ".join(
            f"{g}={s:.0f}" for g, s in zip(result.groups, result.group_sizes, strict=True)
        )
        print(f"group sizes, {kind}: {sizes}")
    print(f"privacy cost: {result.cost}")
    print(result.cost.to_frame().to_string(index=False))
    print(f"wrote {args.out}" + (f" and {args.table}" if args.table else ""))
    return 0
