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
# the sample standard deviations would leak them, so divide by **public** scales
# chosen without looking at the data (units, instrument ranges, a codebook). For
# the ``wine`` table, whose columns range from tenths (hue) to about a thousand
# (proline), order-of-magnitude unit scales do the job. Wine has only 178 rows, so
# even eps = 4 leaves wide ellipses.
import numpy as np

from dppca.datasets import load_wine

wine = load_wine()
public_scales = np.array([10, 1, 1, 10, 100, 1, 1, 0.1, 1, 1, 1, 1, 1000.0])
fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), layout="constrained")
raw = dp_loading(wine, eps=4.0, delta=1e-5, random_state=3, accuracy="ignore")
raw.plot("vector", ax=axes[0], title="wine, raw units")
scaled = dp_loading(wine / public_scales, eps=4.0, delta=1e-5, random_state=3, accuracy="ignore")
scaled.plot("point", ax=axes[1], uncertainty=200, random_state=1, title="wine / public scales")

# %%
# In raw units proline (about a thousand) takes PC1 alone; after the public
# scaling the other chemistry shows up. The two releases above are two releases:
# together they cost eps = 8. On the command line the same scaling is
# ``dppca loading --dataset wine --scale 10,1,1,10,100,1,1,0.1,1,1,1,1,1000``.
