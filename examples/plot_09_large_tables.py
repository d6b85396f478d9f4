"""
Large tables: the balanced design
=================================

The exact spherical Kendall matrix averages all ``n (n - 1) / 2`` pairs of rows. dppca
computes it in blocked matrix products, which is fast up to some ten thousand rows,
but the work still grows like ``n^2``. For millions of rows, ``design="balanced"``
averages the pairs of a random *balanced design* instead: ``n m`` pairs in which
every row appears exactly ``2 m`` times and no pair twice. :func:`dppca.dp_pc_dir`
draws the pairing from ``random_state``, never from the data; the kernel
:func:`dppca.spherical_kendall` draws nothing and takes the order as ``order=``.

Privacy is unchanged: a replaced row touches its ``2 m`` pairs, each of weight
``1 / (n m)``, so the sensitivity is again ``2 sqrt(2) / n`` and the noise is the
same as for the exact matrix. What changes is an extra, non-private *design error*
(the difference between the design's average and the full average), which shrinks
like ``1 / sqrt(m)``. The default ``m = min(20, (n - 1) // 2)`` depends on ``n``
only.
"""

# %%
# Design error against m
# ----------------------
#
# On ``gau`` (n = 5000), the distance between the balanced and the exact matrix,
# next to the privacy noise the release adds at eps = 0.5: the noise matrix's typical
# Frobenius norm, ``sigma sqrt(p (p + 1) / 2)`` (variance ``sigma^2`` on the diagonal and
# ``sigma^2 / 2`` on each of the ``p (p - 1)`` other entries).
import matplotlib.pyplot as plt
import numpy as np

from dppca import plan_pc_dir, spherical_kendall
from dppca.privacy.mechanisms import random_pairing
from dppca.datasets import load_gau

X = load_gau()
n, p = X.shape
exact = spherical_kendall(X)
ms = [2, 5, 10, 20, 50]
errors = [
    np.linalg.norm(spherical_kendall(X, design="balanced", m=m, order=random_pairing(len(X), 1)) - exact)
    for m in ms
]
noise = plan_pc_dir(n, p, eps=0.5, delta=1e-5).sigma * np.sqrt(p * (p + 1) / 2)

fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
ax.loglog(ms, errors, "o-", label="balanced design - exact (Frobenius)")
ax.loglog(ms, errors[0] * np.sqrt(ms[0] / np.array(ms)), ":", color="0.5", label="1 / sqrt(m)")
ax.axhline(noise, color="C3", label="privacy noise at eps = 0.5")
ax.set(xlabel="m (each row in 2m pairs)", ylabel="Frobenius distance", title="gau, n = 5000")
ax.legend(fontsize=8)

# %%
# At the default ``m = 20`` the design error is here some twenty times smaller than
# the privacy noise: the balanced release is about as accurate as the exact one,
# while its work grows like ``n m`` instead of ``n^2``.
#
# A balanced release
# ------------------
from dppca import dp_pc_dir

balanced = dp_pc_dir(X, k=2, eps=0.5, delta=1e-5, design="balanced", m=20, random_state=2)
exact_release = dp_pc_dir(X, k=2, eps=0.5, delta=1e-5, random_state=2)
print(balanced.cost, exact_release.cost)
cos = np.abs(np.sum(balanced.directions * exact_release.directions, axis=0))
print("|cos| between the two releases' PC1, PC2:", np.round(cos, 3))

# %%
# Dask and the command line
# -------------------------
#
# With the ``dask`` extra, :func:`dppca.spherical_kendall` and :func:`dppca.dp_pc_dir`
# accept a ``dask.array`` or a Dask DataFrame and compute the pair sums as tasks on
# the active scheduler (both designs); the noise is drawn once, on the client. The
# command line reads a large CSV (or Parquet) file in chunks into one array and
# shows a progress bar::
#
#     dppca directions big.csv --design balanced --m 20 --eps 0.5 --delta 1e-5
#
# See :doc:`/guide/large_tables` for both.
