"""The entry point (group ``pushdown``) of the hive plugin: the ``hive`` backend kind
and ``pushdown demo-hive``."""

from __future__ import annotations

import click

from pushdown.host.hookspecs import hookimpl
from pushdown.reconcile.registry import BackendRegistry
from pushdown_hive.backend import HiveBackend


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("hive", HiveBackend, origin="pushdown_hive.plugin")


@hookimpl
def pushdown_register_commands(cli: click.Group) -> None:
    from pushdown_hive.demo import demo_hive

    cli.add_command(demo_hive)
