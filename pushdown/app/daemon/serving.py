"""The daemon's workers for ``pushdown serve``, in a process of their own; started through
the launchers (:mod:`pushdown.app.service.frontends`).

A sync compiles and applies in Python: in the serving process it would share the
interpreter (and the event loop's thread) with the HTTP server, and every answer given
while it runs would wait on it. So the server starts one child process, ``pushdown daemon
--serving PID`` over the same config and store (:class:`WorkerProcess`):

- the child is the daemon without its HTTP endpoints: it takes the store's daemon lease,
  runs one worker per backend, records every outcome in the store (``pushdown status``),
  and logs to the server's own stderr, in its format and level;
- each commit rings the store's bell (:mod:`pushdown.journal.wake`): the child's workers
  wake at once, whichever process committed; the poll still finds what a bell missed;
- the server stops it with SIGTERM when it stops (a worker abandons its apply after the
  statement in flight; SIGKILL after ``STOP_WAIT``) and reaps it; the child also stops on
  its own when the server is gone (its parent changes), so it never outlives it;
- a child that dies is started again after a back-off (``[daemon] backoff_min`` doubling
  to ``backoff_max``); one that ran ``STABLE`` seconds starts the count again.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time

from pushdown.app.daemon.following import backoff
from pushdown.app.service.logs import current
from pushdown.app.settings import Config

log = logging.getLogger("pushdown.serve")
daemon_log = logging.getLogger("pushdown.daemon")

#: seconds the child has to stop after SIGTERM before it is killed
STOP_WAIT = 30.0
#: a child that ran this long before dying starts the back-off again
STABLE = 60.0
#: seconds between looks at the parent, in the child
WATCH_EVERY = 0.5


class WorkerProcess:
    """Runs the daemon's workers in a child process until stopped (``stop``)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.settings = config.daemon
        self.stop = threading.Event()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._lock = threading.Lock()  # stop() and a start never cross

    def command(self) -> list[str]:
        fmt, level = current()
        return [
            sys.executable,
            "-m",
            "pushdown.app.cli",
            "--config",
            os.path.abspath(self.config.source),
            "daemon",
            "--log-format",
            fmt,
            "--log-level",
            level,
            "--serving",
            str(os.getpid()),
        ]

    def wake(self) -> None:
        """Nothing to do: the commit rang the store's bell, which the child listens to."""

    def run(self) -> int:
        """Start the child, and again whenever it dies, until stopped; 0."""
        rng = random.Random()  # noqa: S311 - jitter, not a secret
        failures = 0
        try:
            while not self.stop.is_set():
                started = time.monotonic()
                proc = self._start()
                if proc is None:
                    break
                code = self._wait(proc)
                if code is None:  # stopped
                    break
                failures = 1 if time.monotonic() - started > STABLE else failures + 1
                delay = backoff(failures, self.settings, rng, None)
                log.error(
                    "the workers' process %d exited (%s); starting it again in %.1f s",
                    proc.pid,
                    _said(code),
                    delay,
                    extra={"workers_pid": proc.pid, "exit": code},
                )
                self.stop.wait(delay)
        finally:
            self.close()
        return 0

    def _start(self) -> subprocess.Popen[bytes] | None:
        with self._lock:
            if self.stop.is_set():
                return None
            self.proc = subprocess.Popen(  # noqa: S603 - this interpreter, pushdown's own command
                self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, close_fds=True
            )
            self.starts += 1
        log.info(
            "the daemon's workers run in process %d (backends: %s)",
            self.proc.pid,
            ", ".join(sorted(self.config.backends)),
            extra={"workers_pid": self.proc.pid},
        )
        return self.proc

    def _wait(self, proc: subprocess.Popen[bytes]) -> int | None:
        """The child's exit code, or None once stopped (the child still running)."""
        while not self.stop.is_set():
            try:
                return proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                continue
        return None

    def close(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after ``STOP_WAIT``) and reap it."""
        with self._lock:
            self.stop.set()
            proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            log.error("the workers' process %d did not stop within %.0f s: killed", proc.pid, STOP_WAIT)
            proc.kill()
            proc.wait()


def _said(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def lower_priority(by: int) -> None:
    """In the child: run ``by`` lower in CPU priority than the serving process (best effort;
    ``[daemon] nice``): on a busy host the answers win the CPU, and a sync still runs
    whenever the server waits."""
    if by <= 0:
        return
    try:
        os.nice(by)
    except OSError as exc:
        daemon_log.warning("could not lower the workers' CPU priority: %s", exc.strerror)


def watch_parent(parent: int, stop: threading.Event) -> threading.Thread:
    """In the child: set ``stop`` when the process ``parent`` is no longer its parent (it
    died, however: the child never outlives the server)."""

    def watch() -> None:
        while not stop.wait(WATCH_EVERY):
            if os.getppid() != parent:
                daemon_log.warning("the serving process %d is gone: stopping", parent)
                stop.set()

    thread = threading.Thread(target=watch, name="pushdown-parent", daemon=True)
    thread.start()
    return thread
