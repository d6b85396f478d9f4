"""Reading a release file's document: its caps, its fixed facts, its stated costs.

:func:`read_document` refuses a file before parsing when it is larger or
nested deeper than the caps :mod:`dppca.release_io` sets, then checks its
fixed facts (format, schema version, kind, n, variables, fingerprint) and
refuses any key a release file does not have. :func:`check_stated_costs`
checks that the ``cost``, ``new_cost`` and ``reuses`` a file states are
those its decoded result carries; :func:`embedded` and :func:`own_cost`
split a result into the earlier releases it holds whole and its own cost
(what reusing the file charges). :func:`check_release_matches` checks a
file against the table it is about to be reused with.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ._release_codec import _decode_document, _Refused
from .core.lazy import pandas as pd
from .privacy.fingerprint import fingerprint as dataset_fingerprint
from .releases.directions.result import DirectionsResult
from .releases.loading.result import LoadingResult
from .releases.score.result import ScoreResult
from .releases.scree.result import ScreeResult

__all__ = [
    "check_release_matches",
    "check_stated_costs",
    "data_fingerprint",
    "embedded",
    "nesting",
    "own_cost",
    "read_document",
]

_FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")
#: The keys of a release file; any other key is refused.
_KEYS = frozenset(
    {
        "format",
        "schema_version",
        "kind",
        "dppca_version",
        "n",
        "variables",
        "data_fingerprint",
        "cost",
        "new_cost",
        "reuses",
        "result",
        "ledger_tag",  # optional: the paying ledger's id and HMAC (dppca.release_io)
    }
)
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def nesting(raw: bytes, cap: int) -> int:
    """The deepest nesting of brackets and braces outside strings (stops past ``cap``)."""
    depth = deepest = 0
    for match in _TOKENS.finditer(raw):
        token = match.group()[:1]
        if token in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > cap:
                    break
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


def _refuse(source: Path, field: str, problem: str) -> ValueError:
    return ValueError(
        f"{str(source)!r} is not a valid dppca release file: its field {field!r} {problem}."
    )


def read_document(
    path: str | os.PathLike[str],
    *,
    marker: str,
    schema: int,
    kinds: Collection[str],
    max_bytes: int,
    max_nesting: int,
) -> dict[str, Any]:
    """The file's JSON, refused before parsing if too large or nested too deep, and its
    fixed facts (format, schema, kind, n, variables, fingerprint, no other keys) checked.

    ``marker`` is the ``format`` value, ``schema`` the newest schema read,
    ``kinds`` the release kinds; the caps name :mod:`dppca.release_io`'s
    ``MAX_FILE_BYTES`` and ``MAX_NESTING``.
    """
    source = Path(path)
    with source.open("rb") as fh:
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise ValueError(
            f"{str(source)!r} is larger than {max_bytes} bytes (MAX_FILE_BYTES), more "
            "than any release file holds; it is not read."
        )
    if nesting(raw, max_nesting) > max_nesting:
        raise ValueError(
            f"{str(source)!r} nests lists or objects more than {max_nesting} deep "
            "(MAX_NESTING), deeper than any release file; it is not read."
        )
    try:
        document = json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{str(source)!r} is not a dppca release file: {exc.msg}.") from None
    except UnicodeDecodeError:
        raise ValueError(f"{str(source)!r} is not a dppca release file (not text).") from None
    if not isinstance(document, dict) or document.get("format") != marker:
        raise ValueError(f"{str(source)!r} is not a dppca release file (no format marker).")
    version = document.get("schema_version")
    if type(version) is not int or version < 1:
        raise _refuse(source, "schema_version", f"must be an integer >= 1; got {version!r}")
    if version > schema:
        raise ValueError(
            f"{str(source)!r} uses release schema {version!r}; this dppca reads up to "
            f"{schema}. Upgrade dppca to read it."
        )
    unknown = sorted(set(document) - _KEYS)
    if unknown:
        raise _refuse(source, unknown[0], f"is unknown (a file holds only {sorted(_KEYS)})")
    if document.get("kind") not in kinds:
        raise ValueError(
            f"{str(source)!r} holds an unknown release kind {document.get('kind')!r}."
        )
    n = document.get("n")
    if type(n) is not int or n < 2:
        raise _refuse(source, "n", f"must be an integer >= 2; got {n!r}")
    names = document.get("variables")
    if not (isinstance(names, list) and names and all(isinstance(v, str) for v in names)):
        raise _refuse(source, "variables", "must be a non-empty list of column names")
    if len(set(names)) != len(names):
        raise _refuse(source, "variables", "names a column twice")
    fingerprint = document.get("data_fingerprint")
    if fingerprint is not None and not (
        isinstance(fingerprint, str) and _FINGERPRINT.fullmatch(fingerprint)
    ):
        raise _refuse(source, "data_fingerprint", "must be 'sha256:' and 64 hex digits, or null")
    version_text = document.get("dppca_version")
    if version_text is not None and not isinstance(version_text, str):
        raise _refuse(source, "dppca_version", "must be a string")
    if not isinstance(document.get("reuses", []), list):
        raise _refuse(source, "reuses", "must be a list of costs")
    return document


def data_fingerprint(data: Any, columns: Any) -> str:
    """The file's ``data_fingerprint``: the ledger's :func:`~dppca.privacy.ledger.fingerprint`."""
    return "sha256:" + dataset_fingerprint(data, columns)


def check_stated_costs(document: Mapping[str, Any], result: Any, name: str) -> None:
    """The file's ``cost``, ``new_cost`` and ``reuses`` are those its result implies."""
    reused = embedded(result)
    own = own_cost(result)
    stated: dict[str, Any] = {
        "cost": _decode_document(document, "cost", name),
        "new_cost": _decode_document(document, "new_cost", name),
        "reuses": list(_decode_document(document, "reuses", name) or []),
    }
    implied: dict[str, Any] = {
        "cost": result.cost,
        "new_cost": own,
        "reuses": [r.cost for r in reused],
    }
    if isinstance(result, LoadingResult):
        # A loading made with its directions in one call states them as new, one that
        # reused them states them as reused; both hold the same directions release.
        allowed: list[dict[str, Any]] = [
            {"cost": result.cost, "new_cost": result.cost, "reuses": []},
            {"cost": result.cost, "new_cost": None, "reuses": [result.cost]},
        ]
    else:
        allowed = [implied]
    if stated not in allowed:
        field = next(k for k in stated if all(stated[k] != a[k] for a in allowed))
        raise _Refused(f"a {field} that is not the one its result carries")


def embedded(result: Any) -> list[DirectionsResult]:
    """Earlier releases a result reuses and holds whole (charged on their own)."""
    if isinstance(result, ScreeResult | ScoreResult):
        release = result.directions_release
        if result.directions_source == "private release" and release is not None:
            return [release]
        return []
    if isinstance(result, LoadingResult) and isinstance(result.directions, DirectionsResult):
        return [result.directions]
    return []


def own_cost(result: Any) -> Any:
    """What the release itself cost, without the earlier releases it holds."""
    if isinstance(result, LoadingResult):
        return None  # its cost is its directions release's
    return result.cost


def check_release_matches(document: Mapping[str, Any], data: Any, columns: Any, name: str) -> None:
    """Raise ValueError unless ``data`` is the table the release was made from."""
    if isinstance(data, pd.DataFrame):
        if columns is None:
            columns = [str(c) for c in data.columns]
    array = np.asarray(data, dtype=np.float64)
    if columns is None:
        columns = [f"V{j + 1}" for j in range(array.shape[1])]
    recorded = document.get("data_fingerprint")
    if recorded is None:
        raise ValueError(
            f"the release in {name!r} has no data_fingerprint, so nothing shows it was made "
            "from these data; reuse on data needs the file saved with data= (the command "
            "line's --save-release records it). A published file without one is only read, "
            "not reused on a table."
        )
    if data_fingerprint(array, columns) != recorded:
        raise ValueError(
            f"the release in {name!r} was made from other data (its data_fingerprint "
            "differs); reuse a release only with the exact table, columns and scales it "
            "came from."
        )
    if int(document["n"]) != array.shape[0] or list(document["variables"]) != [
        str(c) for c in columns
    ]:
        raise ValueError(
            f"the release in {name!r} states n={document['n']} and variables that are not "
            "these data's rows and columns, though its data_fingerprint is theirs; the file "
            "was changed after it was written."
        )
