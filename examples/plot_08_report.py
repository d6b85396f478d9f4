"""
The report page
===============

:func:`dppca.report` makes the three usual pictures from one budget and writes them
as one self-contained HTML page: it releases the directions once, then the scree and
the score releases reuse them, so the directions are paid for once. The default
split is 0.4 : 0.3 : 0.3 of (eps, delta) for directions, scree and score
(``shares=`` to change it); the loading plot is drawn from the directions and costs
nothing. The page holds the figures, their tables, the list of releases with their
costs, and a methods paragraph with the references to cite. It holds no seed and no
fingerprint of the data.

The command line does the same::

    dppca report data.csv --eps 1 --delta 1e-5 --out report.html

and so does the app's report button (see :doc:`/guide/report_and_app`).
"""

# %%
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from dppca import report
from dppca.datasets import load_gau_g

out = Path(tempfile.mkdtemp()) / "report.html"
rep = report(
    load_gau_g(),
    eps=1.0,
    delta=1e-5,
    k=5,
    groups="group",
    group_labels=[f"group{g}" for g in range(1, 6)],
    out=out,
    random_state=2024,
)
print(rep)
print(f"{out.name}: {out.stat().st_size / 1e3:.0f} kB, self-contained")
print(rep.budget.to_frame()[["released", "eps", "delta"]].to_string())

# %%
# The releases behind the page are kept on the report, so each figure can be drawn
# again (or differently) at no cost:
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), layout="constrained")
rep.loading.plot("vector", ax=axes[0], top=10)
rep.scree.plot(ax=axes[1])
rep.score.plot(ax=axes[2])

# %%
# Warnings raised while releasing (for example an accuracy forecast that flagged a
# part) are listed on the page and kept in ``rep.notes``:
print(rep.notes or "no notes")
