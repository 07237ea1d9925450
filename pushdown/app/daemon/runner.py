"""``pushdown daemon``: follow the journal, reconcile every backend, on its own.

One worker thread per backend, each with its own store connection and backend:

- every ``poll`` (200 ms) it reads the journal's last seq and its cursor (one query on
  the local SQLite file, nothing on the server); when the journal moved past the
  cursor it reconciles the scope of the events it has not seen (the dispatcher's
  pending sync), so a commit by any process is enforced within about a second;
- every ``interval`` (jittered) it reconciles everything: drift made by hand and
  objects that appeared on the server are found and corrected;
- a temporary error (server down, lease busy) backs off from ``backoff_min`` doubling
  to ``backoff_max``, with jitter, never sooner than the error's ``retry_after``; a
  permanent or configuration error (or a guarded plan) waits for the next interval;
  every outcome is recorded in the store (``pushdown status``) and in the metrics.

One daemon is active per store: it holds the store's daemon lease (renewed; it lapses
if the holder dies, at once when it was a process of this host); a second one waits.
A daemon that cannot ask the store never counts itself the holder, and one that cannot
renew the lease stops before it lapses.
Every apply also holds the backend's writer lease, as the CLI and the library do, so
no two writers ever apply to one backend at once.

SIGTERM (and SIGINT) stop it: a worker in the middle of an apply abandons it after the
statement in flight; the cursor moves only after an apply was read back clean, so
nothing is lost; SIGKILL at any point is safe for the same reason.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from types import FrameType

from pushdown.app.config import Config
from pushdown.app.daemon.metrics import Endpoints, Metrics
from pushdown.app.daemon.settings import DaemonSettings
from pushdown.app.service import AccessControl
from pushdown.app.storefile import open_store
from pushdown.errors import ConfigError, PushdownError, TemporaryBackendError
from pushdown.host.plugins import Hooks
from pushdown.journal import lease
from pushdown.journal.store import Store
from pushdown.journal.wake import Listener
from pushdown.model.actor import Actor
from pushdown.reconcile.sync import TEMPORARY, SyncResult

log = logging.getLogger("pushdown.daemon")

#: The daemon lease's name in the store's lease table: a control character keeps it
#: apart from every backend name (the config refuses those in backend names).
INSTANCE = "\x1edaemon"
ABANDONED = "abandoned"
PROGRESS_EVERY = 10.0  # seconds between progress lines of a long apply


class Following(AccessControl):
    """The library over one backend, its model kept current by applying the journal's new
    events in memory (cost follows the change), not by reading the whole store again.

    ``reload()`` reads the store again (each full reconcile does: the store is the truth)."""

    def _refresh(self) -> None:
        if self.store.get_meta("metalake") not in (None, self._model.metalake):
            self.reload()
            return
        for seq, event in self.store.events_since(self._seq):
            self._model.apply(event)
            self._seq = seq

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
                self.round()
                self.woken.wait(self.settings.poll)
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


def _error_result(backend: str, exc: Exception) -> SyncResult:
    if isinstance(exc, ConfigError):
        return SyncResult(backend, None, error=f"{backend}: {exc}", failure=exc)
    if isinstance(exc, PushdownError):  # the store busy, a backend that cannot be created yet
        failure = exc if exc.delay is not None else TemporaryBackendError(backend, str(exc))
        return SyncResult(backend, None, error=f"{backend}: {exc}", failure=failure)
    log.exception("%s: unexpected error", backend, extra={"backend": backend})
    text = f"unexpected {type(exc).__name__}: {exc}"
    return SyncResult(backend, None, error=f"{backend}: {text}", failure=TemporaryBackendError(backend, text))


class SourcePoller(threading.Thread):
    """Reads the model source every ``[source] interval`` and converges the store's model to
    it (:mod:`pushdown.app.source.follow`); the backends' workers push what changed. A
    read that fails or is held back changes nothing: the store records why, and the next
    interval tries again."""

    def __init__(self, daemon: Daemon) -> None:
        super().__init__(name="pushdown-source", daemon=True)
        from pushdown.app.source.follow import Follower

        self.d = daemon
        self.follower = Follower(daemon.config)
        self.last_ok: bool | None = None
        self.last_error: str | None = None
        self.ac: AccessControl | None = None

    def run(self) -> None:
        settings = self.follower.settings
        try:
            while not self.d.stop.is_set():
                self.poll()
                self.d.stop.wait(settings.interval)
        finally:
            self.follower.close()
            if self.ac is not None:
                self.ac.close()

    def poll(self) -> None:
        try:
            if self.ac is None:
                cfg = self.d.config
                self.ac = AccessControl(
                    open_store(cfg, create=False),
                    push=False,
                    access=cfg.access,
                    follows=None if cfg.follow is None else cfg.follow.describe(),
                )
            result = self.follower.poll(self.ac)
        except Exception as exc:  # a fault here must not end the poller: report, retry next interval
            log.exception("source: unexpected error: %s", exc)
            result = None
            if self.ac is not None:
                self.ac.close()
                self.ac = None
        self.last_ok = result is not None and result.ok
        self.last_error = None if result is None else result.error

    def not_ready(self) -> str | None:
        if self.last_ok:
            return None
        if self.last_ok is None:
            return "source: not read yet"
        return f"source: the last read was not used ({self.last_error})"


class Daemon:
    """The daemon: the instance lease, one worker per backend, the HTTP endpoints."""

    def __init__(
        self,
        config: Config,
        *,
        hooks: Hooks | None = None,
        settings: DaemonSettings | None = None,
    ) -> None:
        if not config.backends:
            raise ConfigError(f"{config.source}: no backends configured; the daemon has nothing to reconcile")
        self.config = config
        self.settings = settings or config.daemon
        self.hooks = hooks or Hooks.load()
        self.metrics = Metrics()
        self.stop = threading.Event()
        self.store = open_store(config, create=False)  # the lease's connection (checks the store exists)
        self.holder = lease.holder_id()
        self.workers = {name: Worker(self, name) for name in sorted(config.backends)}
        self.source = SourcePoller(self) if config.follow is not None else None
        self.endpoints: Endpoints | None = None
        self.waiting_for: str | None = None
        self.active = False
        self.held_until = 0.0  # monotonic: when the lease lapses unless renewed

    def ready(self) -> list[str]:
        if not self.active:
            return [f"standby: {self.waiting_for or 'another daemon'} holds the store's daemon lease"]
        waiting = [why for w in self.workers.values() if (why := w.not_ready()) is not None]
        source = None if self.source is None else self.source.not_ready()
        return waiting if source is None else [source, *waiting]

    def serve(self) -> tuple[str, int]:
        """Start the HTTP endpoints; return the address they listen on."""
        try:
            self.endpoints = Endpoints(self.settings.host, self.settings.port, self.metrics, self.ready)
        except OSError as exc:
            raise ConfigError(
                f"daemon: cannot listen on {self.settings.host}:{self.settings.port}: {exc.strerror}"
            ) from None
        self.endpoints.start()
        host, port = self.endpoints.address
        log.info("listening on http://%s:%d (/metrics, /livez, /readyz)", host, port, extra={"port": port})
        return host, port

    def handle_signals(self) -> None:
        def stop(signum: int, frame: FrameType | None) -> None:
            log.info("%s: stopping", signal.Signals(signum).name)
            self.stop.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)

    def run(self) -> int:
        """Wait for the daemon lease, run the workers until stopped; 0 when stopped, 1 when the
        lease was lost to another daemon, or could not be renewed before it lapsed (this one
        then stops applying)."""
        code = 0
        try:
            if not self._take_lease():
                return 0
            for worker in self.workers.values():
                worker.start()
            bell = threading.Thread(target=self._listen, name="pushdown-bell", daemon=True)
            bell.start()
            if self.source is not None:
                self.source.start()
            renew = max(min(self.settings.lease_ttl / 3, 5.0), 0.05)
            next_renew = time.monotonic() + renew
            while not self.stop.wait(min(renew, 0.5)):
                if time.monotonic() < next_renew:
                    continue
                next_renew = time.monotonic() + renew
                if not self._renew(renew):
                    code = 1
                    self.stop.set()
            for worker in self.workers.values():
                worker.woken.set()  # a worker between looks sees the stop at once
                worker.join()
            bell.join()
            if self.source is not None:
                self.source.join()
        finally:
            self.close()
        log.info("stopped", extra={"result": "stopped"})
        return code

    def _listen(self) -> None:
        """Wake every worker when the store's bell rings (a commit), until stopped."""
        listener = Listener(self.store.path)
        if listener.fd is None:  # no bell here (a store in memory, a directory without pipes)
            log.info("no wake-up bell beside the store; changes are found by the poll")
            return
        try:
            while not self.stop.is_set():
                if listener.wait(0.5):
                    for worker in self.workers.values():
                        worker.woken.set()
        finally:
            listener.close()

    def _try_take(self) -> str | None:
        """Take or renew the lease: None when this daemon holds it (until ``held_until``), else
        who holds it. Raises :class:`PushdownError` when the store could not be asked: that is
        never taken for holding it (two daemons would apply at once)."""
        asked = time.monotonic()
        taken = lease.try_take(self.store, INSTANCE, self.holder, self.settings.lease_ttl)
        if taken is not None:
            return taken[0]
        self.held_until = asked + self.settings.lease_ttl
        return None

    def _renew(self, renew: float) -> bool:
        """Renew the lease; False when this daemon must stop applying: another one holds it, or
        it could not be renewed and would lapse before the next try."""
        try:
            other = self._try_take()
        except PushdownError as exc:  # the store busy for a moment: the lease may outlive it
            left = self.held_until - time.monotonic()
            if left > renew + 0.5:
                log.warning("could not renew the daemon lease (%.1f s left): %s", left, exc)
                return True
            log.error(
                "could not renew the store's daemon lease before it lapses: %s; stopping (nothing more "
                "is applied)",
                exc,
            )
            return False
        if other is not None:
            log.error("lost the store's daemon lease to %s; stopping (nothing more is applied)", other)
            return False
        return True

    def _take_lease(self) -> bool:
        said = None
        while not self.stop.is_set():
            try:
                other = self._try_take()
            except PushdownError as exc:  # not known to hold it: wait, never apply meanwhile
                log.warning("could not take the daemon lease: %s; trying again", exc)
                self.stop.wait(min(1.0, self.settings.lease_ttl / 3))
                continue
            if other is None:
                self.active = True
                self.metrics.active.set(1)
                self.waiting_for = None
                log.info(
                    "active: holding the daemon lease of store %s as %s; backends: %s",
                    self.config.store,
                    self.holder,
                    ", ".join(self.workers),
                    extra={"holder": self.holder},
                )
                return True
            self.waiting_for = other
            if other != said:
                log.info(
                    "standby: %s holds the daemon lease of store %s; waiting (nothing is applied meanwhile)",
                    other,
                    self.config.store,
                    extra={"holder": self.holder, "other": other},
                )
                said = other
            self.stop.wait(min(1.0, self.settings.lease_ttl / 3))
        return False

    def close(self) -> None:
        self.stop.set()
        if self.active:
            lease.give_back(self.store, INSTANCE, self.holder)
            self.active = False
            self.metrics.active.set(0)
        if self.endpoints is not None:
            self.endpoints.close()
            self.endpoints = None
        self.store.close()
