"""A wake-up the store rings after each commit of journal entries, so a daemon sees a
change at once instead of on its next look.

The bell is a named pipe beside the store file (``<store>.wake``), made by the listener
(the daemon). A committer writes one byte to it when it exists and somebody listens; it
never waits: no pipe, no listener or a full pipe (already rung) all cost nothing more
than a failed ``open``. The listener holds the pipe open for reading and writing, so it
never sees an end of file, and sleeps in ``select`` until rung: no CPU while idle. The
daemon still looks at the journal every ``poll`` (a bell may be missed: another host,
a store on a file system without pipes); the bell only makes the look early.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
from pathlib import Path

from pushdown.journal.connection import MEMORY


def bell_of(store_path: str) -> Path | None:
    """The bell of the store at ``store_path`` (None: an in-memory store has none)."""
    return None if store_path == MEMORY else Path(store_path + ".wake")


def ring(store_path: str) -> None:
    """Tell a listener that the journal moved (never blocks, never raises)."""
    bell = bell_of(store_path)
    if bell is None:
        return
    try:
        fd = os.open(bell, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # no bell (ENOENT), nobody listening (ENXIO): nothing to tell
        return
    try:
        with contextlib.suppress(OSError):  # a full pipe was rung already
            os.write(fd, b"\x01")
    finally:
        os.close(fd)


class Listener:
    """Waits for the bell of one store (making the pipe when missing)."""

    def __init__(self, store_path: str) -> None:
        bell = bell_of(store_path)
        self.fd: int | None = None
        if bell is None:
            return
        try:
            if not bell.exists():
                os.mkfifo(bell, 0o600)
            if not stat.S_ISFIFO(bell.stat().st_mode):
                return  # something else has the name: no bell, the poll still finds changes
            self.fd = os.open(bell, os.O_RDWR | os.O_NONBLOCK)
        except OSError:
            self.fd = None

    def wait(self, timeout: float) -> bool:
        """Sleep until rung or ``timeout`` seconds; True when rung (every ring so far is
        taken: one wake-up stands for all of them)."""
        if self.fd is None:
            return False
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            while os.read(self.fd, 4096):
                pass
        except BlockingIOError:
            pass
        return True

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
