"""Every hook pushdown calls. Hooks only ever gain arguments; call them with keywords."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import click
import pluggy

from pushdown.decide.engine import Engine
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.reconcile.registry import BackendRegistry

hookspec = pluggy.HookspecMarker("pushdown")
hookimpl = pluggy.HookimplMarker("pushdown")


@hookspec
def pushdown_register_backends(registry: BackendRegistry) -> None:
    """Fires once, when the plugin manager is built. Call ``registry.add(kind, factory)``
    for each backend kind the plugin provides. Returns nothing."""


@hookspec(firstresult=True)
def pushdown_map_principal(backend: str, principal: Principal) -> str | None:
    """Fires when a backend needs the server-side name of a model user, group or role.
    Return that name, or ``None`` to leave the choice to the next plugin (the last
    resort is the model's own name, unchanged)."""


@hookspec
def pushdown_resolve_group_members(group: str) -> Iterable[str] | None:
    """Fires before a sync computes desired state, once per group in the model.
    Return user names that belong to ``group`` according to an outside directory;
    they are added to the group's members (and to the metalake's users) for that
    sync only. ``None`` means this plugin knows nothing about the group."""


@hookspec
def pushdown_event_committed(event: Event, seq: int) -> None:
    """Fires after each event is committed to the journal, with its sequence number.
    For observers (audit, metrics). Returns nothing; an exception is logged, never
    undoes the change."""


@hookspec
def pushdown_register_commands(cli: click.Group) -> None:
    """Fires once, when the ``pushdown`` command starts. Add subcommands with
    ``cli.add_command(...)`` or ``@cli.command()``. Returns nothing."""


@hookspec(firstresult=True)
def pushdown_make_engine(name: str, settings: Mapping[str, Any]) -> Engine | None:
    """Fires when the configuration names an engine other than ``local`` (``engine =
    "spark"``), with that engine's settings table. Return the engine (it may start its
    cluster connection lazily, on the first compile), or ``None`` when the name is not
    this plugin's."""
