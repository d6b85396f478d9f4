"""A privacy ledger that outlives the process: one budget per dataset, in SQLite.

A :class:`Ledger` is a small SQLite database (standard library ``sqlite3``)
that keeps, for every dataset, its total budget and every release charged
against it. Datasets are identified by :func:`fingerprint`, a hash of the
multiset of their rows over all numeric columns; the data themselves are
never stored. The command line and the app use the same file
(:func:`default_ledger_path`, or ``DPPCA_LEDGER``), so spending in one is
seen by the other.

The ledger is a store of the one accountant of :mod:`dppca.privacy.accounting`: what
a dataset has spent is the tight total (:func:`~dppca.privacy.accounting.tight_total`)
of all its releases, across commands, sessions and restarts, checked against
its total exactly as a :class:`~dppca.privacy.accounting.Budget` checks; basic
composition is reported as the upper bound. For that every part of a cost is
stored with its noise (kind, sensitivity, sigma or scale, multiplier).

Charging is one ``BEGIN IMMEDIATE`` transaction that reads what has been
spent, checks the new cost against the total and records it. SQLite lets one
writer in at a time, so processes and threads that charge the same ledger at
once are serialised and together can never spend more than the total.

Bundled datasets (:mod:`dppca.datasets`) are public: their releases are
recorded as practice and never refused. Only an exact bundled table is: every
column, text and labels included (a bundled table with a label changed or a
column added is private), as :meth:`Ledger.key` finds when it keys the table.

The dataset keys, the file's default place and the SQLite store are in
:mod:`dppca.privacy.fingerprint` and :mod:`dppca.privacy.ledger_store`, the tables shown
in :mod:`dppca.privacy.ledger_tables`, the keys of table files already read in
:mod:`dppca.privacy.ledger_files`, and one dataset's record as a store of the
accountant (:class:`LedgerStore`, :class:`LedgerBudget`) in
:mod:`dppca.privacy.ledger_budget`; this module is the public home of their
public names.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from ..core.exceptions import BudgetExceededError
from .accounting import _left, _refusal
from .cost import PrivacyCost
from .fingerprint import fingerprint, legacy_fingerprints, payload_hash
from .headroom import Headroom, headroom
from .ledger_budget import _ADVICE, LedgerBudget, LedgerStore
from .ledger_keys import _check_total, _LedgerKeys, _now, _same
from .ledger_rows import _BINDING_TABLE, _stored
from .ledger_store import LedgerError, _check_fp, default_ledger_path
from .ledger_store import ledger_timeout as ledger_timeout

__all__ = [
    "Ledger",
    "LedgerBudget",
    "LedgerError",
    "LedgerStore",
    "default_ledger_path",
    "fingerprint",
    "ledger_timeout",
    "legacy_fingerprints",
]


# --------------------------------------------------------------------------- ledger


class Ledger(_LedgerKeys):
    """A persistent privacy ledger: one total budget and a list of releases per dataset.

    Parameters
    ----------
    path : str or path-like, optional
        The SQLite file; default :func:`default_ledger_path`. Its directory is
        created if needed. ``":memory:"`` gives a ledger that dies with the object.

    Notes
    -----
    Privacy: the file holds fingerprints, dataset names, totals and the
    cost of each release (its parts with their noise), never data values.
    :meth:`charge` checks and records in one transaction, so concurrent
    processes cannot overspend. A release refused for lack of budget leaves
    the ledger unchanged. The check is the accountant's
    (:class:`~dppca.privacy.accounting.Budget`): the tight total of every release of
    the dataset, at the total's delta, within the total's eps.

    Integrity: the file carries SQLite's ``application_id`` (``0x64505063``)
    and schema version (``user_version``, 5); each charge holds a digest
    chained over the dataset's charges, and each dataset a seal over its
    total and the last digest. The file is checked when opened (``PRAGMA
    integrity_check`` and every chain) and again inside each write's
    transaction. An empty (zero-length), foreign (another program's SQLite)
    or damaged file raises :class:`LedgerError` and is never re-initialised:
    a ledger that forgets what was spent would let the budget be spent
    again. Recovery: keep the file for inspection and restore the ledger
    from a backup (copy the file while no release runs); or, accepting that
    its record is lost, move it away (a new ledger is created on next use)
    and set each dataset's total to what remains of its budget by your own
    records (:meth:`set_total`, or ``--budget-eps``/``--budget-delta`` with
    the first release); or name another file. A full disk is reported as
    such and records nothing.

    Examples
    --------
    >>> from dppca import PrivacyCost
    >>> led = Ledger(":memory:")
    >>> led.set_total("abc", 1.0, 1e-5, name="demo")
    >>> led.charge("abc", PrivacyCost(0.4, 4e-6, "gaussian", "directions"), kind="directions")
    1
    >>> eps_left, delta_left = led.remaining("abc")  # eps by the tight total at 1e-5
    >>> round(eps_left, 4), round(delta_left, 12)
    (0.6, 6e-06)
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, timeout: float | None = None
    ) -> None:
        self._open(path, timeout)
        self._public_keys: set[str] = set()  # keys of exact bundled tables seen by key()

    def is_public(self, fp: str) -> bool:
        """Whether ``fp`` is the key of a bundled, public table (its releases are never
        refused): one this ledger keyed with :meth:`key` and found to be exactly a bundled
        table, every column included (:func:`dppca.datasets.bundled_name`)."""
        return _check_fp(fp) in self._public_keys

    # -- reading -----------------------------------------------------------------------
    def total(self, fp: str) -> tuple[float, float] | None:
        """The dataset's total (eps, delta), or None if none is set."""
        with self._connect() as con:
            return self._total(con, _check_fp(fp))

    def spent(self, fp: str) -> tuple[float, float]:
        """What has been spent on the dataset so far by basic composition, the upper bound
        (``(0.0, 0.0)`` if nothing); see :meth:`spent_tight` for the total that counts."""
        with self._connect() as con:
            tally = self._tally(con, _check_fp(fp))
        return tally.basic_eps, tally.basic_delta

    def spent_tight(self, fp: str) -> tuple[float, float]:
        """The tight total of the dataset's releases, at its total delta (``(0.0, 0.0)`` if
        nothing was spent or no total is set)."""
        with self._connect() as con:
            row = self._row(con, _check_fp(fp))
        if row is None or not row[2].charges:
            return (0.0, 0.0)
        return row[2].tight_eps(row[0][1]), row[0][1]

    def remaining(self, fp: str) -> tuple[float, float]:
        """The (eps, delta) still available, never negative: eps left by the tight total,
        delta left by basic composition.

        Raises :class:`LedgerError` if the dataset has no total.
        """
        with self._connect() as con:
            row = self._row(con, _check_fp(fp))
        if row is None:
            raise LedgerError("this dataset has no total budget in the ledger yet; set one.")
        return _left(row[2], row[0])

    def headroom(
        self, fp: str, *, like: PrivacyCost | None = None, delta: float | None = None
    ) -> Headroom:
        """What still fits in the dataset's budget (see :meth:`dppca.Budget.headroom`).

        ``like`` defaults to the dataset's last release. Raises
        :class:`LedgerError` if the dataset has no total.
        """
        fp = _check_fp(fp)
        with self._connect() as con:
            row = self._row(con, fp)
            if row is None:
                raise LedgerError("this dataset has no total budget in the ledger yet; set one.")
            if like is None:
                like = self._last_cost(con, fp)
        return headroom(row[2], row[0], like=like, delta=delta)

    def costs(self, fp: str) -> list[PrivacyCost]:
        """The dataset's releases in order, each as the cost it was charged with.

        Every record is read and its digest checked (linear in the dataset's
        releases); the totals (:meth:`spent_tight`, :meth:`headroom`) read the
        dataset's running summary instead.
        """
        with self._connect() as con:
            return self._costs(con, _check_fp(fp))

    def last_cost(self, fp: str) -> PrivacyCost | None:
        """The dataset's last release as the cost it was charged with (None if none)."""
        with self._connect() as con:
            return self._last_cost(con, _check_fp(fp))

    def _last_cost(self, con: Any, fp: str) -> PrivacyCost | None:
        head = con.execute(
            "SELECT id, eps, delta FROM charges WHERE fp = ? ORDER BY id DESC LIMIT 1", (fp,)
        ).fetchone()
        if head is None:
            return None
        return _stored(con, head[0], PrivacyCost(float(head[1]), float(head[2]), "", ""))

    def name(self, fp: str) -> str | None:
        """The name the dataset was registered under, if any."""
        with self._connect() as con:
            row = con.execute("SELECT name FROM datasets WHERE fp = ?", (fp,)).fetchone()
        return None if row is None else row[0]

    # -- writing -----------------------------------------------------------------------
    def set_total(self, fp: str, eps: float, delta: float, *, name: str | None = None) -> None:
        """Fix the dataset's total budget.

        The first call sets it. A later call with the same total does nothing
        (except record ``name`` if none was known); a different total is
        accepted only while nothing has been spent, and otherwise refused with
        :class:`LedgerError`, since raising the total after releases would
        let the same people be charged twice.
        """
        fp = _check_fp(fp)
        eps, delta = _check_total(eps, delta)
        with self._write() as con:
            total = self._total(con, fp)
            if total is None:
                self._put_total(con, fp, eps, delta, name=name, created=_now())
                return
            if name is not None:
                con.execute(
                    "UPDATE datasets SET name = COALESCE(name, ?) WHERE fp = ?", (name, fp)
                )
            if _same(total, (eps, delta)):
                return
            if self._tally(con, fp).charges:
                raise LedgerError(
                    f"the total budget of this dataset is fixed at (eps={total[0]:g}, "
                    f"delta={total[1]:g}) because releases have been made from it; "
                    f"(eps={eps:g}, delta={delta:g}) was refused. Keep the total in force, "
                    "or start a fresh budget in another ledger file."
                )
            self._put_total(con, fp, eps, delta)

    def ensure_total(
        self, fp: str, eps: float, delta: float, *, name: str | None = None
    ) -> tuple[float, float]:
        """Set the total only if the dataset has none; return the total in force."""
        fp = _check_fp(fp)
        eps, delta = _check_total(eps, delta)
        with self._write() as con:
            total = self._total(con, fp)
            if total is not None:
                if name is not None:
                    con.execute(
                        "UPDATE datasets SET name = COALESCE(name, ?) WHERE fp = ?", (name, fp)
                    )
                return total
            self._put_total(con, fp, eps, delta, name=name, created=_now())
            return eps, delta

    def charge(
        self,
        fp: str,
        cost: PrivacyCost,
        *,
        kind: str,
        name: str | None = None,
        payload: str | None = None,
        total: tuple[float, float] | None = None,
        declared: bool = False,
        advice: str | None = None,
    ) -> int:
        """Record a release's cost, refusing it if the budget cannot pay.

        ``total`` (eps, delta), if given, is written in the same transaction
        when the dataset has no total yet, so that concurrent first releases
        agree on one total; with ``declared=True`` it is the user's, and a
        different total already recorded with releases is refused with
        :class:`LedgerError` naming it (one recorded without releases is
        replaced).

        ``payload``, the release's file text (:func:`dppca.release_io.release_text`),
        is stored with the charge together with its content hash, so that the
        release can be shown again (:meth:`stored_releases`) and its file
        reused at no new cost (:meth:`holds`). It holds released values only.

        Checking and recording happen in one IMMEDIATE transaction, so
        concurrent charges are serialised. The check is the accountant's: the
        tight total of every release of the dataset with this one, at the
        total delta, within the total eps. A bundled, public dataset
        (:meth:`is_public`) is never refused: its releases are recorded as
        practice. Returns the release's number in the dataset's ledger.
        ``advice`` ends the message of a refusal (default: how to go on in Python).

        Raises
        ------
        BudgetExceededError
            If the cost does not fit in what remains (the ledger is unchanged).
        LedgerError
            If the dataset has no total budget.
        """
        number, _ = self._charge(
            fp,
            cost,
            kind=kind,
            name=name,
            advice=_ADVICE if advice is None else advice,
            payload=payload,
            total=total,
            declared=declared,
        )
        return number

    def _charge(
        self,
        fp: str,
        cost: PrivacyCost,
        *,
        kind: str,
        name: str | None,
        advice: str,
        payload: str | None = None,
        total: tuple[float, float] | None = None,
        declared: bool = False,
    ) -> tuple[int, tuple[float, float] | None]:
        """:meth:`charge`, returning the release's number and the total it wrote (None if it
        wrote none): with ``total``, the total to write if the dataset has none, in the
        same transaction (``declared=True``: the user's, and a different total in force is
        refused naming it; it replaces one only while nothing was spent)."""
        fp = _check_fp(fp)
        if not isinstance(cost, PrivacyCost):
            raise TypeError(f"cost must be a PrivacyCost; got {type(cost).__name__}.")
        if not isinstance(kind, str) or not kind:
            raise TypeError("kind must be a non-empty string such as 'directions'.")
        content = None if payload is None else payload_hash(payload)
        public = self.is_public(fp)
        with self._write() as con:
            row = self._row(con, fp)
            written = None
            if total is not None:
                row, written = self._first_total(con, fp, row, total, declared=declared, name=name)
            if row is None:
                raise LedgerError(
                    "this dataset has no total budget in the ledger; set one first "
                    "(Ledger.set_total, or --budget-eps/--budget-delta on the command line)."
                )
            total, _, tally = row
            if not public and not tally.fits(cost, total):
                raise BudgetExceededError(_refusal(cost, tally, total, advice))
            self._insert_charge(
                con, fp, cost, time=_now(), kind=kind, name=name, content=content, payload=payload
            )
            return tally.charges + 1, written

    def attach(self, fp: str, release: int, *, content: str, payload: str | None = None) -> None:
        """Record the content hash (and the file text) of the dataset's release ``release``.

        For a release charged before its values existed (through a
        :class:`LedgerBudget`): :func:`dppca.release_io.save_release` with
        ``budget=`` calls it. Raises :class:`LedgerError` for an unknown number.
        """
        fp = _check_fp(fp)
        if payload is not None and payload_hash(payload) != content:
            raise ValueError("payload is not the release whose content hash is given.")
        with self._write() as con:
            ids = con.execute("SELECT id FROM charges WHERE fp = ? ORDER BY id", (fp,)).fetchall()
            if not (isinstance(release, int) and 1 <= release <= len(ids)):
                raise LedgerError(f"this dataset has no release number {release!r}.")
            con.execute(
                "UPDATE charges SET content = ?, payload = COALESCE(?, payload) WHERE id = ?",
                (content, payload, ids[release - 1][0]),
            )

    def _binding(self, *, create: bool) -> tuple[str, bytes] | None:
        """The ledger's public id and secret key for tagging release files.

        Created once, at the first tagged file (``create=True``), as 16 random
        hex digits and 32 random bytes, and kept in the ledger file; None when
        the ledger has none yet. The key never leaves the ledger: a release file
        carries only the id and its HMAC-SHA256 tag
        (:func:`dppca.release_io.save_release`).
        """
        if create:
            with self._write() as con:
                con.execute(_BINDING_TABLE)
                con.execute(
                    "INSERT INTO binding (ledger, key) SELECT ?, ? "
                    "WHERE NOT EXISTS (SELECT 1 FROM binding)",
                    (secrets.token_hex(8), secrets.token_bytes(32)),
                )
                row = con.execute("SELECT ledger, key FROM binding LIMIT 1").fetchone()
        else:
            with self._connect() as con:
                made = con.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'binding'"
                ).fetchone()
                row = None
                if made is not None:
                    row = con.execute("SELECT ledger, key FROM binding LIMIT 1").fetchone()
        return None if row is None else (str(row[0]), bytes(row[1]))

    def holds(self, fp: str, content: str) -> bool:
        """Whether a release of the dataset with this content hash was charged here."""
        with self._connect() as con:
            row = con.execute(
                "SELECT 1 FROM charges WHERE fp = ? AND content = ? LIMIT 1",
                (_check_fp(fp), content),
            ).fetchone()
        return row is not None

    def stored_releases(self, fp: str) -> list[tuple[int, str, str]]:
        """The dataset's releases stored with their file text: (number, kind, payload).

        A stored text is returned only when it still has the content hash
        recorded with its charge: the text lies outside the ledger's hash
        chain, so one edited in the file is left out rather than shown.
        """
        with self._connect() as con:
            rows = con.execute(
                "SELECT kind, payload, content FROM charges WHERE fp = ? ORDER BY id",
                (_check_fp(fp),),
            ).fetchall()
        return [
            (i, kind, text)
            for i, (kind, text, content) in enumerate(rows, 1)
            if text is not None and payload_hash(text) == content
        ]

    def check(self, fp: str, cost: PrivacyCost, *, advice: str | None = None) -> None:
        """Raise :class:`BudgetExceededError` if ``cost`` does not fit now (records nothing);
        ``advice`` ends its message (default: how to go on in Python)."""
        advice = _ADVICE if advice is None else advice
        fp = _check_fp(fp)
        with self._connect() as con:
            row = self._row(con, fp)
        if row is None:
            raise LedgerError("this dataset has no total budget in the ledger; set one first.")
        if not self.is_public(fp) and not row[2].fits(cost, row[0]):
            raise BudgetExceededError(_refusal(cost, row[2], row[0], advice))

    def budget(self, fp: str, *, kind: str = "release", name: str | None = None) -> LedgerBudget:
        """The accountant over one dataset's record (:class:`LedgerBudget`), for ``budget=``."""
        return LedgerBudget(self, fp, kind=kind, name=name)

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"
