"""Regenerate docs/images/score_gau_g.png: the private grouped score plot of gau_g.

eps = 1, delta = 1e-5 for the whole release (private directions, private
group sizes, private frame, add histogram), default 8 x 8 grid. The fixed seed
makes the picture reproducible; a real release would use fresh entropy.

Run from the repository root: ``python scripts/make_score_figure.py``.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from dppca import dp_score
from dppca.datasets import load_gau_g

OUT = Path("docs/images/score_gau_g.png")


def main() -> None:
    result = dp_score(load_gau_g(), eps=1.0, delta=1e-5, groups="group", random_state=2024)
    fig = result.plot("groups")
    fig.suptitle(f"gau_g, private score plot, total cost {result.cost}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=90)
    print(result)
    print(result.cost.to_frame().to_string(index=False))


if __name__ == "__main__":
    main()
