"""The CLI front-end: the ``pushdown`` command group (:data:`main`), one module per group of
commands. It uses the service, the settings and the core; it starts the other front-ends
only through the launchers (:mod:`pushdown.app.service.frontends`). The entry point that
wires everything is :mod:`pushdown.app.cli`."""

from __future__ import annotations

from pushdown.app.commands import dialects, plans, reading, running, status
from pushdown.app.commands.base import main

__all__ = ["dialects", "main", "plans", "reading", "running", "status"]
