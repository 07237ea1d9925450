"""The daemon's launchers, registered by the composition root (:mod:`pushdown.app.cli`) in
:mod:`pushdown.app.service.frontends`: ``pushdown daemon`` runs :func:`run`; ``pushdown
serve`` runs the workers of :func:`serving` in a child process, which is ``pushdown daemon
--serving PID`` (:func:`run` with ``parent``)."""

from __future__ import annotations

from pushdown.app.daemon.runner import Daemon
from pushdown.app.daemon.serving import WorkerProcess, lower_priority, watch_parent
from pushdown.app.settings import Config
from pushdown.app.settings.daemon import DaemonSettings


def run(config: Config, settings: DaemonSettings, *, parent: int | None = None) -> int:
    """Run until stopped (SIGTERM stops it gracefully); the exit code. With ``parent`` (the
    serving process's pid) the workers only: no HTTP endpoints, and stopped when the
    serving process is gone."""
    if parent is not None:
        lower_priority(settings.nice)
    d = Daemon(config, settings=settings)
    d.freeze = settings.freeze
    try:
        d.handle_signals()
        if parent is None:
            d.serve()
        else:
            watch_parent(parent, d.stop)
    except BaseException:
        d.close()
        raise
    return d.run()


def serving(config: Config) -> WorkerProcess:
    """The daemon's workers for a serving process, in a child process of their own."""
    return WorkerProcess(config)
