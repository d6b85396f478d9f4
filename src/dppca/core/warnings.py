"""Issue warnings attributed to the user's line, not to dppca internals."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import FrameType

from .exceptions import DataWarning, PrivacyWarning

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])  # the whole dppca package


def _user_stacklevel() -> int:
    """Stack level of the first frame outside the dppca package (for warnings.warn)."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None:
        filename = str(Path(frame.f_code.co_filename).resolve())
        if not filename.startswith(_PACKAGE_DIR):
            return level
        frame = frame.f_back
        level += 1
    return level  # pragma: no cover - called only from inside the package


def warn_privacy(message: str) -> None:
    """Emit a ``PrivacyWarning`` pointing at the caller's own code."""
    warnings.warn(message, PrivacyWarning, stacklevel=_user_stacklevel())


def warn_data(message: str) -> None:
    """Emit a ``DataWarning`` (a note about the table) pointing at the caller's own code."""
    warnings.warn(message, DataWarning, stacklevel=_user_stacklevel())
