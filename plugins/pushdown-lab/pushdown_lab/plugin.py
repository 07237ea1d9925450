"""The entry point (group ``pushdown``) of the lab: ``pushdown demo``, ``demo-hive``,
``demo-ranger`` and ``demo-unitycatalog``."""

from __future__ import annotations

import click

from pushdown.host.hookspecs import hookimpl


@hookimpl
def pushdown_register_commands(cli: click.Group) -> None:
    from pushdown_lab.demos.hive import demo_hive
    from pushdown_lab.demos.mysql import demo
    from pushdown_lab.demos.ranger import demo_ranger
    from pushdown_lab.demos.unitycatalog import demo_unitycatalog

    for command in (demo, demo_hive, demo_ranger, demo_unitycatalog):
        cli.add_command(command)
