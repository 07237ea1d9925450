"""The entry point (group ``pushdown``): the ``ranger`` backend kind and ``pushdown demo-ranger``."""

from __future__ import annotations

import click

from pushdown.host.hookspecs import hookimpl
from pushdown.reconcile.registry import BackendRegistry
from pushdown_ranger.backend import RangerBackend


@hookimpl
def pushdown_register_backends(registry: BackendRegistry) -> None:
    registry.add("ranger", RangerBackend, origin="pushdown_ranger.plugin")


@hookimpl
def pushdown_register_commands(cli: click.Group) -> None:
    from pushdown_ranger.demo import demo_ranger

    cli.add_command(demo_ranger)
