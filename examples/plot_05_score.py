"""
Private score plots
===================

An ordinary score plot draws one point per row: each row's coordinates on two PC
directions. Those points *are* the rows, so a private score plot cannot show them.
:func:`dppca.dp_score` releases a **histogram** of the scores instead, on a grid
inside a **frame** that is itself chosen privately, and the picture shows only
released bins (or synthetic points drawn from them).

One call spends its (eps, delta) on:

* private directions (unless earlier ones are passed with ``directions=``);
* the frame: a scale from disjoint pair differences, then the median of each axis,
  three exponential-mechanism choices on public ladders (free with public
  ``bounds=`` or a public ``frame=``);
* with groups whose sizes are not public, noisy group sizes (Laplace);
* the histogram counts: Gaussian noise on every cell (``"add"``), or Laplace noise
  on the non-empty cells with a threshold (``"sparse"``, a stability histogram).
"""

# %%
# The frame and the additive histogram
# ------------------------------------
from dppca import dp_score
from dppca.datasets import load_gau, load_gau_g

res = dp_score(load_gau(), eps=1.0, delta=1e-5, random_state=2024)
print(res)
print("private frame:", res.xlim, res.ylim)
print(res.cost.to_frame()[["released", "eps", "delta"]].to_string())
res.plot()

# %%
# The frame is three scale units either side of each axis's private median,
# widened by ``inflate`` (20 %). Rows outside it fall into the border bins. Small
# ``n * eps`` makes the private frame unreliable; the forecast says so before any
# data are read.
#
# Additive and sparse histograms side by side
# -------------------------------------------
#
# Asking for both methods splits the histogram's share between them.
both = dp_score(load_gau(), eps=1.0, delta=1e-5, method=["add", "sparse"], random_state=2024)
both.plot("panels")

# %%
# The table of a histogram has one row per bin: its edges and its released
# probability.
print(both.table("sparse").round(3).head())

# %%
# Groups
# ------
#
# ``groups=`` names a column (or passes labels). Unless ``groups_public=True``
# says the group sizes are public, they are released with Laplace noise. The group
# labels themselves are read from the data and published as they are, unless their
# public list is passed as ``group_labels=``; do that whenever the label set is not
# public knowledge.
grouped = dp_score(
    load_gau_g(),
    eps=1.0,
    delta=1e-5,
    groups="group",
    group_labels=[f"group{g}" for g in range(1, 6)],
    random_state=2024,
)
grouped.plot("groups")

# %%
grouped.plot()

# %%
# Synthetic points
# ----------------
#
# :func:`dppca.sample_points` draws points from a released histogram (uniformly
# inside a bin drawn by its probability, plus a small jitter). They are
# post-processing: they cost nothing and are not data rows, so they can be drawn as
# a scatter plot. Their draws come from a stream kept apart from the noise's.
from dppca import sample_points

points = sample_points(grouped, size=2000, random_state=5)
print(points.head())
grouped.plot("sample", sample=points)
