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

import logging
import signal
import threading
import time
from types import FrameType

from pushdown.app.daemon.metrics import Endpoints, Metrics
from pushdown.app.daemon.poller import SourcePoller
from pushdown.app.daemon.worker import Worker
from pushdown.app.service.status import INSTANCE
from pushdown.app.service.storefile import open_store
from pushdown.app.settings import Config
from pushdown.app.settings.daemon import DaemonSettings
from pushdown.errors import ConfigError, PushdownError
from pushdown.host.plugins import Hooks
from pushdown.journal import lease
from pushdown.journal.wake import Listener

log = logging.getLogger("pushdown.daemon")


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
        #: when a full reconcile has read its model, move what is alive out of the cyclic
        #: collector's way (:func:`pushdown.app.service.models.settle`, as ``serve`` does for
        #: the model it answers from): set for a process of its own only (``pushdown
        #: daemon``, ``serve``'s workers), never for a daemon inside a caller's process,
        #: whose objects are not the daemon's to freeze
        self.freeze = False

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
