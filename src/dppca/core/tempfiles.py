"""Temporary files of the atomic writes, and the clean-up of those a killed process left.

Every file dppca writes (tables, figures, release files, reports) is written
to a hidden temporary file beside its target and moved into place once
complete, so that a reader never sees half a file. A process stopped by
``kill -9`` (or a power cut) cannot remove its temporary file; the next
write to the same target removes such leftovers: only files whose names
follow this module's pattern for that target (``.NAME.dppca-XXXXXXXX.tmp``,
or the ``.NAME.XXXXXXXX<suffix>`` of earlier versions) and that were last
modified more than :data:`STALE_AFTER` seconds ago, so that a write still
running in another process is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from pathlib import Path

__all__ = ["STALE_AFTER", "new_temporary", "remove_stale_temporaries"]

#: Age in seconds after which a leftover temporary file is taken to be abandoned.
STALE_AFTER = 3600.0
# The random part of a ``tempfile.mkstemp`` name: eight of these characters.
_RANDOM = r"[a-z0-9_]{8}"


def _pattern(target: Path) -> re.Pattern[str]:
    name = re.escape(f".{target.name}.")
    suffixes = {".tmp", target.suffix} - {""}
    ends = "|".join(re.escape(s) for s in sorted(suffixes))
    return re.compile(rf"{name}(?:dppca-)?{_RANDOM}(?:{ends})")


def remove_stale_temporaries(target: str | os.PathLike[str], *, now: float | None = None) -> int:
    """Remove abandoned temporary files of writes to ``target``; return how many.

    Only files in the target's directory whose names are those of this
    module's temporary files for that target, and older than
    :data:`STALE_AFTER`, are removed; errors (a file removed meanwhile, no
    permission) are ignored.
    """
    target = Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    pattern = _pattern(target)
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) and (
                now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER
            ):
                os.unlink(entry.path)
                removed += 1
    return removed


def new_temporary(target: str | os.PathLike[str], *, suffix: str = ".tmp") -> tuple[int, str]:
    """A new temporary file beside ``target`` (after removing abandoned ones): (fd, path).

    Its name is ``.NAME.dppca-XXXXXXXX`` plus ``suffix`` (``.tmp`` or the
    target's own suffix), in the target's directory so that ``os.replace``
    is atomic.
    """
    target = Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    remove_stale_temporaries(target)
    return tempfile.mkstemp(prefix=f".{target.name}.dppca-", suffix=suffix, dir=directory)
