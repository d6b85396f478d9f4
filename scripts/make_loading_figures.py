"""Render the example loading plots in docs/images/ (run from the repository root).

    python scripts/make_loading_figures.py

The seeds are fixed so that the pictures are reproducible; a real release
should use fresh entropy (no seed).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dppca import dp_loading
from dppca.datasets import load_gau, load_wine

OUT = Path("docs/images")
# Order-of-magnitude unit scales for the wine columns, fixed without looking at the data.
WINE_SCALES = np.array([10, 1, 1, 10, 100, 1, 1, 0.1, 1, 1, 1, 1, 1000.0])


def save(fig: plt.Figure, name: str) -> None:
    fig.savefig(OUT / name, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    gau = dp_loading(load_gau(), eps=0.5, delta=1e-5, random_state=2024, compare=True)
    save(gau.plot("vector", compare=False).figure, "loading_vector_gau.png")
    save(gau.plot("heatmap", annotate=True, compare=False).figure, "loading_heatmap_gau.png")
    save(gau.plot("vector"), "loading_compare_gau.png")
    wine = dp_loading(
        load_wine() / WINE_SCALES, eps=4.0, delta=1e-5, calibration="analytic",
        random_state=2024,
    )  # fmt: skip
    ax = wine.plot("point", uncertainty=300, random_state=7)
    save(ax.figure, "loading_uncertainty_wine.png")


if __name__ == "__main__":
    main()
