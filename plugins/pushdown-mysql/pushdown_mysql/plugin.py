"""The entry point (group ``pushdown``): registers the ``mysql`` backend kind."""

from __future__ import annotations

from pushdown.backend import BackendRegistry
from pushdown.hookspecs import hookimpl
from pushdown_mysql.backend import MySQLBackend


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("mysql", MySQLBackend, origin="pushdown_mysql.plugin")
