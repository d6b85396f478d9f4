"""Defaults of a dataset's total budget that the faces share.

The command line's ledger and the app give a table seen for the first time
the same default total delta, :func:`default_delta`, a function of the
public row count only.
"""

from __future__ import annotations

__all__: list[str] = []
