"""The daemon's parts of a round: the library kept current from the journal
(:class:`Following`), the back-off and jitter of the waits, and an error as a round's result."""

from __future__ import annotations

import logging
import random

from pushdown.app.service import AccessControl
from pushdown.app.settings.daemon import DaemonSettings
from pushdown.errors import ConfigError, PushdownError, TemporaryBackendError
from pushdown.reconcile.sync import SyncResult

log = logging.getLogger("pushdown.daemon")

ABANDONED = "abandoned"
PROGRESS_EVERY = 10.0  # seconds between progress lines of a long apply


class Following(AccessControl):
    """The library over one backend, its model kept current by applying the journal's new
    events in memory (cost follows the change), not by reading the whole store again.

    ``reload()`` reads the store again (each full reconcile does: the store is the truth)."""

    def _refresh(self) -> tuple[int, str | None]:
        name = self.store.get_meta("metalake")
        if name not in (None, self._model.metalake):
            self.reload()
            return self._seq, name
        for seq, event in self.store.events_since(self._seq):
            self._model.apply(event)
            self._seq = seq
        return self._seq, name

    def reload(self) -> None:
        self._model, self._seq = self.store.snapshot()  # as of one commit, never torn


class Stopping(Exception):
    """Raised from the progress callback between statements when the daemon stops."""


def jittered(seconds: float, fraction: float, rng: random.Random) -> float:
    return seconds * rng.uniform(1.0 - fraction, 1.0 + fraction)


def backoff(failures: int, settings: DaemonSettings, rng: random.Random, retry_after: float | None) -> float:
    """The wait after the ``failures``-th temporary error in a row: doubling, capped, jittered."""
    base = min(settings.backoff_max, settings.backoff_min * 2.0 ** min(max(failures - 1, 0), 30))
    return max(min(base * rng.uniform(0.8, 1.2), settings.backoff_max), retry_after or 0.0)


def _error_result(backend: str, exc: Exception) -> SyncResult:
    if isinstance(exc, ConfigError):
        return SyncResult(backend, None, error=f"{backend}: {exc}", failure=exc)
    if isinstance(exc, PushdownError):  # the store busy, a backend that cannot be created yet
        failure = exc if exc.delay is not None else TemporaryBackendError(backend, str(exc))
        return SyncResult(backend, None, error=f"{backend}: {exc}", failure=failure)
    log.exception("%s: unexpected error", backend, extra={"backend": backend})
    text = f"unexpected {type(exc).__name__}: {exc}"
    return SyncResult(backend, None, error=f"{backend}: {text}", failure=TemporaryBackendError(backend, text))
