"""Replay audit: every release, run on neighbouring tables with its mechanisms replayed.

A gray-box check of the privacy contract, mechanism by mechanism. Every noise
primitive (the Gaussian, Laplace, symmetric and K-norm noise, the quantile
scans, the exponential mechanism and the random pairing) is wrapped wherever
dppca imported it. A release runs on table ``D`` and records, per call, its
public arguments (kind, scale, shape, ladder, epsilons), its pre-noise input
and its output. It then runs on a neighbour ``D'`` with the same seed, and
each call returns the output recorded on ``D`` (the noise is frozen: adaptive
composition fixes the earlier outputs). The audit then requires

1. the same sequence of calls with the same public arguments (control flow
   and every data-free quantity: plan, parts, grids, ladders, pairings);
2. each call's pre-noise input to move by at most its declared sensitivity:
   L2 (Frobenius) for Gaussian noise, L1 for Laplace noise, the moment
   polytope's norm for the K-norm noise, the utility's sensitivity for the
   exponential mechanism, and at most one value replaced in the multiset a
   quantile scan counts;
3. the same released result and the same warnings: with every mechanism's
   output fixed, nothing else may tell the tables apart.

Each mechanism also has a broken control (half the declared sensitivity, a
pairing by file position, a doubled statistic) that the audit must report.

Neighbours are built by the functions in :data:`NEIGHBOURS` (replace one row,
a table stored sorted by a column, one grouped by a label column, pairs of
equal values) and, audited with ``missing="zero"``, in
:data:`MISSING_NEIGHBOURS` (one row gains a missing cell; a row's cells all go
missing in a sorted table with gaps). Append a builder to audit more.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import dppca
from dppca import dp_pc_dir, dp_score, dp_scree
from dppca.privacy import knorm, mechanisms, quantiles

KW = {"eps": 2.0, "delta": 1e-6, "random_state": 5, "accuracy": "ignore"}

# ---------------------------------------------------------------- neighbours


@dataclass(frozen=True)
class Neighbours:
    """Two tables differing in one row, and the order each is stored in.

    ``x`` and ``y`` are aligned (row ``i`` of one is row ``i`` of the other
    but for the replaced row); the files hold ``x[order_x]`` and
    ``y[order_y]``, so a file sorted or grouped by the data is modelled by a
    data-dependent order.
    """

    x: np.ndarray
    y: np.ndarray
    order_x: np.ndarray
    order_y: np.ndarray

    @property
    def stored(self) -> tuple[np.ndarray, np.ndarray]:
        """The two tables as their files hold them."""
        return self.x[self.order_x], self.y[self.order_y]

    def carry(self, pairing: np.ndarray) -> np.ndarray:
        """The pairing of the second file that pairs the same people as ``pairing`` does.

        A uniformly random permutation composed with a fixed relabelling is
        uniform again, so replaying the first run's pairing through the
        relabelling freezes the noise without changing its law.
        """
        position = np.empty_like(self.order_y)
        position[self.order_y] = np.arange(self.order_y.size)
        return position[self.order_x[pairing]]


def _stored_as_is(x: np.ndarray, y: np.ndarray) -> Neighbours:
    identity = np.arange(x.shape[0])
    return Neighbours(x, y, identity, identity)


def replace_one(rng: np.random.Generator, n: int = 240, p: int = 4) -> Neighbours:
    """A Gaussian table and the same table with one row replaced by a far one."""
    X = rng.standard_normal((n, p)) * np.array([1.0, 3.0, 0.5, 10.0])[:p]
    Y = X.copy()
    Y[17] = 40.0 * rng.standard_normal(p)
    return _stored_as_is(X, Y)


def sorted_by_a_column(rng: np.random.Generator, n: int = 240, p: int = 4) -> Neighbours:
    """Both tables stored sorted by column 0; the neighbour changes one value."""
    X = replace_one(rng, n, p).x
    Y = X.copy()
    Y[17, 0] = X[:, 0].max() + 5.0
    return Neighbours(X, Y, np.argsort(X[:, 0], kind="stable"), np.argsort(Y[:, 0], kind="stable"))


def grouped_by_a_label(rng: np.random.Generator, n: int = 240, p: int = 4) -> Neighbours:
    """Rows stored in blocks of three shifted clusters; one row moves to another cluster."""
    X = rng.standard_normal((n, p)) + np.repeat([[0.0], [6.0], [-6.0]], n // 3, axis=0)
    Y = X.copy()
    Y[5] = X[n - 5]
    return _stored_as_is(X, Y)


def pairs_of_equal_values(rng: np.random.Generator, n: int = 240, p: int = 4) -> Neighbours:
    """Column 0 stored sorted as 0, 0, 1, 1, ...; the neighbour replaces one of the 0s."""
    X = rng.standard_normal((n, p))
    X[:, 0] = np.repeat(np.arange(n // 2, dtype=np.float64), 2)
    Y = X.copy()
    Y[0, 0] = n  # the largest value, stored last
    return Neighbours(X, Y, np.arange(n), np.argsort(Y[:, 0], kind="stable"))


#: The neighbour builders every mechanism is audited on. Append a builder
#: (``rng -> Neighbours``, same shape) to audit more; missing-value
#: neighbours go in MISSING_NEIGHBOURS (audited with missing="zero").
NEIGHBOURS: list[Callable[[np.random.Generator], Neighbours]] = [
    replace_one,
    sorted_by_a_column,
    grouped_by_a_label,
    pairs_of_equal_values,
]


# ---------------------------------------------------------------- the recorder


@dataclass
class Call:
    """One mechanism call: public arguments, the pre-noise input and the output."""

    kind: str
    public: tuple
    value: Any
    sensitivity: Any
    output: Any


def _multiset_replacements(a: np.ndarray, b: np.ndarray) -> int:
    """How many values of ``a`` must be replaced to get ``b`` (same size)."""
    ca, cb = (
        Counter(np.asarray(a, dtype=np.float64).ravel().tolist()),
        Counter(np.asarray(b, dtype=np.float64).ravel().tolist()),
    )
    return sum((ca - cb).values())


def _key(x: Any) -> Any:
    """A hashable, comparable form of a public argument."""
    if isinstance(x, np.ndarray):
        return ("array", x.shape, x.tobytes())
    if isinstance(x, float):
        return float(np.float64(x))
    return x


@dataclass
class Recorder:
    """Wraps the primitives; records (first run) or replays (second run)."""

    replay: list[Call] | None = None
    carry: Callable[[np.ndarray], np.ndarray] | None = None
    calls: list[Call] = field(default_factory=list)
    depth: int = 0

    def wrap(self, kind: str, real: Callable, split: Callable) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self.depth:  # a primitive called inside another: not a separate call
                return real(*args, **kwargs)
            public, value, sensitivity = split(*args, **kwargs)
            self.depth += 1
            try:
                out = real(*args, **kwargs)
            finally:
                self.depth -= 1
            if self.replay is not None and len(self.calls) < len(self.replay):
                out = self.replay[len(self.calls)].output
                if kind == "pairing" and self.carry is not None:
                    out = self.carry(out)
            self.calls.append(Call(kind, tuple(_key(x) for x in public), value, sensitivity, out))
            return out

        return wrapper


def _copy(x: Any) -> Any:
    return np.array(x, dtype=np.float64, copy=True)


def _splits() -> dict[str, tuple[str, Callable]]:
    """Per primitive: its kind and how to split its arguments (public, value, sensitivity)."""

    def gauss(value, sigma, rng, **kw):
        return (np.shape(value), sigma), _copy(value), None

    def lap(value, scale, rng, *, grid_count=None):
        return (np.shape(value), scale, grid_count), _copy(value), None

    def sym(p, sigma, rng, *, value=None):
        return (p, sigma), None if value is None else _copy(value), None

    def kn(value, scale, rng):
        return (np.shape(value), scale), _copy(value), None

    def scan(x, *args, present=None, **kw):
        # which rows have a value (missing="zero") is data: part of the scanned
        # multiset (an absent row counted as a value no row can take), not public
        public = (np.size(x), *args, *sorted((k, _key(v)) for k, v in kw.items() if k != "rng"))
        value = _copy(x) if present is None else np.where(present, x, np.inf)
        return public, value, None

    def em(utility, *, eps, sensitivity, rng):
        return (np.shape(utility), eps, sensitivity), _copy(utility), sensitivity

    def pairing(n, rng):
        return (n,), None, None

    def sparse(counts, scale, threshold, rng):
        # the stability histogram as one mechanism: how many cells draw noise
        # depends on the data, what it releases (all cells) does not
        return (np.shape(counts), scale, threshold), _copy(counts), None

    return {
        "gaussian_noise": ("gaussian", gauss),
        "laplace_noise": ("laplace", lap),
        "symmetric_gaussian_noise": ("symmetric", sym),
        "moment_knorm_noise": ("knorm", kn),
        "ladder_quantile": ("scan", scan),
        "em_quantile": ("scan", scan),
        "unbounded_quantile": ("scan", scan),
        "unbounded_quantile_upper": ("scan", scan),
        "signed_quantile": ("scan", scan),
        "exponential_mechanism": ("em", em),
        "random_pairing": ("pairing", pairing),
        "sparse_counts": ("sparse", sparse),
    }


def _originals() -> dict[str, Callable]:
    from dppca.releases.score import histograms

    sources = (mechanisms, quantiles, knorm, histograms)
    return {
        name: getattr(next(m for m in sources if hasattr(m, name)), name) for name in _splits()
    }


def _install(monkeypatch: pytest.MonkeyPatch, recorder: Recorder) -> None:
    """Replace every dppca module's binding of each primitive by the recorder's wrapper."""
    originals = _originals()
    splits = _splits()
    for name, real in originals.items():
        kind, split = splits[name]
        wrapper = recorder.wrap(kind, real, split)
        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").startswith("dppca") and (
                getattr(module, name, None) is real
            ):
                monkeypatch.setattr(module, name, wrapper)


# ---------------------------------------------------------------- the audit


def _declared(call: Call, parts: tuple) -> float | None:
    """The sensitivity the plan declares for a noise call (matched by its scale)."""
    scale = call.public[1]
    if call.kind == "knorm":  # scale 2 D / eps of the moments' pure part
        moments = [part for part in parts if part.name.startswith("clipped moments")]
        return scale * moments[0].eps / 2 if len(moments) == 1 else None
    for part in parts:
        if part.scale is not None and math.isclose(part.scale, scale, rel_tol=1e-12):
            return part.sensitivity
    return None


def _knorm_change(a: np.ndarray, b: np.ndarray) -> float:
    return float(knorm.moment_knorm(b - a))


def _frobenius(a: np.ndarray | None, b: np.ndarray | None) -> float:
    return 0.0 if a is None else float(np.linalg.norm(np.asarray(b) - np.asarray(a)))


def _summary(result: Any) -> Any:
    """What a release publishes, for comparison between the two runs."""
    frame = result.to_frame() if hasattr(result, "to_frame") else None
    return repr(result), None if frame is None else frame.to_csv()


def replay_audit(
    release: Callable[[np.ndarray], Any],
    pair: Neighbours,
    parts: tuple,
    monkeypatch: pytest.MonkeyPatch,
) -> list[str]:
    """Run ``release`` on both tables with the mechanisms replayed; the violations found."""
    X, Y = pair.stored
    first = Recorder()
    with monkeypatch.context() as patch, warnings.catch_warnings(record=True) as w1:
        _install(patch, first)
        warnings.simplefilter("always")
        r1 = release(X)
    second = Recorder(replay=first.calls, carry=pair.carry)
    with monkeypatch.context() as patch, warnings.catch_warnings(record=True) as w2:
        _install(patch, second)
        warnings.simplefilter("always")
        r2 = release(Y)
    runs = [first.calls, second.calls]
    problems = []
    if [(c.kind, c.public) for c in runs[0]] != [(c.kind, c.public) for c in runs[1]]:
        one = [(c.kind, c.public) for c in runs[0]]
        two = [(c.kind, c.public) for c in runs[1]]
        pairs = enumerate(zip(one, two, strict=False))
        at = next((i for i, (a, b) in pairs if a != b), min(len(one), len(two)))
        problems.append(f"control flow or public arguments differ at call {at}")
        return problems
    for i, (a, b) in enumerate(zip(*runs, strict=True)):
        where = f"call {i} ({a.kind})"
        if a.kind == "scan":
            moved = _multiset_replacements(a.value, b.value)
            if moved > 1:
                problems.append(f"{where}: {moved} values of the scanned multiset changed")
        elif a.kind == "em":
            change = float(np.max(np.abs(b.value - a.value)))
            if change > a.sensitivity * (1 + 1e-9):
                problems.append(f"{where}: utility moved {change:.3g} > {a.sensitivity:.3g}")
        elif a.kind == "sparse":
            # the stability histogram's premise: one row moves at most two
            # cells by one (its threshold and scale 2 / eps rest on it)
            moved = np.abs(b.value - a.value)
            if moved.sum() > 2 or moved.max(initial=0) > 1:
                problems.append(f"{where}: counts moved by {moved.sum():g} in L1 (declared 2)")
        elif a.kind in ("gaussian", "laplace", "symmetric", "knorm"):
            declared = _declared(a, parts)
            if a.kind == "laplace":
                change = float(np.abs(b.value - a.value).sum())
            elif a.kind == "knorm":
                change = _knorm_change(a.value, b.value)
            else:
                change = _frobenius(a.value, b.value)
            if declared is not None and change > declared * (1 + 1e-9):
                problems.append(f"{where}: moved {change:.4g} > declared {declared:.4g}")
    if _summary(r1) != _summary(r2):
        problems.append("the released result differs with every mechanism's output fixed")
    if [str(x.message) for x in w1] != [str(x.message) for x in w2]:
        problems.append("the warnings differ")
    return problems


# ---------------------------------------------------------------- mechanisms


def _parts(plan_fn: Callable[..., Any], n: int, p: int, **kw: Any) -> tuple:
    return plan_fn(n, p, **kw).parts


def _directions(X: np.ndarray, **kw: Any) -> Any:
    return dp_pc_dir(X, 2, **KW, **kw)


def _worst_kendall(rng: np.random.Generator) -> Neighbours:
    """n - 1 rows at 0, one at e1 against e2: the Kendall matrix moves by 2 sqrt 2 / n."""
    X = np.zeros((200, 3))
    X[0, 0] = 1.0
    Y = np.zeros((200, 3))
    Y[0, 1] = 1.0
    return _stored_as_is(X, Y)


def _worst_tau(rng: np.random.Generator) -> Neighbours:
    """Comonotone columns; the first row turns from lowest in all to alternately highest.

    Four of the six column pairs lose n - 1 concordant pairs each: the tau
    matrix over p moves by exactly its declared sensitivity.
    """
    n, p = 240, 4
    X = np.tile(np.arange(n, dtype=np.float64)[:, None], (1, p))
    Y = X.copy()
    Y[0] = [-1.0, n, -1.0, n]
    return _stored_as_is(X, Y)


CASES = {
    "kendall": ({}, "directions"),
    "tau": ({"estimator": "tau"}, "directions"),
    "private scales": ({"scale": "private"}, "directions"),
}


def _plan_parts(name: str, n: int, p: int) -> tuple:
    from dppca.releases.directions.plan import plan_pc_dir

    kw = CASES[name][0]
    return plan_pc_dir(n, p, 2, eps=KW["eps"], delta=KW["delta"], **kw).parts


@pytest.mark.parametrize("builder", NEIGHBOURS, ids=lambda b: b.__name__)
@pytest.mark.parametrize("name", list(CASES))
def test_direction_releases_pass_the_replay_audit(name, builder, monkeypatch):
    pair = builder(np.random.default_rng(1))
    parts = _plan_parts(name, *pair.x.shape)
    problems = replay_audit(lambda X: _directions(X, **CASES[name][0]), pair, parts, monkeypatch)
    assert problems == []


def test_kendall_audit_catches_half_the_sensitivity(monkeypatch):
    # worst-case neighbours move the matrix by the full sensitivity; a plan
    # declaring half of it (and calibrating to it) is reported
    pair = _worst_kendall(np.random.default_rng(0))
    assert replay_audit(_directions, pair, _plan_parts("kendall", 200, 3), monkeypatch) == []
    from dppca.releases.directions import plan as direction_plan

    real = direction_plan.kendall_sensitivity
    monkeypatch.setattr(direction_plan, "kendall_sensitivity", lambda n, r="tight": real(n, r) / 2)
    problems = replay_audit(_directions, pair, _plan_parts("kendall", 200, 3), monkeypatch)
    assert any("declared" in p for p in problems), problems


def test_tau_audit_catches_a_doubled_statistic(monkeypatch):
    from dppca.releases.directions import plan as direction_plan

    pair = _worst_tau(np.random.default_rng(2))
    tau = {"estimator": "tau"}
    assert (
        replay_audit(
            lambda X: _directions(X, **tau), pair, _plan_parts("tau", 240, 4), monkeypatch
        )
        == []
    )
    real = direction_plan.kendall_tau_matrix
    monkeypatch.setattr(direction_plan, "kendall_tau_matrix", lambda *a, **k: 2 * real(*a, **k))
    parts = _plan_parts("tau", *pair.x.shape)
    problems = replay_audit(lambda X: _directions(X, estimator="tau"), pair, parts, monkeypatch)
    assert any("declared" in p for p in problems), problems


def test_private_scales_audit_catches_a_pairing_by_position(monkeypatch):
    from dppca.releases.directions import scales

    pair = pairs_of_equal_values(np.random.default_rng(3))
    monkeypatch.setattr(scales, "random_pairing", lambda n, rng: np.arange(n))
    parts = _plan_parts("private scales", *pair.x.shape)
    problems = replay_audit(lambda X: _directions(X, scale="private"), pair, parts, monkeypatch)
    assert any("scanned multiset" in p for p in problems), problems


# -------------------------------------------------------------- scree and score


def _scree(X: np.ndarray) -> Any:
    return dp_scree(X, 2, **KW)


def _score(X: np.ndarray, **kw: Any) -> Any:
    return dp_score(X, **KW, **kw)


def _scree_parts(n: int, p: int) -> tuple:
    return dppca.plan_scree(n, p, 2, eps=KW["eps"], delta=KW["delta"]).parts


def _score_parts(n: int, p: int, **kw: Any) -> tuple:
    return dppca.plan_score(n, p, eps=KW["eps"], delta=KW["delta"], **kw).parts


@pytest.mark.parametrize("builder", NEIGHBOURS, ids=lambda b: b.__name__)
def test_scree_passes_the_replay_audit(builder, monkeypatch):
    pair = builder(np.random.default_rng(4))
    assert replay_audit(_scree, pair, _scree_parts(*pair.x.shape), monkeypatch) == []


@pytest.mark.parametrize("method", ["add", "sparse"])
@pytest.mark.parametrize("builder", NEIGHBOURS, ids=lambda b: b.__name__)
def test_score_passes_the_replay_audit(builder, method, monkeypatch):
    pair = builder(np.random.default_rng(5))
    parts = _score_parts(*pair.x.shape, method=method)
    assert replay_audit(lambda X: _score(X, method=method), pair, parts, monkeypatch) == []


@pytest.mark.slow  # about 7-10 s each: the report draws its page's figures
@pytest.mark.parametrize("scale", [None, "private"])
@pytest.mark.parametrize("builder", [replace_one, sorted_by_a_column], ids=lambda b: b.__name__)
def test_report_passes_the_replay_audit(builder, scale, monkeypatch):
    pair = builder(np.random.default_rng(11))
    parts = dppca.plan_report(240, 4, eps=KW["eps"], delta=KW["delta"], scale=scale).parts

    def release(X):
        return dppca.report(X, **KW, scale=scale)

    assert replay_audit(release, pair, parts, monkeypatch) == []


def test_scree_audit_catches_a_pairing_by_position(monkeypatch):
    from dppca.releases.scree import draw

    pair = sorted_by_a_column(np.random.default_rng(6))
    monkeypatch.setattr(draw, "random_pairing", lambda n, rng: np.arange(n))
    problems = replay_audit(_scree, pair, _scree_parts(*pair.x.shape), monkeypatch)
    assert problems, "a pairing by file position went unnoticed"


@pytest.mark.parametrize("method", ["add", "sparse"])
def test_score_audit_catches_doubled_counts(method, monkeypatch):
    from dppca.releases.score import draw

    pair = replace_one(np.random.default_rng(7))
    real = draw.bin_counts
    monkeypatch.setattr(draw, "bin_counts", lambda *a, **k: 2 * real(*a, **k))
    parts = _score_parts(*pair.x.shape, method=method)
    problems = replay_audit(lambda X: _score(X, method=method), pair, parts, monkeypatch)
    assert any("declared" in p for p in problems), problems


def test_score_audit_catches_a_frame_scan_on_doubled_rows(monkeypatch):
    from dppca.releases.score import frame

    pair = replace_one(np.random.default_rng(8))
    # the recorder wraps quantiles.em_quantile, looked up at call time
    monkeypatch.setattr(
        frame, "em_quantile", lambda x, *a, **k: quantiles.em_quantile(np.tile(x, 2), *a, **k)
    )
    problems = replay_audit(_score, pair, _score_parts(*pair.x.shape), monkeypatch)
    assert any("scanned multiset" in p for p in problems), problems


def test_the_audit_checks_every_noise_call_against_a_declared_sensitivity(monkeypatch):
    # no noise call of these releases may escape the sensitivity check
    pair = replace_one(np.random.default_rng(10))
    releases = [
        (_directions, _plan_parts("kendall", 240, 4)),
        (lambda X: _directions(X, scale="private"), _plan_parts("private scales", 240, 4)),
        (_scree, _scree_parts(240, 4)),
        (_score, _score_parts(240, 4)),
    ]
    for release, parts in releases:
        recorder = Recorder()
        with monkeypatch.context() as patch:
            _install(patch, recorder)
            release(pair.stored[0])
        noise = [c for c in recorder.calls if c.kind in ("gaussian", "laplace", "knorm")]
        noise += [c for c in recorder.calls if c.kind == "symmetric" and c.value is not None]
        assert noise and all(_declared(c, parts) is not None for c in noise)


def test_audit_reports_a_data_dependent_output(monkeypatch):
    # a release that publishes a sample statistic besides its mechanisms
    pair = replace_one(np.random.default_rng(9))

    def leaky(X):
        res = _directions(X)
        return type("Leak", (), {"__repr__": lambda self: f"{res!r} mean={X.mean():.6f}"})()

    problems = replay_audit(leaky, pair, _plan_parts("kendall", *pair.x.shape), monkeypatch)
    assert any("released result differs" in p for p in problems), problems


# -------------------------------------------------------------- missing values


def gains_a_missing_cell(rng: np.random.Generator, n: int = 240, p: int = 4) -> Neighbours:
    """One row of the neighbour has a missing cell (``missing="zero"`` keeps n public)."""
    pair = replace_one(rng, n, p)
    y = pair.x.copy()
    y[17, 2] = np.nan
    return _stored_as_is(pair.x, y)


def loses_its_row_to_missing_cells(
    rng: np.random.Generator, n: int = 240, p: int = 4
) -> Neighbours:
    """A table with a few missing cells, stored sorted; one row's cells all go missing."""
    pair = sorted_by_a_column(rng, n, p)
    x = pair.x.copy()
    x[[3, 50, 99], [1, 2, 3]] = np.nan
    y = x.copy()
    y[17] = np.nan
    order_y = np.argsort(np.nan_to_num(y[:, 0], nan=np.inf), kind="stable")
    return Neighbours(x, y, pair.order_x, order_y)


#: Neighbours with missing cells, audited with ``missing="zero"``.
MISSING_NEIGHBOURS: list[Callable[[np.random.Generator], Neighbours]] = [
    gains_a_missing_cell,
    loses_its_row_to_missing_cells,
]

MISSING = {"missing": "zero"}


@pytest.mark.parametrize("builder", MISSING_NEIGHBOURS, ids=lambda b: b.__name__)
@pytest.mark.parametrize("release", ["kendall", "private scales", "scree", "score"])
def test_releases_with_missing_cells_pass_the_replay_audit(release, builder, monkeypatch):
    pair = builder(np.random.default_rng(12))
    n, p = pair.x.shape
    e, d = KW["eps"], KW["delta"]
    if release == "scree":
        parts = dppca.plan_scree(n, p, 2, eps=e, delta=d, **MISSING).parts
        problems = replay_audit(
            lambda X: dp_scree(X, 2, **KW, **MISSING), pair, parts, monkeypatch
        )
    elif release == "score":
        parts = dppca.plan_score(n, p, eps=e, delta=d, **MISSING).parts
        problems = replay_audit(lambda X: _score(X, **MISSING), pair, parts, monkeypatch)
    else:
        kw = {**CASES[release][0], **MISSING}
        parts = dppca.plan_pc_dir(n, p, 2, eps=e, delta=d, **kw).parts
        problems = replay_audit(lambda X: _directions(X, **kw), pair, parts, monkeypatch)
    assert problems == []
