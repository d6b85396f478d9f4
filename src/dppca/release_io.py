"""Private releases as files: save a result, load it back, draw from it later.

A release file is one JSON document with a versioned schema::

    {"format": "dppca-release", "schema_version": 1, "kind": "DirectionsResult",
     "dppca_version": "...", "n": 5000, "variables": [...],
     "data_fingerprint": "sha256:..." or null,
     "cost": {...}, "new_cost": {...} or null, "reuses": [...],
     "result": {...}}

``result`` holds the fields of the result object, with type tags for what JSON
lacks (``{"$array": ...}``, ``{"$tuple": ...}``, ``{"$map": ...}``,
``{"$float": "inf"}``, ``{"$dataclass": ...}``). Floats are written with
Python's shortest round-trip representation, so a loaded release equals the
saved one bit for bit.

Why JSON rather than NPZ: a release is small (a p x p matrix, a few vectors,
the bin probabilities), JSON is plain text that a reviewer, a journal or a
script in another language can read and check without numpy and without
unpickling anything (NPZ holding objects needs pickle, which runs code on
load), and a diff of two releases is readable.

Privacy: a file holds only what a result released (its noisy values and
their post-processing), the cost, the public facts n and column names, and
optionally a fingerprint of the data. It never holds a seed or a generator
(results do not keep them). A result with non-private parts (a
``compare=True`` comparison) is refused unless ``drop_nonprivate=True``,
which leaves those parts out. Loading a file and drawing from it is
post-processing: it costs nothing.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ._io import write_text_atomically
from ._lazy import pandas as pd
from ._ledger_base import fingerprint as _dataset_fingerprint
from ._version import __version__
from .directions import DirectionsResult
from .loading import LoadingResult
from .score import ScoreResult
from .scree import ScreeResult

__all__ = [
    "FORMAT",
    "SCHEMA_VERSION",
    "load_release",
    "release_info",
    "save_release",
]

#: Value of the ``format`` key of every release file.
FORMAT = "dppca-release"
#: Version of the file layout; a reader refuses files from a newer schema.
SCHEMA_VERSION = 1

_KINDS: dict[str, type[DirectionsResult | LoadingResult | ScreeResult | ScoreResult]] = {
    "DirectionsResult": DirectionsResult,
    "LoadingResult": LoadingResult,
    "ScreeResult": ScreeResult,
    "ScoreResult": ScoreResult,
}
# Fields renamed since files were first written: old name -> current name, per
# type. Files keep loading; new files use the current names. (Values written
# under old spellings, such as ScreeResult's directions_source, are accepted
# by the result classes themselves; a stored "private" flag is ignored, the
# results compute it.)
_RENAMED_FIELDS: dict[str, dict[str, str]] = {
    "dppca.score:ScoreResult": {"directions_result": "directions_release"},
}


def _data_fingerprint(data: Any, columns: Any) -> str:
    """The file's ``data_fingerprint``: the ledger's :func:`~dppca.ledger.fingerprint`."""
    return "sha256:" + _dataset_fingerprint(data, columns)


# --------------------------------------------------------------------------- encoding


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
        if not cls.__module__.startswith("dppca."):
            raise TypeError(f"cannot save {where}: {cls.__name__} is not a dppca type.")
        return {
            "$dataclass": f"{cls.__module__}:{cls.__qualname__}",
            "fields": {
                f.name: _encode(getattr(value, f.name), f"{where}.{f.name}")
                for f in dataclasses.fields(value)
            },
        }
    raise TypeError(f"cannot save {where}: values of type {type(value).__name__}.")


def _dppca_class(name: str) -> type:
    module, _, qualname = name.partition(":")
    if not (module == "dppca" or module.startswith("dppca.")) or not qualname:
        raise ValueError(f"release file names a type outside dppca: {name!r}.")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        raise ValueError(f"release file names an unknown dppca type: {name!r}.")
    return obj


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$float" in value:
        return float(value["$float"])
    if "$array" in value:
        data = [float(x["$float"]) if isinstance(x, dict) else x for x in value["$array"]]
        return np.array(data, dtype=np.dtype(value["dtype"])).reshape(value["shape"])
    if "$tuple" in value:
        return tuple(_decode(v) for v in value["$tuple"])
    if "$map" in value:
        return MappingProxyType({_decode(k): _decode(v) for k, v in value["$map"]})
    if "$dataclass" in value:
        cls = _dppca_class(value["$dataclass"])
        known = {f.name for f in dataclasses.fields(cls) if f.init}
        renamed = _RENAMED_FIELDS.get(value["$dataclass"], {})
        stored = {renamed.get(k, k): v for k, v in value["fields"].items()}
        fields = {k: _decode(v) for k, v in stored.items() if k in known}
        return cls(**fields)
    raise ValueError(f"release file holds an unknown value: {sorted(value)!r}.")


# --------------------------------------------------------------------------- privacy checks


def _nonprivate_fields(result: Any) -> list[str]:
    """Fields of ``result`` that hold something computed without noise."""
    found = []
    for f in dataclasses.fields(result):
        if f.name.startswith("nonprivate") and getattr(result, f.name) is not None:
            found.append(f.name)
    return found


def _strip_nonprivate(result: Any) -> Any:
    changes = {name: None for name in _nonprivate_fields(result)}
    return dataclasses.replace(result, **changes) if changes else result


def _reused(result: Any, reused_directions: bool) -> DirectionsResult | None:
    """The earlier private directions release a result builds on, if any."""
    if isinstance(result, ScreeResult | ScoreResult):
        return result.directions_release if result.directions_source == "private release" else None
    if isinstance(result, LoadingResult) and reused_directions:
        return result.directions
    return None


def _result_facts(result: Any) -> tuple[int, tuple[str, ...]]:
    return int(result.n), tuple(result.variables)


# --------------------------------------------------------------------------- public API


def save_release(
    result: DirectionsResult | LoadingResult | ScreeResult | ScoreResult,
    path: str | os.PathLike[str],
    *,
    data: Any = None,
    columns: Any = None,
    drop_nonprivate: bool = False,
    reused_directions: bool = False,
) -> Path:
    """Write a private result to one JSON release file.

    Parameters
    ----------
    result : DirectionsResult, LoadingResult, ScreeResult or ScoreResult
        A private result.
    path : str or path-like
        Target file (``.json`` by convention). Written atomically: a
        temporary file beside it is moved into place once complete.
    data : array-like or DataFrame, optional
        The numeric data the result was computed from, exactly as analysed;
        if given, the file records its :func:`~dppca.ledger.fingerprint` so that a
        later reuse can check it is applied to the same table. Leave it out
        for a file you publish (the fingerprint is not private).
    columns : sequence of str, optional
        Column names of ``data`` (default: those of a DataFrame).
    drop_nonprivate : bool, default=False
        A result with non-private parts (``compare=True``) is refused unless
        this is True; then those parts are left out of the file. Group labels
        read from the data (a score result made without ``group_labels``) are
        part of the result and are written; ``result.private`` is False for
        such a result, and the file then holds the label set of the data.
    reused_directions : bool, default=False
        For a ``LoadingResult``: its directions are an earlier release
        reused at no new cost (recorded so that ``new_cost`` is empty).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    TypeError
        For an unsupported object.
    ValueError
        For a non-private result, or one with non-private parts and
        ``drop_nonprivate=False``.

    Notes
    -----
    Privacy: the file holds the released values and their post-processing,
    the cost (``cost``: what the values carry as the result records it;
    ``new_cost``: what the call that made them spent, without an earlier
    release it reused; ``reuses``: the costs of such earlier releases), n
    and the column names (public), and nothing else computed from the data
    apart from the optional fingerprint. Results never hold a seed, so none
    is written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dppca import dp_pc_dir
    >>> from dppca.datasets import load_wine
    >>> res = dp_pc_dir(load_wine(), 2, eps=0.5, delta=1e-5, random_state=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = save_release(res, pathlib.Path(tmp) / "dirs.json")
    ...     again = load_release(path)
    >>> bool((again.directions == res.directions).all())
    True
    """
    kind = type(result).__name__
    if kind not in _KINDS or not isinstance(result, _KINDS[kind]):
        raise TypeError(
            "result must be a DirectionsResult, LoadingResult, ScreeResult or ScoreResult; "
            f"got {type(result).__name__}."
        )
    if not isinstance(drop_nonprivate, bool):
        raise TypeError(f"drop_nonprivate must be True or False; got {drop_nonprivate!r}.")
    if result.cost is None:
        raise ValueError(
            f"result is not private ({kind} from a non-private function); only private "
            "releases are saved."
        )
    extra = _nonprivate_fields(result)
    if extra:
        if not drop_nonprivate:
            raise ValueError(
                f"result holds non-private parts ({', '.join(extra)}, from compare=True) "
                "that must not be published; pass drop_nonprivate=True to leave them out "
                "of the file."
            )
        result = _strip_nonprivate(result)
    n, variables = _result_facts(result)
    fingerprint = None if data is None else _data_fingerprint(data, columns)
    reused = _reused(result, reused_directions)
    new_cost = None if isinstance(result, LoadingResult) and reused is not None else result.cost
    document = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "dppca_version": _version(),
        "n": n,
        "variables": list(variables),
        "data_fingerprint": fingerprint,
        "cost": _encode(result.cost, "cost"),
        "new_cost": _encode(new_cost, "new_cost"),
        "reuses": [_encode(reused.cost, "reuses")] if reused is not None else [],
        "result": _encode(result, kind),
    }
    text = json.dumps(document, indent=1, allow_nan=False)
    return write_text_atomically(path, text + "\n")


def _version() -> str:
    return __version__


def _read_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    source = Path(path)
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{str(source)!r} is not a dppca release file: {exc.msg}.") from None
    except UnicodeDecodeError:
        raise ValueError(f"{str(source)!r} is not a dppca release file (not text).") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{str(source)!r} is not a dppca release file (no format marker).")
    version = document.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(
            f"{str(source)!r} uses release schema {version!r}; this dppca reads up to "
            f"{SCHEMA_VERSION}. Upgrade dppca to read it."
        )
    if document.get("kind") not in _KINDS:
        raise ValueError(
            f"{str(source)!r} holds an unknown release kind {document.get('kind')!r}."
        )
    return document


def release_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The facts recorded beside the result: kind, n, variables, fingerprint and costs.

    Returns a dict with keys ``kind``, ``schema_version``, ``dppca_version``,
    ``n``, ``variables`` (tuple), ``data_fingerprint`` (str or None),
    ``cost``, ``new_cost`` (PrivacyCost or None) and ``reuses`` (list of
    PrivacyCost).
    """
    document = _read_document(path)
    return {
        "kind": document["kind"],
        "schema_version": document["schema_version"],
        "dppca_version": document.get("dppca_version"),
        "n": int(document["n"]),
        "variables": tuple(document["variables"]),
        "data_fingerprint": document.get("data_fingerprint"),
        "cost": _decode(document["cost"]),
        "new_cost": _decode(document.get("new_cost")),
        "reuses": [_decode(c) for c in document.get("reuses", [])],
    }


def load_release(
    path: str | os.PathLike[str],
    *,
    kind: type | None = None,
    data: Any = None,
    columns: Any = None,
) -> DirectionsResult | LoadingResult | ScreeResult | ScoreResult:
    """Read a release file written by :func:`save_release`.

    Parameters
    ----------
    path : str or path-like
        The release file.
    kind : type, optional
        The result class expected (for example ``DirectionsResult``); another
        kind raises ValueError.
    data : array-like or DataFrame, optional
        If given, the table the release is about to be used with: its
        fingerprint (when the file has one), else its n and column names,
        must match the file's.
    columns : sequence of str, optional
        Column names of ``data``.

    Returns
    -------
    DirectionsResult, LoadingResult, ScreeResult or ScoreResult
        Equal, field by field, to the saved result.

    Notes
    -----
    Privacy: loading and drawing are post-processing of the released values;
    they cost nothing. Reusing a release on other data is refused, since its
    cost belongs to the data it was made from.
    """
    document = _read_document(path)
    cls = _KINDS[document["kind"]]
    if kind is not None and cls is not kind:
        raise ValueError(
            f"{str(path)!r} holds a {document['kind']}, not a {getattr(kind, '__name__', kind)}."
        )
    if data is not None:
        check_release_matches(document, data, columns, str(path))
    result = _decode(document["result"])
    if not isinstance(result, cls):
        raise ValueError(f"{str(path)!r} is damaged: its result is not a {cls.__name__}.")
    return result


def check_release_matches(document: Mapping[str, Any], data: Any, columns: Any, name: str) -> None:
    """Raise ValueError unless ``data`` is the table the release was made from."""
    if isinstance(data, pd.DataFrame):
        if columns is None:
            columns = [str(c) for c in data.columns]
    array = np.asarray(data, dtype=np.float64)
    if columns is None:
        columns = [f"V{j + 1}" for j in range(array.shape[1])]
    recorded = document.get("data_fingerprint")
    if recorded is not None:
        if _data_fingerprint(array, columns) != recorded:
            raise ValueError(
                f"the release in {name!r} was made from other data (its fingerprint differs); "
                "reuse a release only with the exact table, columns and scales it came from."
            )
        return
    if int(document["n"]) != array.shape[0] or (
        document["variables"] and list(document["variables"]) != [str(c) for c in columns]
    ):
        raise ValueError(
            f"the release in {name!r} was made from a table with n={document['n']} and "
            "other columns; reuse it only with the table it came from."
        )
