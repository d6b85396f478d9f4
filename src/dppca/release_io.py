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
post-processing: it costs nothing when the release was paid from the same
data's budget. A file is data, never code: the types it may name are a fixed
list and every value is checked (real, finite, shapes that agree,
orthonormal directions, valid costs). Its facts are checked against the
mechanism it names, not believed: a directions release's sensitivity must be
its rule's at its n, its sigma what the package's own calibration gives at
its (eps, delta) or more, the result's sigma its cost's, its estimator a
known one whose matrix has that estimator's diagonal; every noise part must
give the (eps, delta) it claims and every composed cost at least its parts'
tight total; the stated ``cost``, ``new_cost`` and ``reuses`` must be the
result's. A file larger than :data:`MAX_FILE_BYTES`, nested deeper than
:data:`MAX_NESTING`, with a key or field no release has, or with a
``schema_version`` that is not a positive integer is refused before its
values are read. Reuse on a table (``data=``) needs the file's fingerprint.
A budget records the content hash
(:func:`release_hash`) of each release saved with ``budget=``; a file read
back with ``load_release(..., budget=)`` (the command line's ``--directions
FILE`` does the same) is free only if that budget holds its hash, and is
otherwise charged at its stated cost as an unrecorded release, with every
earlier release it holds whole that the budget does not (the directions a
scree or score reused), or refused when that does not fit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

from ._release_codec import _check_result, _decode_document, _encode, _Refused
from ._release_document import (
    check_release_matches,
    check_stated_costs,
    data_fingerprint,
    embedded,
    own_cost,
    read_document,
)
from ._version import __version__
from .core.reading import write_text_atomically
from .core.warnings import warn_privacy
from .privacy.cost import compose
from .privacy.fingerprint import content_hash
from .releases.directions.result import DirectionsResult
from .releases.loading.result import LoadingResult
from .releases.pca.result import PCAResult
from .releases.score.result import ScoreResult
from .releases.scree.result import ScreeResult

__all__ = [
    "FORMAT",
    "MAX_FILE_BYTES",
    "MAX_NESTING",
    "SCHEMA_VERSION",
    "account_reuse",
    "load_release",
    "release_hash",
    "release_info",
    "release_text",
    "save_release",
]

#: Value of the ``format`` key of every release file.
FORMAT = "dppca-release"
#: Version of the file layout; a reader refuses files from a newer schema.
SCHEMA_VERSION = 1

_KINDS: dict[
    str, type[DirectionsResult | LoadingResult | ScreeResult | ScoreResult | PCAResult]
] = {
    "DirectionsResult": DirectionsResult,
    "LoadingResult": LoadingResult,
    "ScreeResult": ScreeResult,
    "ScoreResult": ScoreResult,
    "PCAResult": PCAResult,
}


# --------------------------------------------------------------------------- content hash


def release_hash(
    result: DirectionsResult | LoadingResult | ScreeResult | ScoreResult | PCAResult,
) -> str:
    """The SHA-256 of a release's canonical released values (as a release file holds them).

    The privacy ledger records it with each release saved to a file, so that
    a file read back is reused at no new cost only when the ledger holds its
    hash for the same dataset (see :func:`load_release`). Non-private parts
    are left out, as in a file.
    """
    return content_hash(_encode(_strip_nonprivate(result), type(result).__name__))


# --------------------------------------------------------------------------- privacy checks


def _nonprivate_fields(result: Any) -> list[str]:
    """Fields of ``result`` that hold something computed without noise."""
    if isinstance(result, PCAResult):  # a fit: its own comparison and its parts'
        return list(result.nonprivate_parts())
    found = []
    for f in dataclasses.fields(result):
        if f.name.startswith("nonprivate") and getattr(result, f.name) is not None:
            found.append(f.name)
    return found


def _strip_nonprivate(result: Any) -> Any:
    if isinstance(result, PCAResult):
        return result.without_nonprivate() if result.nonprivate_parts() else result
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
    result: DirectionsResult | LoadingResult | ScreeResult | ScoreResult | PCAResult,
    path: str | os.PathLike[str],
    *,
    data: Any = None,
    columns: Any = None,
    drop_nonprivate: bool = False,
    reused_directions: bool = False,
    budget: Any = None,
) -> Path:
    """Write a private result to one JSON release file.

    Parameters
    ----------
    result : DirectionsResult, LoadingResult, ScreeResult, ScoreResult or PCAResult
        A private result.
    path : str or path-like
        Target file (``.json`` by convention). Written atomically: a
        temporary file beside it is moved into place once complete.
    data : array-like or DataFrame, optional
        The numeric data the result was computed from, exactly as analysed;
        if given, the file records its :func:`~dppca.privacy.ledger.fingerprint` so that a
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
    budget : Accountant, optional
        The budget that paid for ``result`` (its latest spend): the release's
        :func:`release_hash` (and, in a ledger, the file's text) is recorded
        with that charge, so that :func:`load_release` with the same budget
        later reuses the file at no new cost.

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
    text = release_text(
        result,
        data=data,
        columns=columns,
        drop_nonprivate=drop_nonprivate,
        reused_directions=reused_directions,
    )
    if budget is not None:
        text = _bind(text, budget)
        budget.record(release_hash(result), payload=text)
    return write_text_atomically(path, text)


# --------------------------------------------------------------------------- ledger tags

#: The field of a release file that binds it to the ledger that paid for it.
TAG_FIELD = "ledger_tag"


def _canonical(document: dict[str, Any]) -> bytes:
    """The document without its tag, as one canonical JSON text (what the tag covers)."""
    body = {k: v for k, v in document.items() if k != TAG_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _ledger_of(budget: Any) -> Any:
    """The :class:`~dppca.privacy.ledger.Ledger` behind a budget, or None."""
    ledger = getattr(getattr(budget, "store", None), "ledger", None)
    return ledger if hasattr(ledger, "_binding") else None


def _bind(text: str, budget: Any) -> str:
    """``text`` with the paying ledger's tag, an HMAC-SHA256 of the rest of the file."""
    ledger = _ledger_of(budget)
    if ledger is None:
        return text
    ledger_id, key = ledger._binding(create=True)
    document = json.loads(text)
    tag = hmac.new(key, _canonical(document), hashlib.sha256).hexdigest()
    document[TAG_FIELD] = {"ledger": ledger_id, "hmac_sha256": tag}
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def check_tag(path: str | os.PathLike[str], budget: Any) -> bool:
    """Whether ``budget``'s ledger tagged the release file; refuse a forged file naming it.

    Raises ValueError for a file that names the ledger but whose tag does not
    match its contents (see :func:`load_release`).
    """
    return _check_tag(_read_document(path), budget, str(path))


def _check_tag(document: dict[str, Any], budget: Any, source: str) -> bool:
    """Whether this budget's ledger tagged the file; refuse one it did not tag but is named.

    A file without a tag, or tagged by another ledger, passes (False): it is
    charged at its stated cost (:func:`account_reuse`), with a warning that the
    cost is taken on trust.
    """
    ledger = _ledger_of(budget)
    claim = document.get(TAG_FIELD)
    if ledger is None or claim is None:
        return False
    if (
        not isinstance(claim, dict)
        or set(claim) != {"ledger", "hmac_sha256"}
        or not all(isinstance(v, str) for v in claim.values())
    ):
        raise ValueError(f"{source!r} has a damaged {TAG_FIELD}; the file is refused.")
    binding = ledger._binding(create=False)
    if binding is None or claim["ledger"] != binding[0]:
        return False  # another ledger's file: this one cannot check its tag
    expected = hmac.new(binding[1], _canonical(document), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, claim["hmac_sha256"]):
        raise ValueError(
            f"{source!r} names this ledger but is not the release this ledger paid for: "
            "its tag does not match its contents (a cost, n, fingerprint or value was "
            "changed after it was saved). The file is refused and nothing was charged; "
            "use the file as it was saved."
        )
    return True


def release_text(
    result: DirectionsResult | LoadingResult | ScreeResult | ScoreResult | PCAResult,
    *,
    data: Any = None,
    columns: Any = None,
    drop_nonprivate: bool = False,
    reused_directions: bool = False,
) -> str:
    """The JSON text of :func:`save_release` (same parameters), without writing a file.

    The app stores it with a release's ledger charge
    (:meth:`dppca.privacy.ledger.Ledger.charge` ``payload=``) to show a paid release
    again after a reload.
    """
    kind = type(result).__name__
    if kind not in _KINDS or not isinstance(result, _KINDS[kind]):
        raise TypeError(
            "result must be a DirectionsResult, LoadingResult, ScreeResult, ScoreResult or "
            "PCAResult; "
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
    fingerprint = None if data is None else data_fingerprint(data, columns)
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
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def _version() -> str:
    return __version__


#: Largest release file read (bytes): a p x p matrix at p = 5000 takes about
#: 0.5 GB of JSON, so a file beyond 1 GiB is no release of a table dppca can fit.
MAX_FILE_BYTES = 1 << 30
#: Deepest nesting of lists and objects a release file may have; files written
#: by dppca nest about 15 deep (a score along reused directions with its costs).
MAX_NESTING = 64


def _read_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    return read_document(
        path,
        marker=FORMAT,
        schema=SCHEMA_VERSION,
        kinds=_KINDS,
        max_bytes=MAX_FILE_BYTES,
        max_nesting=MAX_NESTING,
    )


def release_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The facts recorded beside the result: kind, n, variables, fingerprint and costs.

    Returns a dict with keys ``kind``, ``schema_version``, ``dppca_version``,
    ``n``, ``variables`` (tuple), ``data_fingerprint`` (str or None),
    ``cost``, ``new_cost`` (PrivacyCost or None) and ``reuses`` (list of
    PrivacyCost).
    """
    document = _read_document(path)
    name = str(path)
    return {
        "kind": document["kind"],
        "schema_version": document["schema_version"],
        "dppca_version": document.get("dppca_version"),
        "n": int(document["n"]),
        "variables": tuple(document["variables"]),
        "data_fingerprint": document.get("data_fingerprint"),
        "cost": _decode_document(document, "cost", name),
        "new_cost": _decode_document(document, "new_cost", name),
        "reuses": list(_decode_document(document, "reuses", name) or []),
    }


def load_release(
    path: str | os.PathLike[str],
    *,
    kind: type | None = None,
    data: Any = None,
    columns: Any = None,
    budget: Any = None,
) -> DirectionsResult | LoadingResult | ScreeResult | ScoreResult | PCAResult:
    """Read a release file written by :func:`save_release`, checking every value.

    Parameters
    ----------
    path : str or path-like
        The release file.
    kind : type, optional
        The result class expected (for example ``DirectionsResult``); another
        kind raises ValueError.
    data : array-like or DataFrame, optional
        If given, the table the release is about to be used with: the file
        must record a ``data_fingerprint``, and it, n and the column names
        must match the table's.
    columns : sequence of str, optional
        Column names of ``data``.
    budget : Accountant, optional
        The budget of the data the release is about to be used with. If it
        holds the release (its :func:`release_hash`, recorded when a release
        paid from it was saved), the reuse is free; otherwise the release is
        charged to it now at the cost the file states, as an unaccounted
        release, and refused (``BudgetExceededError``) if that does not fit.

    Returns
    -------
    DirectionsResult, LoadingResult, ScreeResult, ScoreResult or PCAResult
        Equal, field by field, to the saved result.

    Raises
    ------
    ValueError
        A file that is not a release, of another kind or for other data, or
        with a value no release holds: a type outside the fixed list of
        release types, an array that is not real and finite or whose shape
        disagrees with the variables, directions that are not orthonormal
        (to 1e-8), an invalid cost, or a fact its mechanism does not give
        (the message names the field); a file above :data:`MAX_FILE_BYTES`
        or nested deeper than :data:`MAX_NESTING`.
    BudgetExceededError
        With ``budget``: the release is not in it and its cost does not fit.

    Notes
    -----
    Privacy: loading and drawing are post-processing of the released values;
    they cost nothing when the release was paid for from the same data.
    A file is data, never code: the types it may name are a fixed list, and
    no module is imported because of its contents. A file the budget does
    not know (made with ``--no-ledger``, paid from another ledger, or
    forged with a made-up cost) is charged at its stated cost when a budget
    is given: its values may carry that loss about these data, and the
    stated cost is the best the file can say. Without ``budget`` nothing is
    checked or charged; the caller accounts for the release.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dppca import dp_scree, save_release
    >>> from dppca.datasets import load_iris
    >>> res = dp_scree(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, random_state=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     again = load_release(save_release(res, pathlib.Path(tmp) / "scree.json"))
    >>> again
    ScreeResult(p=4, k=4, n=150, methods=('clipped',), eps=1, delta=1e-06)
    >>> bool((again.values == res.values).all())
    True
    """
    document = _read_document(path)
    cls = _KINDS[document["kind"]]
    if kind is not None and cls is not kind:
        raise ValueError(
            f"{str(path)!r} holds a {document['kind']}, not a {getattr(kind, '__name__', kind)}."
        )
    result = _decode_document(document, "result", str(path))
    if not isinstance(result, cls):
        raise ValueError(f"{str(path)!r} is damaged: its result is not a {cls.__name__}.")
    try:
        _check_result(result)
        if result.cost is None:
            raise _Refused("a release without its cost")
        if int(document["n"]) != result.n or tuple(document["variables"]) != result.variables:
            raise _Refused("facts (n, variables) that disagree with its result")
        check_stated_costs(document, result, str(path))
    except _Refused as exc:
        raise ValueError(
            f"{str(path)!r} is damaged or was not written by dppca: it holds {exc}; a "
            "release file is refused unless every value is what a release holds."
        ) from None
    if data is not None:
        check_release_matches(document, data, columns, str(path))
    if budget is not None:
        verified = _check_tag(document, budget, str(path))
        charged = account_reuse(result, budget, source=str(path))
        if charged and not verified and _ledger_of(budget) is not None:
            warn_privacy(
                f"{str(path)!r} carries no tag of this ledger, so its stated cost "
                f"{result.cost} was charged as the file states it, unverified (a file "
                "saved from this ledger is tagged, and its tag is checked)."
            )
    return result


def account_reuse(
    result: DirectionsResult | LoadingResult | ScreeResult | ScoreResult | PCAResult,
    budget: Any,
    *,
    source: str = "the file",
) -> bool:
    """Charge a release read back from a file for everything ``budget`` does not hold.

    A file the budget holds (its :func:`release_hash` was recorded when a
    release paid from it was saved) is free, with every release inside it.
    Otherwise the release's own cost is charged, and so is each earlier
    release it holds whole (the directions a scree, score or loading was
    computed along) unless the budget holds that one's hash: a scree file
    that reused an unpaid directions release is charged for both. All of it
    is checked against the budget at once before anything is spent, so a
    refusal spends nothing; then each release is charged on its own, with
    its hash recorded.

    Returns True if anything was charged, False if the reuse was free. See
    :func:`load_release` (``budget=``), which calls it; the command line's
    ``--directions FILE`` does the same.

    Raises
    ------
    BudgetExceededError
        The release is not held and its stated costs do not fit.
    """
    content = release_hash(result)
    if budget.holds(content):
        return False
    charges: list[tuple[Any, str]] = []  # (cost, content hash), earlier releases first
    for earlier in embedded(result):
        earlier_hash = release_hash(earlier)
        if not budget.holds(earlier_hash) and all(h != earlier_hash for _, h in charges):
            charges.append((earlier.cost, earlier_hash))
    own = own_cost(result)
    if own is not None:
        charges.append((own, content))
    if not charges:
        return False
    from .core.exceptions import BudgetExceededError

    costs = [cost for cost, _ in charges]
    try:
        # All of it is checked at once, so a refusal spends nothing.
        budget.check(costs[0] if len(costs) == 1 else compose(costs))
        for cost, held in charges:  # one charge per release, each with its hash
            budget.spend(cost)
            budget.record(held, payload=None)
    except BudgetExceededError as exc:
        raise BudgetExceededError(
            f"the release in {source!r} is not in this budget's records (made "
            "without a ledger, paid from another one, or forged), so reusing it is "
            f"charged at its stated cost, and {exc}"
        ) from None
    return True
