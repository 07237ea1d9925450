"""The entry point (group ``pushdown``) of the unitycatalog plugin: the ``unitycatalog`` backend kind."""

from __future__ import annotations

from pushdown.host.hookspecs import hookimpl
from pushdown.reconcile.registry import BackendRegistry
from pushdown_unitycatalog.backend import UnityCatalogBackend


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("unitycatalog", UnityCatalogBackend, origin="pushdown_unitycatalog.plugin")
