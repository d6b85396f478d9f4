"""
Public bounds, public scales and missing values
===============================================

Three things about a table are often known before anyone looks at it: the range
each variable can take (from a codebook, a questionnaire's answer scale, physical
limits, an instrument's range), the units it is measured in, and how missing
answers are coded. dppca uses such *public* facts wherever it can, because each one
replaces something that would otherwise have to be estimated privately.

What is never allowed is to read them off the data: the minimum and maximum of a
column, or its standard deviation, are statistics of the rows, and using them
without noise is an unaccounted release.
"""

# %%
# Bounds make the score frame free
# --------------------------------
#
# ``bounds=`` takes the domain of each variable: one ``(lower, upper)`` pair for
# all, one row per variable, or a mapping by column name. Values outside are
# clipped to it row by row (so neighbouring tables stay neighbours). With bounds,
# the score frame is the exact range of the scores over the box, and the privacy
# budget that would have bought a private frame goes to the histogram instead. The
# iris measurements are lengths in centimetres of parts of a flower; 0 to 10 cm is
# a safe public range for all four. Iris has 150 rows, so eps = 4 is needed for a
# readable picture.
import matplotlib.pyplot as plt

from dppca import dp_score
from dppca.datasets import load_iris

iris = load_iris()
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
private_frame = dp_score(iris, eps=4.0, delta=1e-6, random_state=11, accuracy="ignore")
private_frame.plot(ax=axes[0], title="private frame")
public_box = dp_score(
    iris, eps=4.0, delta=1e-6, bounds=(0, 10), random_state=11, accuracy="ignore"
)
public_box.plot(ax=axes[1], title="bounds (0, 10) cm")
print(private_frame.cost.to_frame()[["released", "eps"]].to_string())
print(public_box.cost.to_frame()[["released", "eps"]].to_string())

# %%
# Per-variable bounds are a mapping (or, on the command line, a CSV file
# ``variable,lower,upper`` or ``--bounds name=lo:hi,...``). The result records
# the bounds it used, and says that values were clipped to them, never how many
# (a count would leak).
bounds = {
    "sepal_length": (0, 10),
    "sepal_width": (0, 6),
    "petal_length": (0, 10),
    "petal_width": (0, 4),
}
scored = dp_score(iris, eps=4.0, delta=1e-6, bounds=bounds, random_state=12, accuracy="ignore")
print(scored.bounds)

# %%
# Bounds help the scree too: the clip level is searched on a short ladder below
# the largest squared pair norm the box allows.
from dppca import dp_scree

scree = dp_scree(iris, 3, eps=4.0, delta=1e-6, bounds=bounds, random_state=13, accuracy="ignore")
scree.plot()

# %%
# Public scales
# -------------
#
# Kendall directions depend on the units (see :doc:`plot_03_loading_plot`). Divide
# by scales known in advance (here the same codebook ranges), never by the
# sample standard deviations. Dividing every row by fixed numbers is applied to
# each row alone, so the guarantee is unchanged; bounds scale with the data.
import numpy as np

from dppca import dp_loading

ranges = np.array([hi - lo for lo, hi in bounds.values()])
scaled = dp_loading(
    iris / ranges, eps=4.0, delta=1e-6, bounds=(0, 1), random_state=14, accuracy="ignore"
)
scaled.plot("point", uncertainty=200, random_state=2)

# %%
# Missing values
# --------------
#
# dppca refuses NaN and infinite values, naming the columns (never the rows or
# values) so that the data holder can fix them:
table = iris.copy()
table.iloc[[3, 40], 1] = np.nan
try:
    dp_loading(table, eps=1.0, delta=1e-6, random_state=0, accuracy="ignore")
except ValueError as exc:
    print(exc)

# %%
# Two ways out:
#
# * **Impute with a public value** (a codebook's "unknown" code mapped to the
#   middle of the range, or a published population value). Each row is changed by
#   a rule that looks only at that row, so ``n`` stays the same and neighbours stay
#   neighbours: the guarantee holds as it is.
# * **Analyse the gaps** with ``missing="zero"`` (``--missing zero`` on the
#   command line, a checkbox in the app). No row is dropped: ``n`` stays the
#   number of rows, and a coordinate missing in either row of a pair adds nothing
#   to that pair's term. The noise and the cost are those of the full table, and
#   nothing says how many rows are complete (a count that depends on the data;
#   earlier versions published it as ``n``).
lo, hi = bounds["sepal_width"]
imputed = table.fillna({"sepal_width": (lo + hi) / 2})
print(dp_loading(imputed, eps=1.0, delta=1e-6, random_state=0, accuracy="ignore"))
gaps = dp_loading(table, eps=1.0, delta=1e-6, random_state=0, accuracy="ignore", missing="zero")
print(gaps.directions.n)  # every row: the table's public row count
