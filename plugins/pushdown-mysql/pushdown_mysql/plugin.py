"""The entry point (group ``pushdown``): the ``mysql`` backend kind and ``pushdown demo``."""

from __future__ import annotations

import click

from pushdown.host.hookspecs import hookimpl
from pushdown.reconcile.registry import BackendRegistry
from pushdown_mysql.backend import MySQLBackend


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("mysql", MySQLBackend, origin="pushdown_mysql.plugin")


@hookimpl
def pushdown_register_commands(cli: click.Group) -> None:
    from pushdown_mysql.demo import demo

    cli.add_command(demo)
