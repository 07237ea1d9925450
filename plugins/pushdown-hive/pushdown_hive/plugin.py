"""The entry point (group ``pushdown``) of the hive plugin: the ``hive`` backend kind."""

from __future__ import annotations

from pushdown.host.hookspecs import hookimpl
from pushdown.reconcile.registry import BackendRegistry
from pushdown_hive.backend import HiveBackend


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("hive", HiveBackend, origin="pushdown_hive.plugin")
