"""``dppca report``: one self-contained HTML page from one budget."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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
    add_table_argument,
    check_table_path,
    command_line,
    emit_table,
    info,
    load_directions,
    meaning_line,
    print_plan,
)
from ._safety import CLIError
from .pca import add_standardize_argument, print_pca_plan, refuse_fit_decided


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="one HTML page: loading, scree and score plots, tables, ledger and methods",
        description="Release private directions once and reuse them for the loading, "
        "scree/PVE and score plots, all from one budget (--eps, --delta) composed tightly, "
        "and write one self-contained HTML page (inline images, no network) with the "
        "figures, their tables, the privacy ledger and a methods paragraph with references.",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser)
    parser.set_defaults(calibration="analytic")
    parser.add_argument("--out", required=True, metavar="FILE.html", help="the HTML page to write")
    parser.add_argument("-k", type=int, default=None, help="PCs in the scree (default all)")
    parser.add_argument(
        "--components",
        default="1,2",
        metavar="A,B",
        help="the two PCs of the loading and score plots (default 1,2)",
    )
    parser.add_argument(
        "--shares",
        default=None,
        metavar="D,S,P",
        help="split of the budget over directions, scree and score (default 0.4,0.3,0.3), "
        "scaled up to the tight total",
    )
    parser.add_argument(
        "--groups",
        default=None,
        metavar="COLUMN",
        help="a column with group labels for the score plot (removed from the features)",
    )
    parser.add_argument(
        "--group-labels",
        default=None,
        metavar="A,B,...",
        help="the public list of group labels: only these are released, whatever the data hold",
    )
    parser.add_argument(
        "--groups-public",
        action="store_true",
        help="declare the group labels (and so the group sizes) public",
    )
    parser.add_argument(
        "--score-range",
        type=float,
        default=1e6,
        metavar="R",
        help="public bound on the scores for the private frame (default 1e6)",
    )
    parser.add_argument(
        "--directions",
        default=None,
        metavar="FILE.json",
        help="reuse the private directions saved by 'dppca directions --save-release' "
        "on the same data and columns: no new direction cost",
    )
    parser.add_argument("--title", default=None, help="title of the page")
    add_ties_argument(parser)
    parser.set_defaults(ties="zero")
    add_design_arguments(parser, progress=False)
    add_scale_argument(parser)
    add_standardize_argument(parser, default=False)
    add_table_argument(parser)
    add_accuracy_arguments(parser)
    add_budget_arguments(parser)
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


def _standardized(
    args: argparse.Namespace,
    data: Any,
    variables: tuple[str, ...],
    components: tuple[int, int],
    bounds: Any,
) -> int:
    """``report --standardize``: the page of one private PCA fit, with its score plot."""
    given = {"--groups": args.groups, "--shares": args.shares, "--directions": args.directions}
    given |= {"--scale": args.scale, "--score-range": args.score_range != 1e6}
    refuse_fit_decided(args, given)
    from ..releases.pca.plan import plan_pca
    from ..reporting import report

    options = {"k": args.k, "components": components, "bounds": bounds}
    options |= {"calibration": args.calibration, "accuracy": args.accuracy}
    if args.dry_run:
        n, p = len(data), len(variables)
        plan = plan_pca(n, p, eps=args.eps, delta=args.delta, score=True, **options)
        return print_pca_plan(plan)
    from ._ledger_budget import ledger_budget

    budget = ledger_budget(args, data, variables, kind="report")
    result = report(
        data,
        eps=args.eps,
        delta=args.delta,
        out=args.out,
        title=args.title,
        random_state=args.seed,
        budget=budget,
        standardize=True,
        **options,
    )
    report_spending(budget)
    emit_table(args, result.budget.to_frame(), index=False)
    info(f"privacy cost: {result.cost} (one private PCA fit, standardised)")
    info(f"wrote {args.out}")
    return 0


def _check_out(args: argparse.Namespace) -> None:
    """``--out``: an .html file in an existing directory, not the data file."""
    if Path(args.out).suffix.lower() not in {".html", ".htm"}:
        raise CLIError(f"--out must end in .html; got {args.out!r}.")
    directory = Path(args.out).parent
    if str(directory) and not directory.is_dir():
        raise CLIError(f"output directory {str(directory)!r} does not exist.")
    if args.data is not None and Path(args.data).resolve() == Path(args.out).resolve():
        raise CLIError("--out would overwrite the data file.")


def run(args: argparse.Namespace) -> int:
    _check_out(args)
    check_table_path(args)
    components = parse_int_list(args.components, "--components", length=2)
    shares = _shares(args.shares)
    frame, features, variables = read_grouped_input(args)
    reused = load_directions(args, features, variables)
    data, group_labels = with_groups(args, frame, features)
    bounds = read_bounds(args, variables)
    from ..core.scalar_checks import check_positive_int
    from ..releases.report import plan_report_options
    from ..releases.score.settings import ScoreGiven
    from ..reporting import ReportRun, report_from_options

    if args.standardize:  # the page of one private PCA fit (as 'dppca pca')
        return _standardized(args, data, variables, components, bounds)
    privacy, options, design = build_options(
        "report",
        args,
        bounds=bounds,
        scale=private_scale(args),
        k=args.k,
        components=components,
        groups_public=args.groups_public,
        shares=shares,
        score_range=args.score_range,
    )
    if args.dry_run:
        n_groups = None
        if args.groups:
            n_groups = len(group_labels) if group_labels else frame[args.groups].nunique()
        given = ScoreGiven(
            directions=reused is not None,
            groups=None if n_groups is None else check_positive_int(n_groups, "groups"),
        )
        n, p = len(data), len(variables)
        plan = plan_report_options(n, p, privacy, options, given, variables, design)
        return print_plan(plan, design_named=args.design is not None)
    from ._ledger_budget import ledger_budget

    budget = ledger_budget(args, features, variables, kind="report")
    run = ReportRun(
        groups=args.groups,
        group_labels=group_labels,
        directions=reused,
        out=args.out,
        title=args.title,
        random_state=args.seed,
        budget=budget,
        command=command_line(args),
    )
    result = report_from_options(data, privacy, options, design, run)
    report_spending(budget)
    emit_table(args, result.budget.to_frame(), index=False)
    reused_note = "directions reused" if reused is not None else "directions once"
    info(f"privacy cost: {result.cost} ({reused_note}, reused by loading, scree and score)")
    meaning_line(result.cost)
    info(f"wrote {args.out}")
    return 0
