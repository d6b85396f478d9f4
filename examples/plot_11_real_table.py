"""
A real table, from first look to the published report
======================================================

Tables that analysts bring are rarely tidy Gaussians in common units. This tutorial
follows one such table through the whole workflow: a few hundred rows, ten
measurements in their own units (millimetres, square millimetres and unit-free
ratios, so the largest column is about 10,000 times the smallest), a text column,
a few missing cells, and rows stored sorted by one of the columns.

The steps are the ones a careful analyst takes:

1. look at what the table is, and decide what would be published;
2. plan the private PCA **before** reading any data: its cost per part, what it
   estimates and whether it is forecast to be accurate;
3. run the one private fit and read its summary, including what its eps means;
4. draw every picture from that one fit;
5. publish a report, with everything spent recorded against one total budget.
"""

# %%
# The table
# ---------
# The bundled breast cancer data stand in for a clinic's own file: the ten
# ``*_mean`` measurements of 400 tumours, the diagnosis as text, rows kept sorted
# by area (as an export often is) and about 3% of the cells missing. A table
# edited like this is no longer the bundled one, so dppca treats it as private.
import numpy as np

from dppca import Budget, dp_pca, plan_pca, report
from dppca.datasets import load_breast_cancer_g

source = load_breast_cancer_g()
columns = [c for c in source.columns if c.endswith("_mean")]
table = (
    source[[*columns, "diagnosis"]]
    .sample(400, random_state=0)
    .sort_values("area_mean")
    .reset_index(drop=True)
)
gaps = np.random.default_rng(1).random((len(table), len(columns))) < 0.03
table[columns] = table[columns].mask(gaps)
print(table.shape, "| missing cells:", int(table[columns].isna().sum().sum()))
print(table[["radius_mean", "area_mean", "smoothness_mean", "diagnosis"]].head(3))

# %%
# Looking at your own table is fine: these numbers stay with you. What you
# publish must come from private releases only.
#
# Plan before spending
# --------------------
# A plan is built from the table's public shape alone. Two analyses are on offer:
# the PCA of the table in its own units, and the standardised (correlation) PCA.
# The first is ruled by the column with the largest numbers (here the area, in
# mm^2); the second is what a statistician would compute after standardising, and
# dppca estimates it from ranks, without sample means or standard deviations.
n, p = len(table), len(columns)
for standardize in (False, True):
    plan = plan_pca(n, p, eps=1.0, delta=1e-6, standardize=standardize)
    print(f"standardize={standardize}: {plan.estimates}")

# %%
# The standardised analysis is the default. Its score plot needs the columns on
# comparable scales. Private scales are not accurate at 400 rows, so without
# public ranges the fit would leave the score plot out (it says so before
# spending). Here the measurement protocol's ranges serve as public bounds: they
# come from the codebook, never from the data.
codebook = {
    "radius_mean": (0, 40),
    "texture_mean": (0, 50),
    "perimeter_mean": (0, 250),
    "area_mean": (0, 4000),
    "smoothness_mean": (0, 0.25),
    "compactness_mean": (0, 0.5),
    "concavity_mean": (0, 0.5),
    "concave_points_mean": (0, 0.25),
    "symmetry_mean": (0, 0.5),
    "fractal_dimension_mean": (0, 0.15),
}
plan = plan_pca(n, p, eps=1.0, delta=1e-6, bounds=codebook, variables=tuple(columns))
print(plan.cost)
print(plan.forecast.summary())

# %%
# One private fit
# ---------------
# ``missing="zero"`` lets a missing cell add nothing to the sums it is part of;
# no row is dropped, so the number of complete rows is never released. The text
# column is left out with a note. The fit spends exactly the planned (eps, delta),
# charged once to the budget declared for this table.
budget = Budget(2.0, 2e-6)
fit = dp_pca(
    table,
    eps=1.0,
    delta=1e-6,
    bounds=codebook,
    missing="zero",
    budget=budget,
    random_state=2024,
)
print(fit.summary())

# %%
# The summary's first line says what eps = 1 means for a person in the table: an
# attacker who tests whether they are in it, allowing 1% false alarms, detects
# them at most that often. Every private result can say this
# (``fit.privacy_sentence()``).
#
# Every picture from the one fit
# ------------------------------
# The scree (variances and PVE of the standardised table), the loadings, the
# correlation circle and the biplot are all post-processing of the fit's
# releases: drawing them costs nothing more. The shaded shapes are privacy-noise
# regions (how far the noise alone could move each point), not confidence regions.
import matplotlib.pyplot as plt

fig, axes = plt.subplots(2, 2, figsize=(11, 10))
fit.plot("scree", ax=axes[0, 0])
fit.plot("loading", ax=axes[0, 1])
fit.plot("variable", ax=axes[1, 0])
fit.plot("biplot", ax=axes[1, 1])
fig.tight_layout()

# %%
# Publish a report
# ----------------
# The report is a release of its own (it draws fresh noise), so it spends again:
# the second half of the declared total. With ``standardize=True`` it is the page
# of the same analysis as the fit above. Pass ``out="report.html"`` to write it.
page = report(
    table,
    eps=1.0,
    delta=1e-6,
    standardize=True,
    bounds=codebook,
    missing="zero",
    budget=budget,
    random_state=2025,
)
print(budget.headroom().describe())

# %%
# Without a seed (a seed is a secret: whoever has it can subtract the noise), the
# same calls draw fresh noise from the operating system and use the hardened
# samplers when ``dppca[hardened]`` is installed; that is how a release meant for
# publication is made.
