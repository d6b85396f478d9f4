"""The JSON codec of release values: a fixed list of types, and every value checked.

:func:`_encode` writes a result's values with type tags for what JSON lacks.
A release file names the types of its values; :data:`_TYPES` is the fixed
allow-list of what it may name, so no module is imported and no other
code runs because of a file's contents. :func:`_decode` rebuilds the
values, refusing arrays that are not real, finite and of the shape they
claim; :func:`_check_result` checks every directions release inside a
result (orthonormal columns to 1e-8, a symmetric p x p noisy matrix, a
cost), and that a scree or score was computed along orthonormal directions
taken from the directions release it names. A key or field no release has
is refused, not skipped. :func:`_check_mechanism` checks a directions
release's facts against its mechanism and :func:`_check_cost` every cost's
claims against its noise. :mod:`dppca.release_io` reads and writes the files.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from .privacy.composition import _claim_holds
from .privacy.cost import _REL_SLACK, PrivacyCost
from .privacy.mechanisms import gaussian_sigma, kendall_sensitivity, kendall_sigma
from .privacy.totals import tight_total
from .releases.directions.result import DirectionsResult
from .releases.directions.tau import ESTIMATORS, tau_sensitivity
from .releases.forecast import Forecast
from .releases.loading.result import LoadingResult
from .releases.pca.result import PCAResult
from .releases.resolvability import Resolvability
from .releases.score.result import ScoreResult
from .releases.scree.result import ScreeResult

__all__: list[str] = []

# Every type a file may name, by the name it is written under: a fixed
# allow-list, so a file's contents never choose what code runs on load.
_TYPES: dict[str, type] = {
    "dppca.releases.directions:DirectionsResult": DirectionsResult,
    "dppca.releases.loading:LoadingResult": LoadingResult,
    "dppca.releases.scree:ScreeResult": ScreeResult,
    "dppca.releases.score:ScoreResult": ScoreResult,
    "dppca.releases.pca:PCAResult": PCAResult,
    "dppca.privacy.accounting:PrivacyCost": PrivacyCost,
    "dppca.releases.forecast:Forecast": Forecast,
    "dppca.releases.resolvability:Resolvability": Resolvability,
}
_TYPE_NAMES = {cls: name for name, cls in _TYPES.items()}
_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
# Directions must have orthonormal columns to this precision (a released
# eigenvector basis is orthonormal to rounding, about 1e-15).
_ORTHO_TOL = 1e-8

# Fields renamed since files were first written: old name -> current name, per
# type. Files keep loading; new files use the current names. (Values written
# under old spellings, such as ScreeResult's directions_source, are accepted
# by the result classes themselves; a stored "private" flag is ignored, the
# results compute it.)
_RENAMED_FIELDS: dict[str, dict[str, str]] = {
    "dppca.releases.score:ScoreResult": {"directions_result": "directions_release"},
}


# Fields a file may hold that the current classes no longer take: a stored
# "private" flag (the results compute it).
_IGNORED_FIELDS = frozenset({"private"})


class _Refused(ValueError):
    """A value in a release file that is not what a release holds."""


def _only_keys(value: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise _Refused(f"{what} with unknown keys {unknown!r}")


def _decode_array(value: Mapping[str, Any]) -> np.ndarray:
    _only_keys(value, {"$array", "dtype", "shape"}, "an array")
    try:
        dtype = np.dtype(str(value["dtype"]))
        shape = tuple(value["shape"])
        data = value["$array"]
    except (KeyError, TypeError) as exc:
        raise _Refused(f"an array without a valid dtype or shape ({exc})") from None
    if dtype.kind not in "biuf" or dtype.itemsize > 8:
        raise _Refused(f"an array of dtype {dtype} (only real numbers are released)")
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise _Refused(f"an array with shape {shape!r}")
    if not isinstance(data, list) or len(data) != math.prod(shape):
        raise _Refused(f"an array whose values do not fill its shape {shape!r}")
    data = [
        _FLOATS.get(str(x.get("$float")), x) if isinstance(x, dict) and len(x) == 1 else x
        for x in data
    ]
    if not all(isinstance(x, int | float) for x in data):
        raise _Refused("an array with entries that are not real numbers")
    out = np.array(data, dtype=dtype).reshape(shape)
    if dtype.kind == "f" and not np.all(np.isfinite(out)):
        raise _Refused("an array with NaN or infinite entries")
    return out


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    for tag in ("$float", "$tuple", "$map"):
        if tag in value:
            _only_keys(value, {tag}, f"a {tag[1:]}")
    if "$float" in value:
        if value["$float"] not in _FLOATS:
            raise _Refused(f"a float written as {value['$float']!r}")
        return _FLOATS[value["$float"]]
    if "$array" in value:
        return _decode_array(value)
    if "$tuple" in value:
        return tuple(_decode(v) for v in value["$tuple"])
    if "$map" in value:
        return MappingProxyType({_decode(k): _decode(v) for k, v in value["$map"]})
    if "$dataclass" in value:
        name = value["$dataclass"]
        if not isinstance(name, str) or name not in _TYPES:
            raise _Refused(f"a type outside the release types: {name!r}")
        _only_keys(value, {"$dataclass", "fields"}, f"a {name}")
        cls = _TYPES[name]
        if not isinstance(value.get("fields"), dict):
            raise _Refused(f"a {cls.__name__} without its fields")
        known = {f.name for f in dataclasses.fields(cls) if f.init}
        renamed = _RENAMED_FIELDS.get(name, {})
        stored = {renamed.get(k, k): v for k, v in value["fields"].items()}
        unknown = sorted(set(stored) - known - _IGNORED_FIELDS)
        if unknown:
            raise _Refused(f"a {cls.__name__} with unknown fields {unknown!r}")
        fields = {k: _decode(v) for k, v in stored.items() if k in known}
        try:
            return cls(**fields)
        except (TypeError, ValueError) as exc:
            raise _Refused(f"a {cls.__name__} that cannot be built ({exc})") from None
    raise _Refused(f"an unknown value {sorted(value)!r}")


def _check_directions(res: DirectionsResult) -> None:
    """A directions release as it must be: real, finite, orthonormal, shapes that agree."""
    d, m = np.asarray(res.directions), np.asarray(res.noisy_matrix)
    p = len(res.variables)
    if d.ndim != 2 or d.shape[0] != p or not 1 <= d.shape[1] <= p:
        raise _Refused(f"directions of shape {d.shape} for {p} variables")
    if m.shape != (p, p) or not np.allclose(m, m.T, rtol=0, atol=1e-12 * max(1.0, abs(m).max())):
        raise _Refused(f"a noisy matrix of shape {m.shape} that is not a symmetric {p} x {p}")
    error = float(np.abs(d.T @ d - np.eye(d.shape[1])).max())
    if error > _ORTHO_TOL:
        raise _Refused(f"directions that are not orthonormal (off by {error:.2g})")
    if not (isinstance(res.cost, PrivacyCost) and res.n >= 2):
        raise _Refused("a directions release without its cost or with n < 2")
    sigma = res.sigma
    if sigma is not None and not (isinstance(sigma, float) and math.isfinite(sigma) and sigma > 0):
        raise _Refused(f"a noise sd of {sigma!r}")
    values = np.asarray(res.eigenvalues)
    scale = max(1.0, float(np.abs(m).max()))
    if values.shape != (d.shape[1],) or np.any(np.diff(values) > 1e-12 * scale):
        raise _Refused("eigenvalues that are not k values in decreasing order")
    residual = float(np.abs(m @ d - d * values).max())
    if residual > _ORTHO_TOL * scale:
        raise _Refused(
            f"directions that are not eigenvectors of the noisy matrix ({residual:.2g})"
        )


def _check_along(res: ScreeResult | ScoreResult) -> None:
    """The directions a scree or score was computed along: orthonormal columns, each
    one of its directions release's (up to sign) when it names one."""
    d = np.asarray(res.directions)
    if d.ndim != 2 or (res.variables is not None and d.shape[0] != len(res.variables)):
        raise _Refused(f"directions of shape {d.shape} for its variables")
    error = float(np.abs(d.T @ d - np.eye(d.shape[1])).max()) if d.size else 0.0
    if error > _ORTHO_TOL:
        raise _Refused(f"directions that are not orthonormal (off by {error:.2g})")
    release = res.directions_release
    if isinstance(release, DirectionsResult) and d.size:
        released = np.asarray(release.directions)
        if (
            d.shape[0] != released.shape[0]
            or (1.0 - np.abs(d.T @ released).max(axis=1)).max() > _ORTHO_TOL
        ):
            raise _Refused("directions that are not those of the directions release it names")


def _close(a: float | None, b: float, rel: float = 1e-9) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=rel)


def _check_cost(cost: PrivacyCost) -> None:
    """A cost's claims as its noise makes them: a Gaussian or Laplace part claims no
    less than its noise gives (the classic calibration is exempt at eps >= 1, where it
    is not proven and warns), and a composed cost no less than its parts' tight total."""
    if cost.kind in ("gaussian", "laplace"):
        exempt = "classic" in cost.mechanism and cost.eps >= 1
        if not exempt and not _claim_holds(cost):
            raise _Refused(
                f"a cost (eps={cost.eps:g}, delta={cost.delta:g}) that its noise does not "
                f"give ({cost.kind} part '{cost.released}': sensitivity {cost.sensitivity!r}, "
                f"noise {cost.sigma if cost.kind == 'gaussian' else cost.scale!r})"
            )
    if cost.parts:
        eps_parts, _ = tight_total(cost.leaves(), cost.delta)
        if eps_parts > cost.eps * (1 + 1e-6) + 1e-12:
            raise _Refused(
                f"a composed cost of eps={cost.eps:g} whose parts compose to eps="
                f"{eps_parts:.6g} at delta={cost.delta:g}"
            )
        delta_parts = max(leaf.delta for leaf in cost.leaves())
        if delta_parts > cost.delta * (1 + _REL_SLACK):
            raise _Refused(
                f"a composed cost of delta={cost.delta:g} below a part's {delta_parts:g}"
            )


def _check_mechanism(res: DirectionsResult) -> None:
    """A directions release's facts as its mechanism makes them.

    The noise part's sensitivity is the rule's at the release's n (for tau
    :func:`~dppca.releases.directions.tau.tau_sensitivity` at its p, or the
    ``2 sqrt(2) / n`` of earlier versions), its sigma the package's own
    calibration at the part's (eps, delta) or more, and the result's sigma that
    part's; the estimator is a known one and the matrix has its diagonal (the
    public constant ``1 / p`` for tau; noisy, so never that constant, for the
    spherical Kendall matrix).
    """
    if res.estimator not in ESTIMATORS:
        raise _Refused(f"estimator {res.estimator!r} (a release uses one of {ESTIMATORS})")
    if res.calibration not in ("analytic", "classic"):
        raise _Refused(f"calibration {res.calibration!r}")
    if res.sensitivity not in ("tight", "seed"):
        raise _Refused(f"sensitivity {res.sensitivity!r}")
    assert res.cost is not None  # checked by _check_directions
    leaves = res.cost.leaves()
    noise = [leaf for leaf in leaves if leaf.kind == "gaussian"]
    others = [leaf for leaf in leaves if leaf.kind != "gaussian"]
    if len(noise) != 1 or (others and res.scales is None):
        raise _Refused("a directions cost that is not one Gaussian part (and scale parts)")
    if any(leaf.kind != "pure" for leaf in others):
        raise _Refused("scale parts of a directions cost that are not pure")
    part = noise[0]
    expected = kendall_sensitivity(res.n, res.sensitivity)
    # tau: the bound at its p (smaller for odd p); files of earlier versions hold 2 sqrt(2) / n
    allowed = (expected, tau_sensitivity(res.n, len(res.variables)))
    if not any(_close(part.sensitivity, e) for e in allowed[: 1 + (res.estimator == "tau")]):
        raise _Refused(
            f"cost.sensitivity {part.sensitivity!r}, not the {res.sensitivity} rule's "
            f"{expected:.6g} at n={res.n}"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classic at eps >= 1 warns; the file is only read
        least = kendall_sigma(res.n, part.eps, part.delta, res.calibration, res.sensitivity)
        if res.estimator == "tau":
            least = gaussian_sigma(allowed[1], part.eps, part.delta, res.calibration)
    if part.sigma is None or part.sigma < least * (1 - 1e-9):
        raise _Refused(
            f"cost.sigma {part.sigma!r}, below the {least:.6g} that the {res.calibration} "
            f"calibration gives at eps={part.eps:g}, delta={part.delta:g}, n={res.n}"
        )
    if not part.mechanism.startswith(f"gaussian ({res.calibration}"):
        raise _Refused(
            f"a noise part named {part.mechanism!r} for calibration {res.calibration!r}"
        )
    if res.sigma is None or not _close(res.sigma, part.sigma, 1e-12):
        raise _Refused(f"sigma {res.sigma!r}, not its cost's sigma {part.sigma!r}")
    p = len(res.variables)
    tau_text = "tau" in part.released
    if (res.estimator == "tau") != tau_text:
        raise _Refused(f"estimator {res.estimator!r} for a cost that released {part.released!r}")
    diagonal = np.diag(np.asarray(res.noisy_matrix))
    constant = bool(np.allclose(diagonal, 1.0 / p, rtol=1e-12, atol=0.0))
    if res.estimator == "tau" and not constant:
        raise _Refused("estimator 'tau' with a diagonal other than the constant 1 / p")
    if res.estimator == "kendall" and constant and p > 1:
        raise _Refused("estimator 'kendall' with the noise-free diagonal 1 / p of a tau release")
    if res.estimator == "tau" and res.scales is not None:
        raise _Refused("estimator 'tau' with private scales")
    forecast = res.forecast
    if forecast is not None and (forecast.n != res.n or forecast.p != p):
        raise _Refused(
            f"a forecast for n={forecast.n}, p={forecast.p}, not the release's n={res.n}, p={p}"
        )


def _check_result(value: Any) -> None:
    """Check every directions release inside a decoded result, and every cost."""
    if isinstance(value, DirectionsResult):
        _check_directions(value)
        _check_mechanism(value)
    if isinstance(value, ScreeResult | ScoreResult):
        _check_along(value)
    if isinstance(value, PrivacyCost):
        _check_cost(value)
        return
    if isinstance(value, tuple | list):
        for item in value:
            _check_result(item)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _check_result(getattr(value, f.name))


def _decode_document(document: Mapping[str, Any], key: str, name: str) -> Any:
    try:
        return _decode(document.get(key))
    except _Refused as exc:
        raise ValueError(
            f"{name!r} is damaged or was not written by dppca: its {key!r} holds {exc}; "
            "a release file is refused unless every value is what a release holds."
        ) from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ValueError(f"{name!r} is damaged or was not written by dppca ({exc}).") from None


def _encode_float(x: float) -> Any:
    return x if math.isfinite(x) else {"$float": repr(x)}


def _encode(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return _encode_float(float(value))
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"cannot save {where}: an array of dtype {value.dtype}.")
        flat = value.ravel().tolist()
        if value.dtype.kind == "f":
            flat = [_encode_float(x) for x in flat]
        return {"$array": flat, "dtype": value.dtype.str.lstrip("<>="), "shape": value.shape}
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v, where) for v in value]}
    if isinstance(value, list):
        return [_encode(v, where) for v in value]
    if isinstance(value, Mapping):
        return {"$map": [[_encode(k, where), _encode(v, where)] for k, v in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        if cls not in _TYPE_NAMES:
            raise TypeError(f"cannot save {where}: {cls.__name__} is not a release type.")
        return {
            "$dataclass": _TYPE_NAMES[cls],
            "fields": {
                f.name: _encode(getattr(value, f.name), f"{where}.{f.name}")
                for f in dataclasses.fields(value)
            },
        }
    raise TypeError(f"cannot save {where}: values of type {type(value).__name__}.")
