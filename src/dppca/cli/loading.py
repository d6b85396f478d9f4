"""``dppca loading``: draw a DP loading plot and print its coordinates."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from .._lazy import pandas as pd
from .._validation import check_random_state
from ..loading import dp_loading
from ._common import (
    CLIError,
    add_data_arguments,
    add_design_arguments,
    add_privacy_arguments,
    add_ties_argument,
    check_figure_path,
    parse_int_list,
    progress_for,
    read_design_input,
    save_figure,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "loading",
        help="DP loading plot (vector, point or heatmap) and its coordinate table",
        description="Release private PC directions (noisy spherical Kendall matrix), print the "
        "loading coordinates of two PCs with the privacy cost, and optionally draw them.",
    )
    add_data_arguments(parser)
    add_privacy_arguments(parser)
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
    parser.add_argument(
        "--scale",
        default=None,
        metavar="S1,S2,...",
        help="public per-column scales to divide the data by before the analysis (one "
        "positive number per analysed column; choose them without looking at the data, "
        "never sample standard deviations)",
    )
    add_ties_argument(parser)
    add_design_arguments(parser)
    parser.add_argument("--title", default=None, help="title of the DP panel")
    parser.add_argument("--label-size", type=float, default=8.0, help="font size of labels")
    parser.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="write the figure here; the format follows the extension (.png, .svg, .pdf). "
        "Without --out only the table is printed",
    )
    parser.set_defaults(func=run)


def _parse_scales(text: str, columns: list[str]) -> np.ndarray:
    try:
        values = np.array([float(part) for part in text.split(",")])
    except ValueError:
        raise CLIError(
            f"--scale must be comma-separated positive numbers; got {text!r}."
        ) from None
    if values.size != len(columns):
        raise CLIError(
            f"--scale needs one value per analysed column ({len(columns)}); got {values.size}."
        )
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise CLIError("--scale values must be finite and > 0.")
    return values


def _check_out(path: str | None) -> None:
    if path is None:
        return
    check_figure_path(path)
    directory = Path(path).parent
    if str(directory) and not directory.is_dir():
        raise CLIError(f"output directory {str(directory)!r} does not exist.")


def run(args: argparse.Namespace) -> int:
    # Everything that can be checked without the data is checked before the release.
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

    data, variables = read_design_input(args)
    if args.scale is not None:
        data = data / _parse_scales(args.scale, list(variables))
    if not isinstance(data, pd.DataFrame):  # chunked reader: a float64 array and its labels
        data = pd.DataFrame(data, columns=list(variables), copy=False)
    rng = check_random_state(args.seed)
    pair = tuple(pcs) if (pcs is not None and not heatmap) else (1, 2)
    result = dp_loading(
        data, eps=args.eps, delta=args.delta, components=pair,
        compare=args.compare, random_state=rng, calibration=args.calibration, ties=args.ties,
        design=args.design, m=args.m, progress=progress_for(args, len(data)),
    )  # fmt: skip

    if heatmap:
        table = result.heatmap_table(components=list(pcs) if pcs else None)
        if args.compare:
            other = result.heatmap_table(
                components=list(pcs) if pcs else None, source="nonprivate"
            )
            table = pd.concat([table, other], axis=1)
    else:
        table = result.coordinates()
    print(table.round(4).to_string())
    cost = result.cost
    print(
        f"privacy cost: {cost} ({cost.mechanism}, sigma={result.directions.sigma:.4g}); "
        "the table and figure are post-processing of that one release"
    )
    if args.compare:
        print(
            "warning: the nonprivate_* columns and the non-private panel are computed without "
            "noise and are NOT private; do not publish them"
        )

    if args.out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ..plotting import plot_loading

        drawn = plot_loading(
            result, kind=args.kind, components=pcs, top=args.top, title=args.title,
            label_size=args.label_size, uncertainty=args.uncertainty, random_state=rng,
        )  # fmt: skip
        fig = drawn if hasattr(drawn, "savefig") else drawn.figure
        try:
            save_figure(fig, args.out)
        finally:
            plt.close(fig)
        print(f"wrote {args.out}")
        if args.uncertainty is not None:
            print(
                f"uncertainty: {args.uncertainty} re-perturbations of the released matrix "
                "(noise sensitivity, no extra privacy cost; not sampling variability)"
            )
    return 0
