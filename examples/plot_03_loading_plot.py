"""
The DP loading plot
===================

A loading plot shows, for each variable ``j``, its entries in two PC directions,
``(v_ja, v_jb)``. :func:`dppca.dp_loading` makes one private release (the noisy
Kendall matrix of :doc:`plot_02_private_directions`) and keeps it; every plot on
this page is drawn from that one release, so all of them together cost the
(eps, delta) of the release and nothing more.
"""

# %%
# Vector, point and heatmap
# -------------------------
#
# ``plot("vector")`` draws an arrow from the origin to each variable's coordinates,
# ``plot("point")`` the same coordinates as labelled points, and
# ``plot("heatmap")`` the signed entries for several PCs. The axes are always
# ``[-1, 1]`` (directions are unit vectors) and the colour scale is fixed at
# ``[-1, 1]``: no limit is fitted to the data. A grey caption under each title
# states eps, delta and n.
import matplotlib.pyplot as plt

from dppca import dp_loading
from dppca.datasets import load_gau

X = load_gau()
res = dp_loading(X, eps=0.5, delta=1e-5, k=4, compare=True, random_state=2024)
print(res)
res.plot("vector", compare=False)

# %%
# In ``gau``, variables V1 to V5 carry the group means that separate groups 2 and
# 3, and V6 to V10 those of groups 4 and 5, so they drive PC1 and PC2; V11 to V20
# are pure noise and sit near the origin. ``top=`` keeps the longest arrows,
# ranked by the private coordinates only.
res.plot("point", compare=False, top=10)

# %%
res.plot("heatmap", compare=False, components=[1, 2, 3, 4], annotate=True)

# %%
# The released coordinates as tables
# ----------------------------------
print(res.coordinates(1, 2).round(3).head())
print(res.heatmap_table(components=[1, 2, 3]).round(2).head())

# %%
# Signs, and the comparison with ordinary PCA
# -------------------------------------------
#
# An eigenvector and its negative are the same direction. Private vectors are
# oriented by a rule that reads only the vector (its largest entry is positive).
# With ``compare=True`` the result also holds ordinary PCA loadings, and
# ``plot`` draws them in a second panel, each non-private vector flipped if needed
# to point like its private counterpart. The flip is for display only. The
# comparison panel is computed without noise: it is for checking your own work,
# never for publication, and the result says so (``private=False`` on that part,
# columns named ``nonprivate_*``). ``sign_reference="nonprivate"`` flips the private
# vectors instead, which uses one bit per PC of the non-private directions: those
# columns are then named ``nonprivate_signs_PC1``, ... and are not DP.
ax = res.plot("vector")
print(res.nonprivate_parts())

# %%
# Noise-sensitivity ellipses
# --------------------------
#
# How much of the picture is within reach of the privacy noise? ``uncertainty=B``
# adds fresh noise of the released scale to the released matrix ``B`` times,
# recomputes the directions and draws an ellipse around each variable covering
# 95 % of the spread. The released matrix and its noise scale are public, so this
# costs nothing. It shows the effect of the mechanism's noise, not sampling
# variability.
res.plot("point", compare=False, uncertainty=200, random_state=1)

# %%
# Scales matter
# -------------
#
# The spherical Kendall matrix is not invariant to the units of each column: a
# variable measured in large numbers dominates every direction. Standardising by
# the sample standard deviations would leak them. Two private ways out:
#
# * ``standardize=True``: the loadings of the standardised (correlation) PCA,
#   estimated from Kendall's tau of each pair of columns, which reads only the signs
#   of differences and so is the same in any units (no scales needed);
# * divide by **public** scales chosen without looking at the data (units,
#   instrument ranges, a codebook).
#
# The ``wine`` table's columns range from tenths (hue) to about a thousand
# (proline). Each panel below is its own release at eps = 1.
import numpy as np

from dppca.datasets import load_wine

wine = load_wine()
fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), layout="constrained")
raw = dp_loading(wine, eps=1.0, delta=1e-6, random_state=3)
raw.plot("vector", ax=axes[0], title="wine, raw units")
standardized = dp_loading(wine, eps=1.0, delta=1e-6, standardize=True, random_state=3)
standardized.plot("point", ax=axes[1], uncertainty=200, random_state=1, title="standardised")

# %%
# In raw units proline (about a thousand) takes PC1 alone, and the release warns
# that one column carries most of the matrix. The standardised loadings let the
# other chemistry show up. Wine has only 178 rows, so at eps = 1 the privacy-noise
# regions are wide, and the release says when a component is not separated from
# the noise. The two panels are two releases: together they cost eps = 2.
#
# Public scales do the same job when a codebook gives them: divide the table by
# them (``dp_loading(wine / public_scales, ...)``), or on the command line
# ``dppca loading --dataset wine --scale 10,1,1,10,100,1,1,0.1,1,1,1,1,1000``
# for order-of-magnitude unit scales.
public_scales = np.array([10, 1, 1, 10, 100, 1, 1, 0.1, 1, 1, 1, 1, 1000.0])
print(f"wine's columns divided by {public_scales.tolist()}")
