"""The daemon's workers inside the serving process (``pushdown serve``), woken by each change
made over HTTP; started through the launchers (:mod:`pushdown.app.service.frontends`).

The daemon's workers look at the journal every ``poll``; here a change made through the
server wakes them at once (:meth:`ServingDaemon.wake`), so it reaches the backends
without waiting for the next look. Changes made by other processes are still found by
the poll. Everything else (the daemon lease, back-off, full reconciles) is the daemon's.
"""

from __future__ import annotations

import threading

from pushdown.app.daemon.runner import Daemon
from pushdown.app.daemon.worker import Worker
from pushdown.app.settings import Config


class WakeableWorker(Worker):
    def __init__(self, daemon: Daemon, backend: str) -> None:
        super().__init__(daemon, backend)
        self.woken = threading.Event()

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


class ServingDaemon(Daemon):
    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.workers = {name: WakeableWorker(self, name) for name in sorted(config.backends)}

    def wake(self) -> None:
        for worker in self.workers.values():
            assert isinstance(worker, WakeableWorker)
            worker.woken.set()

    def close(self) -> None:
        super().close()
        self.wake()  # a worker waiting for the next look sees the stop at once
