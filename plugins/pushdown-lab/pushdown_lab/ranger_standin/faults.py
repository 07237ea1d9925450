"""Fault injection for the stand-in: refuse, stall, or die, so tests can prove retries and recovery.

``fail_next(n, status)`` answers the next ``n`` requests with ``status`` (503 by default) and
changes nothing; ``delay_next(n, seconds)`` holds the next ``n`` requests that long before
serving them (a client timeout); ``die_after_writes(n)`` lets ``n`` more writes through, then
stops the server as if the process had died (the state stays, as Ranger's database would);
with ``reply=False`` the last write is applied but never answered.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["Faults", "Verdict"]


@dataclass(frozen=True)
class Verdict:
    """What to do with one request: answer ``status`` instead, wait ``delay`` first, die after."""

    status: int | None = None
    delay: float = 0.0
    die_after: bool = False
    reply: bool = True


class Faults:
    """The armed faults; every request asks :meth:`take` once, in arrival order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fail = 0
        self._status = 503
        self._delays = 0
        self._seconds = 0.0
        self._writes_left: int | None = None
        self._reply = True

    def fail_next(self, n: int, status: int = 503) -> None:
        with self._lock:
            self._fail, self._status = n, status

    def delay_next(self, n: int, seconds: float) -> None:
        with self._lock:
            self._delays, self._seconds = n, seconds

    def die_after_writes(self, n: int, *, reply: bool = True) -> None:
        """Die once ``n`` more writes are applied; ``reply=False``: the last one gets no answer."""
        with self._lock:
            self._writes_left, self._reply = n, reply

    def clear(self) -> None:
        with self._lock:
            self._fail = self._delays = 0
            self._writes_left = None

    def take(self, is_write: bool) -> Verdict:
        with self._lock:
            if self._fail > 0:
                self._fail -= 1
                return Verdict(status=self._status)
            delay = 0.0
            if self._delays > 0:
                self._delays -= 1
                delay = self._seconds
            die = False
            if is_write and self._writes_left is not None:
                if self._writes_left <= 0:
                    return Verdict(status=-1)
                self._writes_left -= 1
                die = self._writes_left == 0
                if die:
                    self._writes_left = None
            return Verdict(delay=delay, die_after=die, reply=self._reply or not die)
