"""``dppca pca``: one private PCA of a table, all its pictures and its tables.

The command builds one plan (:func:`dppca.releases.pca.plan_pca`) from the
options and the table's public shape; ``--dry-run`` prints that plan (what
the analysis estimates, the cost of each part, the forecast) before any of
the table's values are read, and a release runs exactly that plan through
the executor, charged once to the ledger. The importance table goes to
stdout as CSV, the budget table to stderr; the pictures go to one
multi-panel figure (``--out``) and/or one file per picture (``--out-dir``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import (
    add_accuracy_arguments,
    add_data_arguments,
    add_design_arguments,
    add_privacy_arguments,
    build_options,
    numeric_part,
    parse_int_list,
    parse_scales,
    read_bounds,
    read_data,
)
from ._ledger import add_budget_arguments, report_spending
from ._output import (
    add_table_argument,
    check_figure_path,
    check_table_path,
    emit_table,
    forecast_line,
    info,
    meaning_line,
    save_figure,
)
from ._safety import CLIError

if TYPE_CHECKING:
    from ..releases.pca.plan import PCAPlan
    from ..releases.pca.result import PCAResult

#: The pictures of a fit, in the order of the multi-panel figure.
PICTURES = ("scree", "score", "loading", "variable", "biplot")
_SPLIT_PARTS = ("directions", "scree", "score", "scales")


def add_standardize_argument(parser: argparse.ArgumentParser, *, default: bool) -> None:
    """``--standardize`` / ``--no-standardize``: which PCA the release estimates."""
    parser.add_argument(
        "--standardize",
        action=argparse.BooleanOptionalAction,
        default=default,
        help="estimate the standardised (correlation) PCA, the same in any units of the "
        "columns: directions from Kendall's tau and the scree from the same release; "
        "--no-standardize estimates the PCA in the table's own units, which depends on "
        f"them (default: {'standardised' if default else 'in units'})",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "pca",
        help="one private PCA: scree, score, loading (and more) pictures from one fit",
        description="Fit one private PCA of the table from one budget (--eps, --delta): the "
        "directions, the variances (scree/PVE) and the score plot share the analysis and "
        "the budget, composed tightly. Prints the importance table (CSV on stdout) and the "
        "budget table, and draws every picture of the fit.",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser)
    add_standardize_argument(parser, default=True)
    parser.add_argument(
        "-k", type=int, default=None, help="PCs with a private variance (default: the fit's)"
    )
    parser.add_argument(
        "--components",
        default="1,2",
        metavar="A,B",
        help="the two PCs of the score, loading and biplot pictures (default 1,2)",
    )
    parser.add_argument(
        "--scale",
        default=None,
        metavar="S1,S2,...",
        help="public per-column scales (a codebook's, never sample standard deviations): "
        "with --no-standardize the PCA of the table divided by them; when standardised, the "
        "score plot's scale (else the widths of --bounds, else private scales)",
    )
    parser.add_argument(
        "--split",
        default=None,
        metavar="PART=W,...",
        help="weights of the parts that spend, from directions, scree, score, scales "
        "(for example directions=0.6,score=0.4); the fit still records exactly --eps",
    )
    parser.add_argument(
        "--score",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="release the score plot (--no-score: none, and no cost); by default the fit "
        "leaves it out, saying why, when it would need private scales that the forecast "
        "says fail at this n and budget",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also attach the matching NON-PRIVATE analysis to the tables and pictures; "
        "for your own check only, never for publication",
    )
    parser.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="write all pictures as one multi-panel figure (.png, .svg or .pdf)",
    )
    parser.add_argument(
        "--out-dir",
        default=None,
        metavar="DIR",
        help="write each picture to DIR/pca_<picture>.<--format> (an existing directory)",
    )
    parser.add_argument(
        "--format", choices=("png", "svg", "pdf"), default="png", help="format for --out-dir"
    )
    add_design_arguments(parser, progress=False)
    add_table_argument(parser)
    add_accuracy_arguments(parser)
    add_budget_arguments(parser)
    parser.set_defaults(func=run)


def parse_split(text: str | None) -> dict[str, float] | None:
    """``--split directions=0.6,score=0.4`` as a mapping of weights."""
    if text is None:
        return None
    weights: dict[str, float] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in _SPLIT_PARTS:
            raise CLIError(
                f"--split must be PART=WEIGHT pairs with parts from {', '.join(_SPLIT_PARTS)}; "
                f"got {text!r}."
            )
        try:
            weights[name] = float(value)
        except ValueError:
            raise CLIError(f"--split weight of {name} must be a number; got {value!r}.") from None
    return weights


def _picture_paths(args: argparse.Namespace) -> dict[str, Path]:
    """The per-picture files of ``--out-dir`` (checked before any data are read)."""
    if args.out_dir is None:
        return {}
    directory = Path(args.out_dir)
    if not directory.is_dir():
        raise CLIError(f"--out-dir {str(directory)!r} is not an existing directory.")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CLIError(f"--out-dir {str(directory)!r} is not writable.")
    paths = {kind: directory / f"pca_{kind}.{args.format}" for kind in PICTURES}
    inputs = [Path(p).resolve() for p in (args.data, args.table, args.out) if p]
    for path in paths.values():
        if path.resolve() in inputs:
            raise CLIError(f"--out-dir would overwrite {str(path)!r}; choose another directory.")
    return paths


def build_plan(args: argparse.Namespace, n: int, variables: tuple[str, ...]) -> PCAPlan:
    """The fit's plan from the options and the table's public shape."""
    from ..releases.pca.plan import plan_pca_options

    privacy, options, design = build_options(
        "pca",
        args,
        bounds=read_bounds(args, variables),
        standardize=args.standardize,
        k=args.k,
        components=parse_int_list(args.components, "--components", length=2),
        score=args.score,
        scales=None if args.scale is None else parse_scales(args.scale, list(variables)),
        split=parse_split(args.split),
        compare=args.compare,
    )
    return plan_pca_options(n, len(variables), privacy, options, variables, design)


def pca_plan_lines(plan: PCAPlan, *, design_named: bool = False) -> tuple[str, ...]:
    """What ``--dry-run`` prints (the app's PCA preview shows the same lines).

    What the analysis estimates, its cost and what that cost means to an
    attacker, the cost of each part, the forecast: all from the plan, no data.
    ``design_named``: ``--design`` was given (the design is not called the default).
    """
    from ..privacy.tradeoff import attacker_sentence
    from ..releases.forecast import default_design_lines

    return (
        f"analysis: {plan.analysis}: {plan.estimates}",
        f"privacy cost (not spent): {plan.cost}",
        f"what this would mean: {attacker_sentence(plan.cost)}",
        budget_table(plan).to_string(),
        f"directions: {dict(plan.steps)['directions'].cost.released}",
        plan.forecast.summary(),
        # the design the rule chose, when it is balanced
        *default_design_lines(plan, named=design_named),
        *(f"note: {note}" for note in plan.notes),  # e.g. the score plot left out
    )


def print_pca_plan(plan: PCAPlan, *, design_named: bool = False) -> int:
    """``--dry-run``: what the analysis estimates, the cost of each part, the forecast."""
    for line in pca_plan_lines(plan, design_named=design_named):
        print(line)
    return 0


def budget_table(plan: PCAPlan) -> Any:
    """One row per part that spends, and the total: eps, delta, share of the split."""
    import pandas as pd

    rows = {
        name: {"eps": step.cost.eps, "delta": step.cost.delta, "share": plan.shares.get(name)}
        for name, step in plan.steps
    }
    rows["total"] = {"eps": plan.cost.eps, "delta": plan.cost.delta, "share": 1.0}
    return pd.DataFrame.from_dict(rows, orient="index")


def run(args: argparse.Namespace) -> int:
    from ..releases.engine import execute

    if args.out is not None:  # a typo in a name spends nothing
        check_figure_path(args.out)
    check_table_path(args)
    paths = _picture_paths(args)
    if args.scale == "private":
        raise CLIError(
            "--scale takes public scales here; the standardised analysis (the default) "
            "releases private scales for its score plot by itself."
        )
    data = numeric_part(read_data(args), chosen=bool(args.columns), missing=args.missing)
    variables = tuple(str(c) for c in data.columns)
    # One plan: what --dry-run prints is what the release checks, draws and charges.
    plan = build_plan(args, len(data), variables)
    if args.dry_run:
        return print_pca_plan(plan, design_named=args.design is not None)
    from ._ledger_budget import ledger_budget

    budget = ledger_budget(args, data, variables, kind="pca")
    fit: PCAResult = execute(plan, data, budget=budget, random_state=args.seed)
    report_spending(budget)
    forecast_line(args, fit)
    emit_table(args, fit.to_frame().rename_axis("component"))
    info(f"analysis: {fit.analysis}: {fit.estimates}")
    info(f"privacy cost: {fit.cost} (one fit: every picture below follows from it)")
    meaning_line(fit.cost)
    info(fit.budget_frame().to_string())
    for message in fit.notes:
        info(f"note: {message}")
    draw_pictures(fit, out=args.out, paths=paths)
    return 0


def draw_pictures(fit: PCAResult, *, out: str | None, paths: dict[str, Path]) -> None:
    """Draw the fit's pictures: one figure with a panel each, and/or one file each.

    A picture this installation cannot draw yet, or that the fit lacks (no
    score plot), is left out with a note.
    """
    if out is None and not paths:
        return
    import matplotlib.pyplot as plt

    kinds = [k for k in PICTURES if not (k == "score" and fit.score is None)]
    drawn: list[str] = []
    missing: set[str] = set()
    if out is not None:
        fig, axes = plt.subplots(
            1, len(kinds), figsize=(4.8 * len(kinds), 4.6), layout="constrained"
        )
        try:
            for ax, kind in zip(axes, kinds, strict=True):
                if _draw(fit, kind, ax, missing):
                    drawn.append(kind)
                else:
                    fig.delaxes(ax)
            save_figure(fig, out)
        finally:
            plt.close(fig)
        info(f"wrote {out} ({', '.join(drawn)})")
    for kind in kinds:
        if kind not in paths or kind in missing:
            continue
        fig, ax = plt.subplots(figsize=(5.5, 4.6))
        try:
            if _draw(fit, kind, ax, missing):
                save_figure(fig, str(paths[kind]))
                info(f"wrote {paths[kind]}")
        finally:
            plt.close(fig)


def _draw(fit: PCAResult, kind: str, ax: Any, missing: set[str]) -> bool:
    """Draw one picture on ``ax``; False (noted once, kept in ``missing``) if unavailable."""
    try:
        fit.plot(kind, ax=ax)
    except NotImplementedError as exc:
        info(f"note: {kind} picture left out: {exc}")
        missing.add(kind)
        return False
    return True


def refuse_fit_decided(args: argparse.Namespace, refused: dict[str, object]) -> None:
    """Refuse the options a ``--standardize`` fit decides itself, when they were given.

    ``refused`` maps option names to the values given (None or False: not
    given); ``--design`` and ``--m`` are always the fit's.
    """
    refused = {**refused, "--design": args.design, "--m": args.m}
    clashes = [name for name, value in refused.items() if value not in (None, False)]
    if clashes:
        raise CLIError(
            f"--standardize is one private PCA fit (as 'dppca pca'), which decides "
            f"{', '.join(clashes)} itself; drop {'it' if len(clashes) == 1 else 'them'} or "
            "leave out --standardize."
        )


def standardized_release(
    args: argparse.Namespace,
    picture: str,
    data: Any,
    variables: tuple[str, ...],
    *,
    refused: dict[str, object],
    **settings: Any,
) -> Any:
    """``--standardize`` on ``loading``, ``scree`` and ``score``: the fit's picture.

    The command runs the plan of one private PCA fit with only the parts its
    picture needs (:func:`dppca.releases.standardized.plan_standardized`) and
    returns that picture, or None after ``--dry-run`` printed the plan. The
    options in ``refused`` (option name -> value given), and ``--design`` and
    ``--m``, are decided by the fit and refused when given.
    """
    from ..releases.engine import execute
    from ..releases.standardized import picture_of, plan_standardized

    refuse_fit_decided(args, refused)
    plan = plan_standardized(
        picture,  # type: ignore[arg-type]
        len(data),
        len(variables),
        eps=args.eps,
        delta=args.delta,
        bounds=read_bounds(args, variables),
        compare=getattr(args, "compare", False),
        calibration=args.calibration,
        accuracy=args.accuracy,
        variables=variables,
        **settings,
    )
    if args.dry_run:
        print_pca_plan(plan)
        return None
    from ._ledger_budget import ledger_budget

    budget = ledger_budget(args, data, variables, kind=picture)
    fit = execute(plan, data, budget=budget, random_state=args.seed)
    report_spending(budget)
    forecast_line(args, fit)
    info(f"analysis: {fit.analysis}: {fit.estimates}")
    return picture_of(fit, picture)  # type: ignore[arg-type]
