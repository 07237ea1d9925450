"""The launchers: how one front-end starts another without importing it.

The front-ends (the CLI in :mod:`pushdown.app.commands`, :mod:`pushdown.app.daemon`,
:mod:`pushdown.app.rest`, :mod:`pushdown.app.source`) never import each other. Where one
starts another — ``pushdown daemon`` and ``pushdown serve`` run the daemon and the REST
service, the daemon and ``pushdown pull`` read the model source, the REST service runs the
daemon's workers in a child process — it asks here, by what it needs, never by module.
The composition root, :mod:`pushdown.app.cli` (the ``pushdown`` entry point, above every
front-end), registers each front-end's launchers when it is imported, before any command
runs. A process that never imported it (a test driving one front-end) has no launchers:
asking for one is a one-line error, never a silent fallback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from pushdown.app.service.library import AccessControl
from pushdown.app.service.sourcestatus import PollResult
from pushdown.app.settings import Config
from pushdown.app.settings.daemon import DaemonSettings
from pushdown.app.settings.serve import ServeSettings
from pushdown.app.settings.source import SourceSettings
from pushdown.errors import ConfigError


class ModelSource(Protocol):
    """A model source's follower (``[source]``): one poll reads it and converges the store."""

    settings: SourceSettings

    def poll(self, ac: AccessControl, *, allow_mass_removal: bool = False) -> PollResult: ...

    def close(self) -> None: ...


class Workers(Protocol):
    """The daemon's workers for another front-end's process (``pushdown serve``), which
    runs ``run`` in a thread of its own until it sets ``stop``; ``wake`` after each change
    it made."""

    stop: threading.Event

    def run(self) -> int: ...

    def wake(self) -> None: ...

    def close(self) -> None: ...


class DaemonLauncher(Protocol):
    """Run the daemon until stopped; the exit code. ``parent``: the workers only, for the
    serving process of that pid (:mod:`pushdown.app.daemon.serving`)."""

    def __call__(self, config: Config, settings: DaemonSettings, *, parent: int | None = None) -> int: ...


@dataclass
class Launchers:
    """What the composition root registered (None: not in this process)."""

    #: run the daemon until stopped; the exit code
    daemon: DaemonLauncher | None = None
    #: serve the REST API until stopped; the exit code
    serve: Callable[[Config, ServeSettings], int] | None = None
    #: the follower of the configured model source
    source: Callable[[Config], ModelSource] | None = None
    #: the daemon's workers for a serving process
    workers: Callable[[Config], Workers] | None = None


LAUNCHERS = Launchers()


def register(
    *,
    daemon: DaemonLauncher,
    serve: Callable[[Config, ServeSettings], int],
    source: Callable[[Config], ModelSource],
    workers: Callable[[Config], Workers],
) -> None:
    """Called once, by the composition root."""
    LAUNCHERS.daemon, LAUNCHERS.serve, LAUNCHERS.source, LAUNCHERS.workers = daemon, serve, source, workers


def _missing(what: str) -> ConfigError:
    return ConfigError(f"{what} is not available in this process (start it with the pushdown command)")


def run_daemon(config: Config, settings: DaemonSettings, *, parent: int | None = None) -> int:
    if LAUNCHERS.daemon is None:
        raise _missing("the daemon")
    return LAUNCHERS.daemon(config, settings, parent=parent)


def serve(config: Config, settings: ServeSettings) -> int:
    if LAUNCHERS.serve is None:
        raise _missing("the REST service")
    return LAUNCHERS.serve(config, settings)


def model_source(config: Config) -> ModelSource:
    if LAUNCHERS.source is None:
        raise _missing("the model source")
    return LAUNCHERS.source(config)


def workers(config: Config) -> Workers:
    if LAUNCHERS.workers is None:
        raise _missing("the daemon's workers")
    return LAUNCHERS.workers(config)
