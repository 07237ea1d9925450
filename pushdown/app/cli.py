"""The ``pushdown`` entry point and the app wing's composition root: the one module above
every front-end. It registers each front-end's launchers with the service
(:mod:`pushdown.app.service.frontends`) so that one front-end can start another without
importing it, then adds the plugins' commands and the dialects' to the CLI's group
(:mod:`pushdown.app.commands`). ``pushdown = "pushdown.app.cli:main"``; ``python -m
pushdown.app.cli`` runs it too.
"""

from __future__ import annotations

from pushdown.app.commands import dialects, main
from pushdown.app.daemon import launch as daemon_launch
from pushdown.app.rest.server import serve
from pushdown.app.service import frontends
from pushdown.app.source.follow import Follower
from pushdown.host.plugins import Hooks

__all__ = ["main"]

frontends.register(daemon=daemon_launch.run, serve=serve, source=Follower, workers=daemon_launch.serving)
Hooks.load().register_commands(main)
dialects.register(main)

if __name__ == "__main__":  # pragma: no cover
    main()
