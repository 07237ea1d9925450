"""The entry point (group ``pushdown``): the ``ranger`` backend kind."""

from __future__ import annotations

from pushdown.host.hookspecs import hookimpl
from pushdown.reconcile.registry import BackendRegistry
from pushdown_ranger.backend import RangerBackend


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("ranger", RangerBackend, origin="pushdown_ranger.plugin")
