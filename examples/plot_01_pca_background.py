"""
PCA background, and why a private picture differs
=================================================

Principal component analysis looks for the directions along which a table of
``n`` rows and ``p`` columns varies most. The usual route: form the sample
covariance matrix, take its eigenvectors (the PC directions) and its eigenvalues
(the variances along them), then draw three pictures from them: a **loading plot**
(how much each variable weighs in two directions), a **scree plot** (how the
variance is spread over the components) and a **score plot** (the rows projected on
two directions).

Each of these pictures is a function of every row. Publishing it as it is can reveal
something about one person in the table, which is what differential privacy rules
out. This page recalls the ordinary quantities and shows, on the bundled ``gau``
data, which of them the private versions replace and why they look different.
"""

# %%
# The covariance from pairwise differences
# ----------------------------------------
#
# The sample covariance can be written without the mean: averaging
# :math:`(x_i - x_j)(x_i - x_j)^\top` over all pairs of rows gives twice the
# covariance matrix. The *spherical Kendall matrix* averages the same outer
# products after scaling each difference to unit length:
#
# .. math::
#
#    \widehat K = \frac{2}{n(n-1)} \sum_{i<j}
#    \frac{(x_i - x_j)(x_i - x_j)^\top}{\lVert x_i - x_j \rVert^2}.
#
# Every pair contributes a matrix of norm one, however far apart the two rows are,
# and that bounded contribution is what makes a private version possible. Under
# elliptical distributions the two matrices have the same eigenvectors, but their
# eigenvalues differ: those of :math:`\widehat K` add up to one.
import matplotlib.pyplot as plt
import numpy as np

from dppca import pc_dir, spherical_kendall
from dppca.datasets import load_gau

X = load_gau()
n, p = X.shape
cov_values = np.linalg.eigvalsh(np.cov(X.to_numpy(), rowvar=False))[::-1]
kendall_values = np.linalg.eigvalsh(spherical_kendall(X))[::-1]
print(f"n = {n}, p = {p}; Kendall eigenvalues add up to {kendall_values.sum():.6f}")

fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), layout="constrained")
axes[0].plot(np.arange(1, p + 1), cov_values, "o-")
axes[0].set(title="covariance eigenvalues", xlabel="component", ylabel="variance")
axes[1].plot(np.arange(1, p + 1), kendall_values, "o-", color="C1")
axes[1].set(title="spherical Kendall eigenvalues", xlabel="component", ylabel="share")

# %%
# Ordinary and Kendall directions agree
# -------------------------------------
#
# :func:`dppca.pc_dir` returns the ordinary (non-private) directions; the
# eigenvectors of the Kendall matrix point the same way up to sign. The absolute
# cosine between matching directions is close to one here.
ordinary = pc_dir(X, k=2)
print(ordinary)
kendall_vectors = np.linalg.eigh(spherical_kendall(X))[1][:, ::-1][:, :2]
cosines = np.abs(np.sum(ordinary.directions * kendall_vectors, axis=0))
print("|cos| between covariance and Kendall PC1, PC2:", np.round(cosines, 3))

# %%
# What the private version changes
# --------------------------------
#
# The private release adds Gaussian noise to :math:`\widehat K` (see
# :doc:`plot_02_private_directions`), and every picture is drawn from that noisy
# matrix. Three consequences follow, and each tutorial comes back to them:
#
# * **Noise.** Private directions wobble around the exact ones; the wobble shrinks
#   with ``n * eps``. Below, the angle between private and ordinary PC1 for several
#   budgets (one seed each, for illustration only).
# * **No free statistics.** Means, standard deviations, minima and maxima of the
#   data are not public, so nothing is centred, standardised or framed by them: the
#   Kendall matrix needs no centring, scales must come from public knowledge, and
#   the score plot's frame is released privately.
# * **Variances need their own release.** The Kendall eigenvalues are not
#   variances, so the scree plot estimates the variance along each private
#   direction separately, with part of the budget.
from dppca import dp_pc_dir

# The sweep goes below the budgets the forecast accepts on purpose (to show the
# failure), so it passes ``accuracy="ignore"``; a release meant for publication keeps
# the default, which warns before spending when the forecast says noise dominates.
budgets = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
angles = []
for eps in budgets:
    private = dp_pc_dir(X, k=2, eps=eps, delta=1e-5, random_state=7, accuracy="ignore")
    cos = abs(float(private.directions[:, 0] @ ordinary.directions[:, 0]))
    angles.append(np.degrees(np.arccos(min(cos, 1.0))))

fig, ax = plt.subplots(figsize=(5, 3.2), layout="constrained")
ax.semilogx(budgets, angles, "o-")
ax.set(
    xlabel="eps (delta = 1e-5)",
    ylabel="angle to ordinary PC1 (degrees)",
    title="private PC1 of gau, n = 5000",
)

# %%
# Signs are arbitrary
# -------------------
#
# An eigenvector ``v`` and ``-v`` describe the same direction. Private and ordinary
# directions may therefore come out with opposite signs; dppca orients every
# private vector by a rule that looks only at the vector (its largest entry is
# positive), and flips comparison vectors for display only. The loading tutorial
# (:doc:`plot_03_loading_plot`) shows this.
