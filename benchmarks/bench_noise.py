"""CPU time per value of the hardened noise samplers, side by side in one run.

Measured with one vector call of ``--count`` values each (default 20000):

* OpenDP's float Gaussian at its default grid (2^-1074, what dppca used
  before) and at dppca's grid (``dppca.privacy.hardened.grid_exponent``, the domain's
  size given);
* OpenDP's discrete Gaussian on 64-bit integers (the lattice draw alone);
* OpenDP's float Laplace at the default grid and at dppca's grid;
* Google's library through ``python-dp`` (``pydp``), if importable: its
  Gaussian and Laplace, one Python call per value. Its Gaussian is a binomial
  approximation on a grid, not exactly the calibrated distribution, so it is
  shown for comparison only;
* numpy's ``standard_normal`` (not hardened), for scale;
* ``dppca.privacy.mechanisms.gaussian_noise`` with a hardened generator (what an
  unseeded release runs), and the forecast ``noise_seconds`` gives.

Run:  python benchmarks/bench_noise.py [--count 20000]
(``pip install python-dp`` first to include Google's samplers.)
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np

from dppca.core.validation import HardenedGenerator
from dppca.privacy import hardened
from dppca.privacy.mechanisms import gaussian_noise
from dppca.privacy.noise_time import noise_seconds

SCALE = 0.01


def per_value_us(fn: Callable[[], object], count: int) -> float:
    start = time.process_time()
    fn()
    return (time.process_time() - start) / count * 1e6


def opendp_rows(count: int) -> list[tuple[str, float]]:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    values = [0.0] * count
    ints = [0] * count
    floats = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    sized = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=count)
    rows = []
    n = count
    gauss = dp.m.make_gaussian(floats, dp.l2_distance(T=float), scale=SCALE)
    rows.append(("opendp float Gaussian, grid 2^-1074", per_value_us(lambda: gauss(values), n)))
    k = hardened.grid_exponent("gaussian", SCALE, count)
    fine = dp.m.make_gaussian(sized, dp.l2_distance(T=float), scale=SCALE, k=k)
    rows.append((f"opendp float Gaussian, grid 2^{k}", per_value_us(lambda: fine(values), count)))
    lattice = dp.m.make_gaussian(
        dp.vector_domain(dp.atom_domain(T="i64")), dp.l2_distance(T="i64"), scale=2.0**40
    )
    rows.append(("opendp discrete Gaussian (i64)", per_value_us(lambda: lattice(ints), count)))
    lap = dp.m.make_laplace(floats, dp.l1_distance(T=float), scale=SCALE)
    rows.append(("opendp float Laplace, grid 2^-1074", per_value_us(lambda: lap(values), count)))
    k = hardened.grid_exponent("laplace", SCALE, count)
    fine_lap = dp.m.make_laplace(sized, dp.l1_distance(T=float), scale=SCALE, k=k)
    rows.append((f"opendp float Laplace, grid 2^{k}", per_value_us(lambda: fine_lap(values), n)))
    return rows


def pydp_rows(count: int) -> list[tuple[str, float]]:
    try:
        from pydp.algorithms import numerical_mechanisms as nm
    except ImportError:
        return [("python-dp (pydp): not installed", math.nan)]
    gauss = nm.GaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=1.0)
    lap = nm.LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    return [
        (
            "python-dp Gaussian (binomial approx.)",
            per_value_us(lambda: [gauss.add_noise(0.0) for _ in range(count)], count),
        ),
        (
            "python-dp Laplace",
            per_value_us(lambda: [lap.add_noise(0.0) for _ in range(count)], count),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000)
    args = parser.parse_args()
    count = args.count
    rows = opendp_rows(count) + pydp_rows(count)
    rng = np.random.default_rng(0)
    rows.append(
        (
            "numpy standard_normal (not hardened)",
            per_value_us(lambda: rng.standard_normal(count), count),
        )
    )
    rows.append(
        (
            "dppca gaussian_noise, unseeded",
            per_value_us(
                lambda: gaussian_noise(np.zeros(count), SCALE, HardenedGenerator()), count
            ),
        )
    )
    base = rows[0][1]
    print(f"{'sampler':<40} {'us/value':>9} {'vs OpenDP default':>18}")
    for name, us in rows:
        print(f"{name:<40} {us:9.2f} {base / us:17.1f}x")
    forecast = noise_seconds(count) / count * 1e6
    print(f"noise_seconds forecast: {forecast:.2f} us/value (Gaussian, hardened)")


if __name__ == "__main__":
    main()
