"""The daemon's model-source poller: reads the source every ``[source] interval`` through the
launcher the composition root registered (:mod:`pushdown.app.service.frontends`)."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from pushdown.app.service import AccessControl, frontends
from pushdown.app.service.storefile import open_store

if TYPE_CHECKING:
    from pushdown.app.daemon.runner import Daemon

log = logging.getLogger("pushdown.daemon")


class SourcePoller(threading.Thread):
    """Reads the model source every ``[source] interval`` and converges the store's model to
    it (the source's follower); the backends' workers push what changed. A
    read that fails or is held back changes nothing: the store records why, and the next
    interval tries again."""

    def __init__(self, daemon: Daemon) -> None:
        super().__init__(name="pushdown-source", daemon=True)
        self.d = daemon
        self.follower = frontends.model_source(daemon.config)
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
