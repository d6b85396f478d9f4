"""
Choosing eps and delta; budgets, the ledger and reusing releases
================================================================

Every private function takes ``eps`` and ``delta``: the guarantee that any one
person's row changes the probability of any outcome by at most a factor
``exp(eps)``, except with probability ``delta``. Some rules of thumb:

* **delta** should be much smaller than ``1/n`` (dppca refuses ``delta >= 1/n``
  unless told otherwise). ``1e-5`` for a few thousand rows, or ``n ** -1.1``
  (the app's default), are common choices.
* **eps** is a judgement about risk. Values from about 0.1 to a few are usual in
  practice; the total over *everything* released about one table is what counts.
* Accuracy depends on ``n * eps``: the noise on the Kendall matrix is of order
  ``1 / (n eps)``. Small tables need a larger eps, public bounds, or fewer
  releases that each get a larger share.

Nothing here needs guessing: the forecasts below are computed from public
quantities alone and cost nothing.
"""

# %%
# Forecasts before spending
# -------------------------
#
# The ``plan_*`` functions price a release from ``n``, ``p`` and the budget without
# any data. Here the typical noise norm of the Kendall matrix over a grid of
# table sizes and budgets; the forecast flags directions as mostly noise when it is
# above about 0.15.
import matplotlib.pyplot as plt
import numpy as np

from dppca import plan_pc_dir

sizes = np.array([150, 300, 1000, 3000, 10000, 30000])
fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
for eps in (0.1, 0.5, 1.0, 4.0):
    norms = [
        plan_pc_dir(int(n), 20, eps=eps, delta=n**-1.1).forecast.quantities[
            "direction_noise_norm"
        ]
        for n in sizes
    ]
    ax.loglog(sizes, norms, "o-", label=f"eps = {eps:g}")
ax.axhline(0.15, color="0.4", linestyle=":", label="forecast limit")
ax.set(
    xlabel="n (p = 20, delta = n^-1.1)",
    ylabel="noise operator norm",
    title="directions: forecast noise",
)
ax.legend(fontsize=8)

# %%
# A release that the forecast flags warns before it reads any data
# (``accuracy="warn"``) or is refused (``accuracy="error"``), in which case nothing
# is spent.
from dppca import InaccurateReleaseError, dp_scree, plan_scree
from dppca.datasets import load_wine

print(plan_scree(178, 13, 3, eps=1.0, delta=1e-6).forecast.ok)
try:
    dp_scree(load_wine(), 3, eps=1.0, delta=1e-6, accuracy="error")
except InaccurateReleaseError as exc:
    print("refused:", str(exc).splitlines()[0])

# %%
# The command line's ``--dry-run`` prints the same plan (cost and forecast) and
# releases nothing:
from dppca.cli import main

main(["loading", "--eps", "0.5", "--delta", "1e-5", "--dry-run"])

# %%
# A budget for a session
# ----------------------
#
# A :class:`dppca.Budget` is a ledger in memory. Every private function takes
# ``budget=``: the release is checked against what remains *before* the data are
# touched, and charged after. The budget adds costs up tightly (Gaussian releases
# compose as one Gaussian), so after releases of 0.5 and 0.4 more than the 0.1 of a
# plain sum remains; ``budget.spent`` shows the plain sum, ``budget.remaining`` what
# the tight total leaves.
from dppca import Budget, BudgetExceededError, dp_loading, dp_pc_dir
from dppca.datasets import load_gau

X = load_gau()
budget = Budget(eps=1.0, delta=1e-5)
dp_pc_dir(X, k=2, eps=0.5, delta=4e-6, budget=budget, random_state=1)
dp_loading(X, eps=0.4, delta=4e-6, budget=budget, random_state=2)
print("spent (basic sum):", budget.spent, " remaining:", budget.remaining)
try:
    dp_pc_dir(X, k=2, eps=1.0, delta=1e-6, budget=budget, random_state=3)
except BudgetExceededError as exc:
    print("refused:", str(exc).splitlines()[0])
print(budget.to_frame().to_string())

# %%
# Pay for the directions once
# ---------------------------
#
# The directions are the most expensive part of every picture. Release them once
# and pass them on: loading, scree and score plots drawn from an earlier private
# release cost nothing for the directions. Saved to a JSON file, a release can be
# reloaded later (even by another process) and drawn again for free. The file
# never holds a seed.
import tempfile
from pathlib import Path

from dppca import dp_score, load_release, save_release

workdir = Path(tempfile.mkdtemp())
directions = dp_pc_dir(X, k=4, eps=0.5, delta=5e-6, random_state=4)
save_release(directions, workdir / "directions.json")
again = load_release(workdir / "directions.json")
loading = dp_loading(None, directions=again)  # no data, no new noise
scree = dp_scree(X, 4, eps=0.25, delta=2.5e-6, directions=again, random_state=5)
score = dp_score(X, eps=0.25, delta=2.5e-6, directions=again, random_state=6)
print(loading.cost, scree.cost, score.cost)

# %%
# ``loading.cost`` is the cost the directions already paid (nothing new was
# spent); the scree and score releases spent only their own 0.25 each, so the
# whole set of pictures cost eps = 1 by a plain sum.
loading.plot()

# %%
# The ledger on disk
# ------------------
#
# The command line and the app keep a SQLite ledger per machine
# (``~/.local/state/dppca/ledger.sqlite`` by default, ``--ledger PATH`` or
# ``DPPCA_LEDGER`` to choose). A table is known by a fingerprint of its values and
# column names, so every command and app session that uses it spends from one
# total. :class:`dppca.privacy.ledger.Ledger` is the same store from Python:
from dppca.privacy.ledger import Ledger, fingerprint

ledger = Ledger(workdir / "ledger.sqlite")
fp = fingerprint(X.to_numpy(), list(X.columns))
ledger.set_total(fp, 1.0, 1e-5, name="gau")
dp_pc_dir(X, k=2, eps=0.4, delta=4e-6, budget=ledger.budget(fp, kind="directions"), random_state=7)
print(ledger.entries(fp)[["kind", "eps", "delta"]].to_string())
print("remaining:", ledger.remaining(fp))

# %%
# The ledger keeps an honest analyst within one total across sessions and
# restarts. It is bookkeeping, not a defence: a copy of the table with one value
# changed has another fingerprint and a fresh budget. The fingerprint is a hash of
# the data, so the ledger file stays on the data holder's machine. See
# :doc:`/privacy` for what it does and does not protect.
