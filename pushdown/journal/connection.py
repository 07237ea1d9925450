"""Opening the store's SQLite file, and turning SQLite's lock timeouts into :class:`Busy`.

A store path is checked before SQLite sees it, so a typo or a wrong file gives one
clear :class:`StoreError` instead of SQLite's "unable to open database file", and a
write that waited longer than the busy timeout raises :class:`Busy` naming the store,
never a raw ``sqlite3.OperationalError: database is locked``.

A statement that meets another writer's lock is retried here rather than in SQLite's
busy handler, which sleeps 1, 2, 5, 10, 15, 20, 25 ms and more between attempts: a
write transaction of the store lasts well under a millisecond, so those sleeps made a
write that met one wait several times longer than the lock was held. The retry here
sleeps 0.1 ms at first, growing to 2 ms, each pause jittered (two waiters do not wake
in step), until the busy timeout; then :class:`Busy`.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from pushdown.errors import Busy, StoreError

MEMORY = ":memory:"
SQLITE_HEADER = b"SQLite format 3\x00"
#: SQLITE_BUSY and SQLITE_LOCKED: another connection holds the lock.
LOCK_CODES = frozenset({5, 6})
#: The retry of a statement that met a lock: the first pause, the longest (seconds).
FIRST_PAUSE = 0.0001
LONGEST_PAUSE = 0.002


#: Store files this process has open through SQLite (real path -> connections). Reading
#: such a file's header with a plain open() would be harmful: closing that descriptor
#: drops every POSIX lock the process holds on the file, SQLite's included, and another
#: process may then take the file as unused and delete its WAL under live connections
#: (SQLite's "How To Corrupt An SQLite Database File", section 2.2). A file open here was
#: checked when it was first opened.
_open_here: dict[str, int] = {}
_open_lock = threading.Lock()


def _real(path: str) -> str:
    return os.path.realpath(path)


def problem_with(path: str) -> str | None:
    """Why ``path`` cannot be a store (a directory, a missing directory, not SQLite), or None."""
    if path == MEMORY:
        return None
    p = Path(path)
    if p.is_dir():
        return "is a directory, not a store file"
    if not p.parent.is_dir():
        return f"lies in a directory that does not exist ({p.parent})"
    if not p.exists():
        return None
    with _open_lock:
        if _open_here.get(_real(path)):
            return None  # never open() a file SQLite holds locks on in this process
    try:
        with p.open("rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if head and head != SQLITE_HEADER:
        return "is not an SQLite database, so not a pushdown store"
    return None


def is_lock_error(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code in LOCK_CODES or "locked" in str(exc) or "busy" in str(exc)


class StoreConnection(sqlite3.Connection):
    """An SQLite connection whose lock timeouts raise :class:`Busy` naming the store."""

    where = "the store"
    busy_timeout = 10.0
    _registered: str | None = None

    def close(self) -> None:
        with _open_lock:
            if self._registered is not None:
                _open_here[self._registered] -= 1
                if not _open_here[self._registered]:
                    del _open_here[self._registered]
                self._registered = None
        super().close()

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.OperationalError as exc:
            if not is_lock_error(exc):
                raise
            if self.in_transaction:  # inside a transaction a retry cannot help: SQLite's own rule
                raise self.busy() from None
        return self._retry(sql, parameters)

    def _retry(self, sql: str, parameters: Any) -> sqlite3.Cursor:
        """Run a statement that met a lock (outside a transaction: ``BEGIN IMMEDIATE``, an
        autocommit write) again after short jittered pauses until the busy timeout."""
        deadline = time.monotonic() + self.busy_timeout
        pause = FIRST_PAUSE
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self.busy()
            time.sleep(min(left, pause * random.uniform(0.5, 1.5)))  # noqa: S311 - jitter, not a secret
            pause = min(pause * 2, LONGEST_PAUSE)
            try:
                return super().execute(sql, parameters)
            except sqlite3.OperationalError as exc:
                if not is_lock_error(exc):
                    raise

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        """Run a script (the schema: every statement may run again) until no lock stops it."""
        deadline = time.monotonic() + self.busy_timeout
        pause = FIRST_PAUSE
        while True:
            try:
                return super().executescript(script)
            except sqlite3.OperationalError as exc:
                if not is_lock_error(exc):
                    raise
                if self.in_transaction:
                    super().execute("ROLLBACK")  # a script stopped half-way leaves its transaction open
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self.busy() from None
                time.sleep(min(left, pause * random.uniform(0.5, 1.5)))  # noqa: S311 - jitter
                pause = min(pause * 2, LONGEST_PAUSE)

    def busy(self) -> Busy:
        return Busy(
            f"store {self.where} is busy: another writer held its write lock for more than "
            f"{self.busy_timeout:g} s; nothing was written; try again when it has finished"
        )


def connect(path: str, busy_timeout: float) -> StoreConnection:
    """Open (creating it if missing) the store at ``path``; raise :class:`StoreError` if unusable."""
    why = problem_with(path)
    if why is not None:
        raise StoreError(f"store {path} {why}")
    try:
        db = sqlite3.connect(
            path, timeout=0, isolation_level=None, check_same_thread=False, factory=StoreConnection
        )
    except sqlite3.Error as exc:
        raise StoreError(f"store {path} cannot be opened: {exc}") from None
    assert isinstance(db, StoreConnection)
    db.where, db.busy_timeout = path, busy_timeout
    if path != MEMORY:
        with _open_lock:
            db._registered = _real(path)
            _open_here[db._registered] = _open_here.get(db._registered, 0) + 1
    return db


def prepare(db: StoreConnection, schema: str) -> None:
    """Set the journal mode, create the tables; close and raise if unusable. SQLite's own
    busy handler stays off (timeout 0): :meth:`StoreConnection.execute` retries instead."""
    try:
        db.execute("PRAGMA journal_mode=WAL" if db.where != MEMORY else "PRAGMA journal_mode=MEMORY")
        db.executescript(schema)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise StoreError(f"store {db.where} cannot be used: {exc}") from None
    except Busy:
        db.close()
        raise
