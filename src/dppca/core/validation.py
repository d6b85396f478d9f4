"""Every input check of the package, in one place.

Each ``check_*`` function either returns the normalised value or raises a
``TypeError``/``ValueError`` whose message names the argument, states the
requirement and what was received, and where possible the fix. Messages never
quote data values.

Three modules hold the rest, and each check is imported from its own module:
:mod:`dppca.core.scalar_checks` (single values: booleans, integers, reals in an
interval, choices), :mod:`dppca.core.data_checks` (data tables, their column names
and public bounds) and :mod:`dppca.core.score_checks` (the score release's options).
The options of a release are checked once, in :mod:`dppca.core.options`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from .defaults import default_delta
from .scalar_checks import (
    check_bool,
    check_choice,
    check_nonnegative_int,
    check_positive_int,
    check_real,
)
from .scalar_checks import type_name as _type_name
from .types import Accuracy, Calibration, Design, RandomStateLike, Ties

__all__ = [
    "DELTA_MIN",
    "EPS_MAX",
    "EPS_MIN",
    "MAX_BINS",
    "MAX_REPEL_LABELS",
    "MAX_SENSITIVITY_CELLS",
    "HardenedGenerator",
    "check_accuracy",
    "check_bins_cap",
    "check_budget",
    "check_calibration",
    "check_compare",
    "check_components",
    "check_delta",
    "check_delta_for_n",
    "check_design",
    "check_design_m",
    "check_eps",
    "check_k",
    "check_pc_list",
    "check_random_state",
    "check_sensitivity_work",
    "check_ties",
    "default_m",
    "post_processing_rng",
    "repel_iterations",
]


#: The range of eps accepted anywhere. Beyond it no guarantee is meaningful, and
#: the calibrations overflow (eps >= 1e10) or give an infinite noise scale
#: (eps near the smallest float), so these are refused before any computation.
EPS_MIN, EPS_MAX = 1e-12, 1e6
#: The smallest delta accepted: below it ``log(1 / delta)`` is no longer
#: representable well enough for the calibrations (1e-320 is subnormal).
DELTA_MIN = 1e-300
#: Largest number of histogram bins along one axis of a score plot.
MAX_BINS = 1000
#: Largest ``draws * p * p`` of a noise-sensitivity view: the re-perturbed
#: p x p matrices are held at once (25e6 float64 numbers are 200 MB).
MAX_SENSITIVITY_CELLS = 25_000_000
#: Partners per position of the balanced design unless ``m`` is given.
_DEFAULT_M = 20
#: Above this many labels, loading-plot labels are written where they start
#: and not pushed apart (the pushing costs O(labels^2) per round: p = 150
#: took 6 s, p = 400 took 57 s, measured with benchmarks-style timing).
MAX_REPEL_LABELS = 60


def check_eps(eps: object, name: str = "eps") -> float:
    """Return ``eps`` as a float, requiring a finite number in [EPS_MIN, EPS_MAX]."""
    value = check_real(eps, name, low=0.0, low_open=True)
    if not EPS_MIN <= value <= EPS_MAX:
        raise ValueError(
            f"{name} must be in [{EPS_MIN:g}, {EPS_MAX:g}] (outside it there is no meaningful "
            f"privacy guarantee and the noise calibration breaks down); got {eps!r}."
        )
    return value


def check_delta(delta: object, name: str = "delta") -> float:
    """Return ``delta`` as a float, requiring DELTA_MIN <= delta < 1."""
    value = check_real(delta, name, low=0.0, high=1.0, low_open=True, high_open=True)
    if value < DELTA_MIN:
        raise ValueError(
            f"{name} must be at least {DELTA_MIN:g} (smaller values cannot be calibrated in "
            f"floating point); got {delta!r}."
        )
    return value


def check_bins_cap(bins: object, name: str = "bins") -> None:
    """Refuse a number of bins per axis above :data:`MAX_BINS` (other checks come later).

    ``bins`` may be None, one integer or a pair; anything else is left to the
    caller's own validation.
    """
    items = (
        bins if isinstance(bins, Sequence | np.ndarray) and not isinstance(bins, str) else [bins]
    )
    for b in items:
        if isinstance(b, numbers.Integral) and not isinstance(b, bool) and int(b) > MAX_BINS:
            raise ValueError(
                f"{name} must be at most {MAX_BINS} per axis (a finer grid has more cells "
                f"than points to show and would not fit in memory); got {int(b)}."
            )


def check_sensitivity_work(draws: object, p: int, name: str = "draws") -> None:
    """Refuse a noise-sensitivity view that would hold more than
    :data:`MAX_SENSITIVITY_CELLS` numbers (``draws`` p x p matrices)."""
    if isinstance(draws, numbers.Integral) and not isinstance(draws, bool):
        if int(draws) * p * p > MAX_SENSITIVITY_CELLS:
            most = max(1, MAX_SENSITIVITY_CELLS // (p * p))
            raise ValueError(
                f"{name} must be at most {most} for p = {p} variables (the re-perturbed "
                f"matrices are held in memory); got {int(draws)}."
            )


def repel_iterations(labels: int, max_iter: int) -> int:
    """Rounds of label pushing for ``labels`` labels: none above :data:`MAX_REPEL_LABELS`."""
    return max_iter if labels <= MAX_REPEL_LABELS else 0


def check_budget(budget: object) -> None:
    """Require None or an object with ``check(cost)`` and ``spend(cost)`` (a Budget)."""
    if budget is None:
        return
    if not (callable(getattr(budget, "check", None)) and callable(getattr(budget, "spend", None))):
        raise TypeError(
            "budget must be a dppca.Budget (or a ledger's budget) or None; got "
            f"{_type_name(budget)}."
        )


def check_calibration(calibration: object) -> Calibration:
    """Return the Gaussian calibration name, ``"classic"`` or ``"analytic"``."""
    return check_choice(calibration, "calibration", ("classic", "analytic"))


def check_ties(ties: object) -> Ties:
    """Return the ``ties`` option, ``"error"`` or ``"zero"``."""
    return check_choice(ties, "ties", ("error", "zero"))


def check_k(k: object, p: int, name: str = "k") -> int:
    """Return the number of components: ``None`` means all ``p``."""
    if k is None:
        return p
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer or None; got {_type_name(k)} {k!r}.")
    if not 1 <= int(k) <= p:
        raise ValueError(f"{name} must be an integer in [1, p] = [1, {p}]; got {k!r}.")
    return int(k)


def check_components(components: object, p: int, name: str = "components") -> tuple[int, int]:
    """Return a pair of distinct 1-based PC numbers, each in ``1..p``."""
    if p < 2:
        raise ValueError(
            f"{name} needs two PCs, so the data need at least 2 columns; got {p} column."
        )
    if isinstance(components, str | bytes) or not isinstance(components, Sequence | np.ndarray):
        raise TypeError(
            f"{name} must be a pair of PC numbers such as (1, 2); got {_type_name(components)}."
        )
    items = list(components)
    if len(items) != 2:
        raise ValueError(f"{name} must hold exactly two PC numbers; got {len(items)}.")
    out = []
    for c in items:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral):
            raise TypeError(f"{name} must hold integers (PCs are numbered from 1); got {c!r}.")
        if not 1 <= int(c) <= p:
            raise ValueError(f"{name} must lie in [1, {p}] (PCs are numbered from 1); got {c!r}.")
        out.append(int(c))
    if out[0] == out[1]:
        raise ValueError(f"{name} must name two different PCs; got ({out[0]}, {out[1]}).")
    return out[0], out[1]


class HardenedGenerator(np.random.Generator):
    """A numpy ``Generator`` from fresh OS entropy whose privacy noise is hardened.

    What ``random_state=None`` resolves to. It is an ordinary
    ``numpy.random.Generator`` (PCG64 seeded from the operating system) for
    the draws that are not additive noise (random pairings, the exponential
    scans of the quantiles, Gumbel draws of the exponential mechanism), with
    the flag ``hardened = True``. The noise functions of
    :mod:`dppca.privacy.mechanisms` (``gaussian_noise``, ``symmetric_gaussian_noise``,
    ``laplace_noise``) see the flag and draw their Gaussian and Laplace noise
    with OpenDP's floating-point-safe samplers, which take their randomness
    from the operating system, not from this generator. Pass one explicitly
    to ask for hardened noise; pass an int or a plain ``Generator`` for
    numpy's (reproducible, not hardened) samplers.
    """

    hardened = True

    def __init__(self, bit_generator: np.random.BitGenerator | None = None) -> None:
        super().__init__(np.random.PCG64() if bit_generator is None else bit_generator)


def check_random_state(random_state: RandomStateLike) -> np.random.Generator:
    """Resolve ``random_state`` into a ``numpy.random.Generator``.

    ``None`` gives a :class:`HardenedGenerator` (fresh entropy from the
    operating system; Gaussian and Laplace noise from OpenDP's hardened
    samplers); an integer seeds a new numpy generator; a ``Generator`` is used
    as it is (and advanced). Seeded and given generators draw all noise with
    numpy's samplers, so the same seed gives the same output.
    """
    if random_state is None:
        return HardenedGenerator()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(check_nonnegative_int(random_state, "random_state"))
    raise TypeError(
        "random_state must be None, an int or a numpy.random.Generator; "
        f"got {_type_name(random_state)}."
    )


def post_processing_rng(random_state: RandomStateLike) -> np.random.Generator:
    """A generator for post-processing draws, independent of the noise's stream.

    Synthetic points and noise views drawn after a release must not continue
    the stream that made its noise (published points would expose generator
    output). For ``None`` (or a :class:`HardenedGenerator`) this is a fresh
    numpy generator from OS entropy; for an int ``s`` it is seeded with the
    child ``SeedSequence(s).spawn(1)[0]``, a stream distinct from the one
    ``default_rng(s)`` gives the noise; for a ``Generator`` it is a child
    spawned from it (``Generator.spawn``), which leaves its draws unchanged.
    The same seed therefore still gives the same output.
    """
    if random_state is None or isinstance(random_state, HardenedGenerator):
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        seed_seq = random_state.bit_generator.seed_seq
        if isinstance(seed_seq, np.random.SeedSequence):
            return np.random.default_rng(seed_seq.spawn(1)[0])
        return np.random.default_rng()  # no seed sequence to derive from: fresh entropy
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed = check_nonnegative_int(random_state, "random_state")
        return np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    return check_random_state(random_state)  # raises the usual TypeError


def check_pc_list(components: object, k: int, name: str = "components") -> tuple[int, ...]:
    """Return a non-empty tuple of distinct 1-based PC numbers, each in ``1..k``."""
    if isinstance(components, str | bytes) or not isinstance(components, Sequence | np.ndarray):
        raise TypeError(
            f"{name} must be a sequence of PC numbers such as [1, 2, 3]; "
            f"got {_type_name(components)}."
        )
    items = list(components)
    if not items:
        raise ValueError(f"{name} must name at least one PC.")
    out = []
    for c in items:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral):
            raise TypeError(f"{name} must hold integers (PCs are numbered from 1); got {c!r}.")
        if not 1 <= int(c) <= k:
            raise ValueError(f"{name} must lie in [1, {k}] (PCs are numbered from 1); got {c!r}.")
        out.append(int(c))
    if len(set(out)) != len(out):
        raise ValueError(f"{name} must not repeat a PC; got {tuple(out)}.")
    return tuple(out)


def check_compare(compare: object, available: bool, needs: str) -> bool:
    """Whether a plot shows a result's non-private comparison.

    ``compare`` is True or False (numpy booleans too), or None: shown when the
    result holds one (``available``). True without one is refused with
    ``compare=True needs {needs}.``
    """
    if compare is None:
        return available
    shown = check_bool(compare, "compare")
    if shown and not available:
        raise ValueError(f"compare=True needs {needs}.")
    return shown


def check_design(design: object) -> Design:
    """Return the pair design of the spherical Kendall matrix, ``"exact"`` or ``"balanced"``."""
    return check_choice(design, "design", ("exact", "balanced"))


def default_m(n: int) -> int:
    """Default number of partners per position in the balanced design: ``min(20, (n-1)//2)``.

    It depends on the public ``n`` only. (Also importable as
    ``dppca.kernels.kendall.default_m``.)
    """
    return min(_DEFAULT_M, (n - 1) // 2)


def check_design_m(m: object, n: int) -> int:
    """Return the partners per row of the balanced design; None gives the default.

    ``m`` must satisfy ``1 <= m <= (n - 1) // 2`` so that no pair occurs twice
    (``n`` is public, so quoting it is safe).
    """
    top = (n - 1) // 2
    if top < 1:
        raise ValueError(f"design='balanced' needs at least 3 rows; got n={n}.")
    if m is None:
        return default_m(n)
    m = check_positive_int(m, "m")
    if m > top:
        raise ValueError(
            f"m must be an integer in [1, (n - 1) // 2] = [1, {top}] so that no pair of "
            f"rows repeats; got {m}."
        )
    return m


def check_accuracy(accuracy: object) -> Accuracy:
    """Return the ``accuracy`` policy: ``"warn"``, ``"error"`` or ``"ignore"``."""
    return check_choice(accuracy, "accuracy", ("warn", "error", "ignore"))


def check_delta_for_n(delta: float, n: int, allow: bool = False) -> float:
    """Refuse ``delta >= 1 / n`` unless ``allow``: it lets a mechanism publish a row."""
    if delta >= 1.0 / n and not allow:
        hint = ""
        if n >= 2:  # n is public: the suggestion is the default a new table would get
            hint = f" (for example {default_delta(n):g}, the default min(1e-6, 1/(10 n^1.5)))"
        raise ValueError(
            f"delta must be below 1/n = {1.0 / n:.3g} for n={n} rows; got {delta!r}. A larger "
            "delta allows releases that expose a whole row with that probability; use a "
            f"smaller delta{hint} or pass allow_large_delta=True."
        )
    return delta
