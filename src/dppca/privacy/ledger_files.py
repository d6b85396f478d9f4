"""The ledger's memory of table files already read: a file's bytes name its key.

Finding a table's budget needs its :func:`~dppca.privacy.fingerprint.fingerprint`,
which is computed from the table as pandas parses it: a different parse could
give another key and split the table's budget. Parsing is most of the cost of a
command that only shows a budget (``dppca ledger DATA.csv``: importing pandas
and reading the file, against a few milliseconds of ledger queries). So the
ledger keeps, for every table file it has keyed, the fingerprint under a
digest (:func:`file_digest`) of

- the file's bytes,
- how they were parsed (the reading options, such as ``sep`` and ``decimal``),
- and which code parsed them (:func:`parser_identity`: this dppca's version
  and the files of the modules that read and key a table, and the installed
  pandas, numpy and pyarrow).

The same bytes parsed the same way by the same code give the same table and so
the same fingerprint; a file read again with nothing of that changed is keyed
from the ledger without pandas. Anything changed (one byte of the file, an
option, an upgraded pandas, an edited dppca module) gives another digest, and
the file is parsed and keyed as before. An entry is written only when the
file's size and modification time are the same before and after its parse, so
an entry never pairs one version's bytes with another version's table.

Privacy: the ledger is the data holder's own file and already holds every
table's fingerprint, a hash of its rows. A file digest adds a hash of the
file's bytes: whoever holds the ledger and can guess a whole file can confirm
the guess, which the fingerprint already allows for a guess of its rows (a
guess of the bytes is a guess of the rows, plus their layout on disk). Beside
the digest an entry holds the fingerprint, the row count ``n`` (public by the
privacy contract), whether the table is a bundled public one and the keys an
earlier dppca gave it: no value of the table, and nothing here reaches a
release.

Integrity: each entry is sealed like the ledger's other records (a digest over
its fields). An entry whose seal does not match is ignored and the file is
parsed again, so a damaged entry costs time, never a wrong key from damage.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__: list[str] = []

#: At most this many file entries are kept (the oldest are dropped first).
_KEPT = 1000

# The modules whose code decides how a table file is parsed and keyed.
_DPPCA_MODULES = (
    "_version.py",
    "core/reading.py",
    "core/tables.py",
    "core/data_checks.py",
    "privacy/fingerprint.py",
    "datasets/__init__.py",
)
_LIBRARIES = ("pandas", "numpy", "pyarrow")

_identity: str | None = None


def _stat(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def parser_identity() -> str:
    """A text that changes whenever the code that parses and keys a table may have changed.

    This dppca's version and the size and modification time of its modules
    that read and key a table; for pandas, numpy and pyarrow, their installed
    version (the name of their ``.dist-info`` folder) and the size and time of
    their ``__init__.py``. Found without importing the libraries (a few
    ``stat`` calls and one folder listing each), and once per process.
    """
    global _identity
    if _identity is not None:
        return _identity
    import importlib.util

    from .._version import __version__

    here = Path(__file__).resolve().parents[1]
    parts: list[Any] = ["dppca", __version__]
    for module in _DPPCA_MODULES:
        try:
            parts.append([module, *_stat(here / module)])
        except OSError:
            parts.append([module, None])
    for name in _LIBRARIES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or spec.origin is None:
            parts.append([name, None])
            continue
        origin = Path(spec.origin)
        try:
            site = origin.parent.parent
            infos = sorted(
                e for e in os.listdir(site) if e.startswith(f"{name}-") and e.endswith("-info")
            )
            parts.append([name, str(origin), *_stat(origin), infos])
        except OSError:
            parts.append([name, str(origin), None])
    _identity = json.dumps(parts, separators=(",", ":"))
    return _identity


def file_digest(path: str | os.PathLike[str], options: Mapping[str, Any] | None = None) -> str:
    """SHA-256 naming a table file as parsed: its bytes, the options and the parser.

    ``options`` are the reading options (keys and values as JSON). Raises
    ``OSError`` if the file cannot be read.
    """
    h = hashlib.sha256(b"dppca-table-file-v1\0")
    h.update(parser_identity().encode("utf-8") + b"\0")
    h.update(json.dumps(dict(options or {}), sort_keys=True).encode("utf-8") + b"\0")
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_state(path: str | os.PathLike[str]) -> tuple[int, int, int] | None:
    """(inode, size, modification time) of a file, or None if it cannot be read."""
    try:
        return _stat(Path(path))
    except OSError:
        return None
