"""One worker thread per backend: pending rounds when the journal moves, a full reconcile
every interval, back-off after a temporary error; every outcome recorded and measured.

Longer than ~250 lines: one class, the worker's loop, with its rounds and their bookkeeping.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pushdown.app.daemon.following import (
    ABANDONED,
    PROGRESS_EVERY,
    Following,
    Stopping,
    _error_result,
    backoff,
    jittered,
)
from pushdown.app.service.models import settle
from pushdown.app.service.storefile import open_store
from pushdown.journal.store import Store
from pushdown.model.actor import Actor
from pushdown.reconcile.sync import TEMPORARY, SyncResult

if TYPE_CHECKING:
    from pushdown.app.daemon.runner import Daemon

log = logging.getLogger("pushdown.daemon")


class Worker(threading.Thread):
    """Reconciles one backend, forever, until the daemon stops."""

    def __init__(self, daemon: Daemon, backend: str) -> None:
        super().__init__(name=f"pushdown-{backend}", daemon=True)
        self.d = daemon
        self.backend = backend
        self.settings = daemon.settings
        self.rng = random.Random()  # noqa: S311 - jitter, not a secret
        self.next_full = 0.0  # monotonic: the first round is a full reconcile
        self.not_before = 0.0
        self.failures = 0
        self.last_success: float | None = None  # monotonic
        self.last_duration = 0.0
        self.last_error: str | None = None
        self.ac: Following | None = None
        self.store: Store | None = None
        #: set by the store's bell (a commit by any process of this host): look now
        self.woken = threading.Event()

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> None:
        try:
            while not self.d.stop.is_set():
                self.woken.clear()
                started = time.monotonic()
                self.round()
                self.woken.wait(self.settings.poll)
                # no round sooner than ``gather`` after the last one started: what else is
                # committed meanwhile goes into the same next round, so a hundred writes a
                # second cost at most 1/gather syncs a second, not a hundred; a commit after
                # a quiet spell is looked at at once (the while has passed)
                rest = started + min(self.settings.gather, self.settings.poll) - time.monotonic()
                if rest > 0:
                    self.d.stop.wait(rest)
        finally:
            if self.ac is not None:
                self.ac.close()
            if self.store is not None:
                self.store.close()

    def round(self) -> None:
        """Look at the journal once; reconcile when something is due."""
        try:
            store = self._store()
            last, cursor = store.position(self.backend)
            self.d.metrics.polls.labels(self.backend).inc()
            self._lag(store, last, cursor)
            now = time.monotonic()
            if now < self.not_before:
                return
            full = now >= self.next_full
            if full or last > cursor:
                self.reconcile(full, journal=last > cursor)
                self._lag(store, *store.position(self.backend))
        except Stopping:
            return
        except Exception as exc:  # a fault here must not end the worker: report, back off, retry
            self._failed("pending", _error_result(self.backend, exc), time.monotonic())
            self._reset()

    def _reset(self) -> None:
        """Drop the library and backend after an unexpected fault: the next round opens them
        again and reads the model from the store (nothing half-applied is kept in memory)."""
        ac, self.ac = self.ac, None
        if ac is not None:
            try:
                ac.close()
            except Exception as exc:
                log.warning("%s: closing after a fault: %s", self.backend, exc)

    def _store(self) -> Store:
        if self.store is None:
            self.store = open_store(self.d.config, create=False)
        return self.store

    def _access(self) -> Following:
        """The library over this worker's one backend (created again after it failed to be)."""
        if self.ac is None:
            one = dataclasses.replace(
                self.d.config, backends={self.backend: self.d.config.backends[self.backend]}
            )
            ac = Following.open(one, push=False, hooks=self.d.hooks, create_store=False)
            assert isinstance(ac, Following)
            ac.actor = Actor(ac.access.admin, "daemon", None, trusted=True)  # what it journals is its own
            self.ac = ac
            self.ac.lease_timeout = max(self.settings.poll, 1.0)
        return self.ac

    def _lag(self, store: Store, last: int, cursor: int) -> None:
        m = self.d.metrics
        m.lag_events.labels(self.backend).set(max(last - cursor, 0))
        if last > cursor:
            at = store.first_unseen_at(self.backend)
            age = 0.0 if at is None else max((datetime.now(UTC) - at).total_seconds(), 0.0)
            m.lag_seconds.labels(self.backend).set(age)
        else:
            m.lag_seconds.labels(self.backend).set(0.0)

    # -- one reconcile -----------------------------------------------------------------

    def reconcile(self, full: bool, journal: bool = True) -> None:
        """One reconcile; ``journal``: events were pending (a full one's operations are then
        not all drift: only a full reconcile with nothing journalled counts as drift)."""
        kind = "full" if full else "pending"
        ac = self._access()
        if full:
            ac.reload()
            if self.d.freeze:  # before the sync: a commit meanwhile waits for the sync anyway
                settle()  # the model it replaced thawed and collected, the one read frozen
                self.d.metrics.frozen.set(gc.get_freeze_count())
        started = time.monotonic()
        try:
            results = ac.sync([self.backend], full=full, progress=self._progress)
        except Stopping:
            self.d.metrics.reconciles.labels(self.backend, kind, ABANDONED).inc()
            log.warning(
                "%s: stopping: apply abandoned after the statement in flight; the cursor stays where it "
                "was, the next start finishes it",
                self.backend,
                extra={"backend": self.backend, "result": ABANDONED},
            )
            return
        took = time.monotonic() - started
        self.last_duration = took
        self.d.metrics.duration.labels(self.backend, kind).observe(took)
        for other in results:
            if other.backend != self.backend and other.backend not in self.d.config.backends:
                log.error("%s", other.error, extra={"backend": other.backend, "result": other.kind})
        mine = [r for r in results if r.backend == self.backend]
        result = mine[0] if mine else SyncResult(self.backend, None)
        if result.ok:
            self._succeeded(kind, result, started, drift=full and not journal)
        else:
            self._failed(kind, result, started)

    def _progress(self, backend: str, n: int) -> Callable[[int], None]:
        log.info("%s: applying %d operation(s)", backend, n, extra={"backend": backend, "ops": n})
        done, said = [0], [time.monotonic()]

        def step(k: int) -> None:
            if self.d.stop.is_set():
                raise Stopping
            done[0] += k
            if time.monotonic() - said[0] >= PROGRESS_EVERY:  # a long apply says how far it got
                said[0] = time.monotonic()
                log.info(
                    "%s: applied %d of %d operation(s)",
                    backend,
                    done[0],
                    n,
                    extra={"backend": backend, "done": done[0], "ops": n},
                )

        return step

    def _succeeded(self, kind: str, result: SyncResult, started: float, drift: bool = False) -> None:
        m, name = self.d.metrics, self.backend
        now = time.monotonic()
        plan = result.plan
        ops = len(plan.ops) if plan is not None else 0
        findings = list(plan.findings) if plan is not None else []
        m.reconciles.labels(name, kind, "ok").inc()
        if result.applied:
            m.operations.labels(name).inc(ops)
        if drift and ops:
            m.drift_found.labels(name).inc(ops)
            if result.applied:
                m.drift_corrected.labels(name).inc(ops)
        m.findings.labels(name).set(len(findings))
        m.last_success.labels(name).set(time.time())
        self.failures, self.last_error, self.last_success = 0, None, now
        if kind == "full":
            self.next_full = started + jittered(self.settings.interval, self.settings.jitter, self.rng)
        self._store().record_sync(name, time.time(), findings=len(findings))
        if ops and result.applied:
            what = "drift corrected" if drift else "changes enforced"
            log.info(
                "%s: %s: applied %d operation(s), read back clean (journal seq %d)",
                name,
                what,
                ops,
                result.seq,
                extra={"backend": name, "result": "ok", "kind": kind, "ops": ops, "seq": result.seq},
            )
        for finding in findings:  # reported at every reconcile that still sees it
            log.warning("%s: finding: %s", name, finding, extra={"backend": name, "finding": finding})

    def _failed(self, kind: str, result: SyncResult, started: float) -> None:
        name, now = self.backend, time.monotonic()
        result_kind = result.kind or "permanent"
        self.d.metrics.reconciles.labels(name, kind, result_kind).inc()
        self.last_error = result.error
        if result_kind == TEMPORARY:
            self.failures += 1
            wait = backoff(self.failures, self.settings, self.rng, result.retry_after)
            self.not_before = now + wait
            then = f"retrying in {wait:.1f} s"
        else:  # a person must act: try again at the next interval, reported meanwhile
            self.failures = 0
            wait = jittered(self.settings.interval, self.settings.jitter, self.rng)
            self.not_before = self.next_full = now + wait
            then = f"trying again at the next interval ({wait:.0f} s)"
        log.error(
            "%s: %s error: %s; %s",
            name,
            result_kind,
            result.error,
            then,
            extra={"backend": name, "result": result_kind, "kind": kind},
        )
        try:
            self._store().record_sync(name, time.time(), error=result.error, kind=result_kind)
        except Exception as exc:
            log.warning("%s: could not record the error in the store: %s", name, exc)

    # -- readiness ---------------------------------------------------------------------

    def not_ready(self) -> str | None:
        """Why this backend is not ready (None: converged within its interval)."""
        if self.last_success is None:
            return f"{self.backend}: not converged yet" + (
                f" (last error: {self.last_error})" if self.last_error else ""
            )
        limit = self.settings.interval * (1 + self.settings.jitter) + 2 * max(self.last_duration, 1.0)
        age = time.monotonic() - self.last_success
        if age > limit:
            return f"{self.backend}: last converged {age:.0f} s ago (more than its interval)"
        return None
