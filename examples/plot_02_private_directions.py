"""
Private PC directions: g-DPPCA
==============================

dppca estimates PC directions with g-DPPCA (Kim and Jung 2025) in its spherical
form: release the spherical Kendall matrix with Gaussian noise, then take the
eigenvectors of the noisy matrix. Everything drawn afterwards (loading plots, the
directions used by the scree and score plots) is computed from that one released
matrix and costs nothing more.

The mechanism
-------------

Two tables are *neighbours* when they have the same number of rows ``n`` and differ
in one row. Replacing row ``i`` changes only the ``n - 1`` pair terms that involve
it. Each term is ``2/(n(n-1))`` times the outer product ``u u'`` of a unit vector,
and two such outer products are at most :math:`\\sqrt 2` apart in Frobenius norm,
so the Kendall matrix moves by at most

.. math::

   \\Delta_F = \\frac{2\\sqrt 2}{n}

(the bound is reached when the other rows coincide and the replaced row turns by
90 degrees). The R package and the seed text use the looser bound ``4/n``. The noise
is a symmetric matrix with independent entries on and above the diagonal,
:math:`N(0, \\sigma^2)` on the diagonal and :math:`N(0, \\sigma^2/2)` off it; this
is a Gaussian mechanism of scale :math:`\\sigma` on the matrix's upper triangle
measured in the Frobenius norm.

Two calibrations of :math:`\\sigma` for a target (eps, delta):

* ``calibration="analytic"`` (the default): the analytic Gaussian mechanism of
  Balle and Wang (2018), the smallest :math:`\\sigma` whose exact privacy profile
  meets (eps, delta), valid for every eps > 0;
* ``calibration="classic"``: :math:`\\sigma = \\Delta\\sqrt{2\\ln(1.25/\\delta)}/\\varepsilon`,
  a proof only for eps < 1 (dppca warns above).

``sensitivity="seed"`` uses ``4/n``, which with the classic calibration reproduces
the R package's noise exactly.
"""

# %%
# How much noise each choice adds
# -------------------------------
#
# :func:`dppca.plan_pc_dir` prices a release from ``n``, ``p`` and the budget
# alone, without data; its ``sigma`` is the noise scale the release would use.
import matplotlib.pyplot as plt
import numpy as np

from dppca import plan_pc_dir

n, p, delta = 5000, 20, 1e-5
eps_grid = np.geomspace(0.05, 0.95, 12)
choices = {
    ("analytic", "tight"): "analytic, 2 sqrt(2)/n (default)",
    ("classic", "tight"): "classic, 2 sqrt(2)/n",
    ("analytic", "seed"): "analytic, 4/n",
    ("classic", "seed"): "classic, 4/n (R package)",
}
fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
for (calibration, sensitivity), label in choices.items():
    sigmas = [
        plan_pc_dir(
            n, p, eps=e, delta=delta, calibration=calibration, sensitivity=sensitivity
        ).sigma
        for e in eps_grid
    ]
    ax.loglog(eps_grid, sigmas, "o-", label=label, markersize=3)
ax.set(
    xlabel="eps",
    ylabel="sigma of the Kendall noise",
    title=f"noise scale at n = {n}, delta = {delta:g}",
)
ax.legend(fontsize=8)

default = plan_pc_dir(n, p, eps=0.5, delta=delta)
seed = plan_pc_dir(n, p, eps=0.5, delta=delta, calibration="classic", sensitivity="seed")
print(
    f"eps = 0.5: default sigma {default.sigma:.5f}, R package sigma {seed.sigma:.5f}, "
    f"ratio {default.sigma / seed.sigma:.2f}"
)

# %%
# The tighter sensitivity alone removes about 29 % of the noise
# (:math:`2\sqrt2/4 \approx 0.71`), and the analytic calibration removes more, most
# of all at small delta.
#
# A release
# ---------
#
# :func:`dppca.dp_pc_dir` makes the release. The result holds the released noisy
# matrix, its noise scale, the directions (orthonormal columns, PC1 first) and the
# cost. A fixed ``random_state`` makes this page reproducible; **a release meant for
# publication uses fresh entropy (the default, no seed)**, because whoever knows the
# seed can regenerate the noise and subtract it.
from dppca import dp_pc_dir
from dppca.datasets import load_gau

X = load_gau()
result = dp_pc_dir(X, k=3, eps=0.5, delta=1e-5, random_state=2024)
print(result)
print(result.cost)
print(f"sigma = {result.sigma:.5f}")
print(result.to_frame().round(3).head(8))

# %%
# The eigenvalues of the noisy matrix
# -----------------------------------
#
# The released matrix is public, so anything computed from it is free. Its
# eigenvalues show how well separated the leading directions are compared with the
# noise: a gap well above the noise's typical operator norm (about
# :math:`\sigma\sqrt{2p}`) means the direction is resolved.
values = np.linalg.eigvalsh(result.noisy_matrix)[::-1]
noise_norm = result.sigma * np.sqrt(2 * p)
fig, ax = plt.subplots(figsize=(5, 3.2), layout="constrained")
ax.plot(np.arange(1, p + 1), values, "o-", label="noisy Kendall eigenvalues")
ax.axhspan(-noise_norm, noise_norm, color="0.85", label="typical noise norm")
ax.set(xlabel="component", ylabel="eigenvalue", title="released matrix, eps = 0.5")
ax.legend(fontsize=8)

# %%
# What a forecast says first
# --------------------------
#
# Every release computes a data-free forecast before it reads the data, and warns
# (``accuracy="warn"``) or refuses (``accuracy="error"``) when the result would be
# mostly noise. The same forecast is on the plan:
print(plan_pc_dir(n, p, eps=0.5, delta=delta).forecast.summary())
print(plan_pc_dir(150, 4, eps=0.5, delta=delta).forecast.summary())
