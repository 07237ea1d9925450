"""The daemon's launchers, registered by the composition root (:mod:`pushdown.app.cli`) in
:mod:`pushdown.app.service.frontends`: ``pushdown daemon`` runs :func:`run`; ``pushdown
serve`` runs the workers of :func:`serving` in its own process."""

from __future__ import annotations

from pushdown.app.daemon.runner import Daemon
from pushdown.app.daemon.serving import ServingDaemon
from pushdown.app.settings import Config
from pushdown.app.settings.daemon import DaemonSettings


def run(config: Config, settings: DaemonSettings) -> int:
    """Run until stopped (SIGTERM stops it gracefully); the exit code."""
    d = Daemon(config, settings=settings)
    try:
        d.handle_signals()
        d.serve()
    except BaseException:
        d.close()
        raise
    return d.run()


def serving(config: Config) -> ServingDaemon:
    """The daemon's workers for a serving process, woken by its changes."""
    return ServingDaemon(config)
