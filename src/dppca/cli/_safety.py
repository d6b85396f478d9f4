"""Nothing lost: output paths checked up front, temporary files always removed, clean stops.

- :func:`check_output_paths` runs before any computation: no output may be an
  input (the data file, a release read back, the ledger in use however it was
  named: ``--ledger``, ``DPPCA_LEDGER`` or the default path) or another output,
  and each output's directory must exist and be writable.
- :func:`track` records the temporary files of :func:`write_atomically
  <dppca.cli._output.write_atomically>`; they are removed when the write fails,
  when the process is stopped by SIGTERM or Ctrl+C, and at exit.
- :func:`guard` turns SIGTERM into an exception (so ``finally`` blocks run)
  for the duration of one command.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "INPUT_OPTIONS",
    "OUTPUT_OPTIONS",
    "CLIError",
    "Terminated",
    "check_output_paths",
    "guard",
    "remove_temporary_files",
    "track",
    "untrack",
]


class CLIError(Exception):
    """An expected failure: reported as one line on stderr, exit status 2."""


#: Options naming files a command writes (the names argparse gives them).
OUTPUT_OPTIONS = ("out", "table", "save_release", "report")
#: Options naming files a command reads.
INPUT_OPTIONS = ("data", "directions", "release", "ledger")

_TEMPORARY: set[str] = set()
_LOCK = threading.Lock()


class Terminated(BaseException):
    """The process received SIGTERM (a BaseException, like KeyboardInterrupt)."""


def track(path: str) -> None:
    """Remember a temporary file until :func:`untrack` (it is removed if we are stopped)."""
    with _LOCK:
        _TEMPORARY.add(os.fspath(path))


def untrack(path: str) -> None:
    """Forget a temporary file (it was moved into place or removed)."""
    with _LOCK:
        _TEMPORARY.discard(os.fspath(path))


def remove_temporary_files() -> None:
    """Remove every temporary file still tracked."""
    with _LOCK:
        paths = list(_TEMPORARY)
        _TEMPORARY.clear()
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


atexit.register(remove_temporary_files)


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:  # pragma: no cover - a race with a deleted file
        pass
    return a.resolve() == b.resolve()


def _option(name: str) -> str:
    return "DATA" if name == "data" else "--" + name.replace("_", "-")


def _ledgers(args: argparse.Namespace) -> list[Path]:
    """The privacy ledgers an output must never overwrite, however they were named.

    The one ``--ledger`` names, and the default one (``DPPCA_LEDGER`` or the
    XDG state path), which the app and other commands use, even with
    ``--no-ledger``.
    """
    from ..privacy.ledger_store import default_ledger_path

    found = [default_ledger_path()]
    given = getattr(args, "ledger", None)
    if isinstance(given, str | os.PathLike) and str(given):
        found.append(Path(given).expanduser())
    return found


def check_output_paths(args: argparse.Namespace) -> None:
    """Refuse, before any work, outputs that would overwrite an input or each other,
    or that cannot be written (missing or read-only directory, a directory as target)."""
    outputs = [
        (name, Path(value))
        for name in OUTPUT_OPTIONS
        if isinstance(value := getattr(args, name, None), str | os.PathLike) and str(value)
    ]
    if not outputs:
        return
    inputs = [
        (name, Path(value))
        for name in INPUT_OPTIONS
        if isinstance(value := getattr(args, name, None), str | os.PathLike) and str(value)
    ]
    inputs += [("ledger", path) for path in _ledgers(args)]
    for i, (name, path) in enumerate(outputs):
        for other, source in inputs:
            if _same_file(path, source) and other == "ledger":
                raise CLIError(
                    f"{_option(name)} {str(path)!r} is the privacy ledger in use (named by "
                    "--ledger, DPPCA_LEDGER or the default path); writing it would destroy "
                    "the record of what was spent. Choose another file name."
                )
            if _same_file(path, source):
                raise CLIError(
                    f"{_option(name)} {str(path)!r} is the input {_option(other)}; writing "
                    "it would destroy the input. Choose another file name."
                )
        for other, earlier in outputs[:i]:
            if _same_file(path, earlier):
                raise CLIError(
                    f"{_option(name)} and {_option(other)} name the same file {str(path)!r}; "
                    "give each output its own name."
                )
        if path.is_dir():
            raise CLIError(f"{_option(name)} {str(path)!r} is a directory; name a file.")
        directory = path.parent if str(path.parent) else Path(".")
        if not directory.is_dir():
            raise CLIError(
                f"the directory of {_option(name)} {str(path)!r} does not exist; create it first."
            )
        if not os.access(directory, os.W_OK | os.X_OK):
            raise CLIError(f"the directory of {_option(name)} {str(path)!r} is not writable.")
        if path.exists() and not os.access(path, os.W_OK):
            raise CLIError(f"{_option(name)} {str(path)!r} exists and is read-only.")


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


@contextlib.contextmanager
def guard(*, sigterm: bool = True) -> Iterator[None]:
    """Run a command with SIGTERM raising :class:`Terminated` (unless ``sigterm=False``,
    for a server that handles its own signals); temp files go on any exit."""
    previous = None
    main_thread = sigterm and threading.current_thread() is threading.main_thread()
    if main_thread:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    except BaseException:
        remove_temporary_files()
        raise
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
