"""Per-backend writer leases: one writer per backend at a time, across threads and processes.

A lease is one row in the store (backend, holder, expiry), taken and given back in
short write transactions. A holder that crashes cannot keep it: after ``ttl`` seconds
anyone may take it over, and at once when the holder was a process of this host that
no longer runs (so a long ``ttl`` costs nothing after a local crash). A second writer
polls until its ``timeout`` and then raises :class:`Busy` naming the backend, the
holder and how long it waited.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Protocol

from pushdown.errors import Busy

LEASES = """
CREATE TABLE IF NOT EXISTS leases(
    backend TEXT PRIMARY KEY, holder TEXT NOT NULL, expires REAL NOT NULL);
"""
POLL = 0.05  # seconds between attempts, doubling up to MAX_POLL
MAX_POLL = 0.5

log = logging.getLogger(__name__)


class Transactional(Protocol):
    @property
    def db(self) -> sqlite3.Connection: ...

    def write_lock(self, *, durable: bool = True) -> AbstractContextManager[None]: ...


def local_host() -> str:
    """This host as a lease holder names it: the host name and, where known, the PID
    namespace. Two containers may share a host name (``network_mode: host``, a set
    ``hostname:``) but not their process ids: a pid is looked up only in its own namespace,
    else a live holder in another container could be taken for dead."""
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return socket.gethostname()
    digits = "".join(c for c in ns if c.isdigit())
    return f"{socket.gethostname()}@{digits}" if digits else socket.gethostname()


def holder_id() -> str:
    """Who holds a lease: host, process and a random part (two leases in one process differ)."""
    return f"{local_host()}:{os.getpid()}:{secrets.token_hex(4)}"


def dead(holder: str) -> bool:
    """Whether ``holder`` is a process of this host that no longer runs: its lease is void
    at once (a crashed run need not wait for the expiry; one on another host must)."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != local_host() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def try_take(store: Transactional, backend: str, holder: str, ttl: float) -> tuple[str, float] | None:
    """Take the lease (free, expired or already ours); else return (holder, expiry) of the
    other. A lease is bookkeeping (see the store's ``write_lock(durable=False)``): after a
    power loss its holder is gone too."""
    with store.write_lock(durable=False):
        now = time.time()
        sql = "SELECT holder, expires FROM leases WHERE backend = ?"
        row = store.db.execute(sql, (backend,)).fetchone()
        if row is not None and row[0] != holder and float(row[1]) > now and not dead(str(row[0])):
            return str(row[0]), float(row[1])
        store.db.execute(
            "INSERT OR REPLACE INTO leases(backend, holder, expires) VALUES (?, ?, ?)",
            (backend, holder, now + ttl),
        )
        return None


@dataclass
class Held:
    """A lease while it is held: ``holder`` names this holder in the store's row.
    ``given_back``: already deleted in a transaction of the holder's (the one that moved
    its cursor), so the end of the ``with`` block takes no write transaction of its own."""

    backend: str
    holder: str
    given_back: bool = False


def holds(store: Transactional, backend: str, holder: str) -> bool:
    """Whether ``holder`` still holds ``backend``'s lease (call inside a write transaction)."""
    sql = "SELECT holder FROM leases WHERE backend = ?"
    row = store.db.execute(sql, (backend,)).fetchone()
    return row is not None and str(row[0]) == holder


def drop(store: Transactional, held: Held) -> None:
    """Give ``held`` back inside the caller's write transaction (its last write under the lease)."""
    store.db.execute("DELETE FROM leases WHERE backend = ? AND holder = ?", (held.backend, held.holder))
    held.given_back = True


def give_back(store: Transactional, backend: str, holder: str) -> None:
    try:
        with store.write_lock(durable=False):
            store.db.execute("DELETE FROM leases WHERE backend = ? AND holder = ?", (backend, holder))
    except Busy as exc:  # the lease expires by itself; do not hide what the caller raised
        log.warning("writer lease of backend %s not given back (%s); it expires by itself", backend, exc)


@contextmanager
def backend_lease(
    store: Transactional,
    backend: str,
    *,
    timeout: float = 30.0,
    ttl: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Held]:
    holder = holder_id()
    started = time.monotonic()
    pause = POLL
    while (other := try_take(store, backend, holder, ttl)) is not None:
        waited = time.monotonic() - started
        if waited >= timeout:
            raise Busy(
                f"backend {backend} is busy: {other[0]} holds its writer lease "
                f"(for {max(other[1] - time.time(), 0.0):.1f} s more unless given back); "
                f"waited {waited:.1f} s; try again when that run has finished"
            )
        sleep(min(pause, max(timeout - waited, 0.001)))
        pause = min(pause * 2, MAX_POLL)
    held = Held(backend, holder)
    try:
        yield held
    finally:
        if not held.given_back:
            give_back(store, backend, holder)
