"""
From scikit-learn's PCA
=======================

With the ``sklearn`` extra, :class:`dppca.DPPCA` is a scikit-learn transformer:
``fit`` is one private PCA (:func:`dppca.dp_pca`) that releases directions and
variances, so it drops into a ``Pipeline`` where ``sklearn.decomposition.PCA``
would go. Differences to keep in mind:

* ``standardize=True`` (the default) estimates the PCA of the standardised table
  (``StandardScaler`` then ``PCA``) without sample means or standard deviations;
  ``standardize=False`` estimates the PCA in the table's units (plain ``PCA``),
  which is what this page compares, as the columns of ``gau_g`` share one unit;
* there is no centring and no ``whiten``; directions come from Kendall matrices,
  which need no mean;
* every ``fit`` is a release that spends its (eps, delta); a grid search fits once
  per candidate and fold plus the refit, and each of those fits counts
  (``budget=`` charges each to one accountant and refuses once it is spent);
* ``transform`` projects rows on the private components, but each score is computed
  from its own row without noise: scores of private rows are **not** private (a
  ``PrivacyWarning`` says so unless ``public_transform=True`` declares the
  transformed data public).
"""

# %%
# Side by side with PCA
# ---------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA

from dppca import DPPCA
from dppca.datasets import load_gau_g

data = load_gau_g()
Xs, y = data.drop(columns="group"), data["group"]

private = DPPCA(
    n_components=2, eps=1.0, delta=1e-5, standardize=False, variances=True, random_state=2024
)
private.fit(Xs)
ordinary = PCA(n_components=2).fit(Xs)
print(private)
print("cost of the fit:", private.cost_)
print("private explained_variance_ratio_:", np.round(private.explained_variance_ratio_, 3))
print("PCA explained_variance_ratio_:    ", np.round(ordinary.explained_variance_ratio_, 3))

# %%
# Orient each ordinary component like its private counterpart (signs are
# arbitrary), then compare the loadings of PC1.
signs = np.sign(np.sum(private.components_ * ordinary.components_, axis=1))
fig, ax = plt.subplots(figsize=(9, 3.4), layout="constrained")
idx = np.arange(Xs.shape[1])
ax.bar(idx - 0.2, private.components_[0], width=0.4, label="DPPCA (eps = 1)")
ax.bar(idx + 0.2, signs[0] * ordinary.components_[0], width=0.4, label="PCA (non-private)")
ax.set_xticks(idx, Xs.columns, fontsize=7)
ax.set(ylabel="PC1 loading", title="gau, n = 5000")
ax.legend(fontsize=8)

# %%
# In a pipeline
# -------------
#
# The projected scores of the rows used to fit are not private. Here they feed a
# classifier that stays on the data holder's machine, so the warning is expected;
# ``public_transform=True`` would state that the transformed rows are public.
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

pipe = make_pipeline(
    DPPCA(n_components=2, eps=1.0, delta=1e-5, standardize=False, random_state=1),
    LogisticRegression(),
)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pipe.fit(Xs, y)
    accuracy = pipe.score(Xs, y)
print(f"training accuracy on two private components: {accuracy:.2f}")
print({type(w.message).__name__ for w in caught})

# %%
# Mapping the attributes
# ----------------------
#
# ===============================  =============================================
# ``sklearn.decomposition.PCA``    ``dppca.DPPCA``
# ===============================  =============================================
# ``components_``                  ``components_`` (private)
# ``explained_variance_``          private (in units: with ``variances=True``)
# ``explained_variance_ratio_``    shares of the private **total** variance
# ``mean_``                        none (nothing is centred)
# ``whiten``, ``svd_solver``       none
# (nothing)                        ``cost_``, ``pca_`` (the fit and its
#                                  pictures), ``scale_``, ``analysis_``
# ===============================  =============================================
#
# diffprivlib's ``PCA`` and OpenDP's PCA are compared on :doc:`/guide/coming_from`.
