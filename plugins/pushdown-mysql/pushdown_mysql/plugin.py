"""The entry point (group ``pushdown``): the ``mysql`` backend kind."""

from __future__ import annotations

from pushdown.host.hookspecs import hookimpl
from pushdown.reconcile.registry import BackendRegistry
from pushdown_mysql.backend import MySQLBackend


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("mysql", MySQLBackend, origin="pushdown_mysql.plugin")
