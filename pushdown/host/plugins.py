"""The plugin host: one plugin manager, typed call sites, entry-point group ``pushdown``."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import click
import pluggy

from pushdown.decide.engine import DEFAULT_ENGINE, LOCAL, Engine
from pushdown.errors import ConfigError
from pushdown.host import hookspecs
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.reconcile.registry import BackendRegistry

ENTRY_POINT_GROUP = "pushdown"
log = logging.getLogger(__name__)


def get_plugin_manager(
    *, load_entry_points: bool = True, extra: Iterable[object] = ()
) -> pluggy.PluginManager:
    pm = pluggy.PluginManager("pushdown")
    pm.add_hookspecs(hookspecs)
    if load_entry_points:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    for plugin in extra:
        pm.register(plugin)
    return pm


@dataclass
class Hooks:
    """Typed wrappers around the hook calls: the only place the core calls a hook."""

    pm: pluggy.PluginManager

    @classmethod
    def load(cls, *, extra: Iterable[object] = (), load_entry_points: bool = True) -> Hooks:
        return cls(get_plugin_manager(load_entry_points=load_entry_points, extra=extra))

    @cached_property
    def backends(self) -> BackendRegistry:
        registry = BackendRegistry()
        self.pm.hook.pushdown_register_backends(registry=registry)
        return registry

    def map_principal(self, backend: str, principal: Principal) -> str:
        mapped = self.pm.hook.pushdown_map_principal(backend=backend, principal=principal)
        return principal.name if mapped is None else str(mapped)

    def mapping_version(self) -> tuple[tuple[str, int], ...]:
        """Which implementations answer ``pushdown_map_principal`` now: a mapping kept
        between syncs is thrown away when this changes (a plugin registered or removed)."""
        impls = self.pm.hook.pushdown_map_principal.get_hookimpls()
        return tuple((impl.plugin_name, id(impl.function)) for impl in impls)

    def mapping_stable(self) -> bool:
        """No plugin implements ``pushdown_map_principal``: every principal maps to its own
        name, which no hook can change between syncs (a hook's answer may change at any
        time, so a mapping kept across syncs is trusted only when there is none)."""
        return not self.pm.hook.pushdown_map_principal.get_hookimpls()

    def group_members(self, group: str) -> set[str]:
        found: set[str] = set()
        for members in self.pm.hook.pushdown_resolve_group_members(group=group):
            if members is not None:
                found.update(members)
        return found

    def event_committed(self, event: Event, seq: int) -> None:
        """Call each observer on its own: one failing observer must not silence the rest."""
        args = {"event": event, "seq": seq}
        for impl in self.pm.hook.pushdown_event_committed.get_hookimpls():
            try:
                impl.function(*(args[name] for name in impl.argnames))
            except Exception:  # an observer must never undo or block a committed change
                log.exception("pushdown_event_committed in %s failed for event %s", impl.plugin_name, seq)

    def engine(self, name: str, settings: Mapping[str, Any]) -> Engine:
        """The engine the configuration names; a clear error when no plugin provides it."""
        if name == DEFAULT_ENGINE:
            return LOCAL
        made = self.pm.hook.pushdown_make_engine(name=name, settings=settings)
        if made is None:
            raise ConfigError(
                f"engine = {name!r}: no installed plugin provides it "
                f'(for engine = "spark", install the pushdown-spark package)'
            )
        return made  # type: ignore[no-any-return]

    def register_commands(self, cli: click.Group) -> None:
        self.pm.hook.pushdown_register_commands(cli=cli)

    def plugins(self) -> list[tuple[str, list[str]]]:
        rows = []
        for name, plugin in self.pm.list_name_plugin():
            hooks = sorted(h.name for h in self.pm.get_hookcallers(plugin) or ())
            rows.append((name, hooks))
        return sorted(rows)
