"""The backend contract every enforcement point implements (MySQL, Hive Metastore, Ranger…).

A backend is level-triggered. Given the model and a scope it computes the facts the
server should hold (``desired``), reads the facts it does hold (``actual``), and the
core diffs the two into a :class:`~pushdown.reconcile.plan.Plan`. ``apply`` executes a plan;
afterwards the core reads back again and requires an empty second plan.

Backends are fenced: ``actual`` reports only facts the backend manages (its marker,
prefix or label), so a diff never removes a grant somebody made by hand unless the
configuration gives the backend the whole scope.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pushdown.errors import ConfigError
from pushdown.model.principals import Principal
from pushdown.model.securables import SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.plan import Fact, Op, Plan, diff, removals_first
from pushdown.reconcile.scope import Scope

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Capabilities:
    """What a backend can express natively; the rest is compiled away (or refused)."""

    roles: bool = False
    groups: bool = False
    deny: bool = False
    wildcards: bool = False
    securable_types: frozenset[SecurableType] = frozenset()

    def describe(self) -> str:
        has = [k for k in ("roles", "groups", "deny", "wildcards") if getattr(self, k)]
        types = ", ".join(sorted(t.value for t in self.securable_types)) or "none"
        return f"{', '.join(has) or 'no roles, groups, deny or wildcards'}; types: {types}"


@dataclass(frozen=True)
class Desired:
    """The facts a backend should hold, and notes on anything it cannot express exactly."""

    facts: frozenset[Fact]
    notes: tuple[str, ...] = ()


@dataclass
class BackendContext:
    """What the core hands a backend: its name, settings, secrets and the plugin hooks."""

    name: str
    settings: Mapping[str, Any]
    secret: Callable[[str], str | None] = lambda key: None
    map_principal: Callable[[Principal], str] = lambda p: p.name
    catalogs: frozenset[str] = field(default_factory=frozenset)

    def setting(self, key: str, default: Any = None, *, required: bool = False) -> Any:
        if key in self.settings:
            return self.settings[key]
        if required:
            raise ConfigError(f"backend {self.name}: setting {key!r} is required")
        return default


class Backend(abc.ABC):
    """Base class of backends. Subclasses set ``kind`` and ``capabilities``."""

    kind: str = "abstract"
    capabilities: Capabilities = Capabilities()

    def __init__(self, context: BackendContext) -> None:
        self.context = context

    @property
    def name(self) -> str:
        return self.context.name

    def enforces(self, model: Model) -> frozenset[str]:
        """Catalogs this backend enforces: those whose ``backend`` property names it."""
        named = {
            obj.names[0]
            for obj, props in model.objects.items()
            if obj.type is SecurableType.CATALOG and props.get("backend") == self.name
        }
        return frozenset(named | self.context.catalogs)

    @abc.abstractmethod
    def desired(self, model: Model, scope: Scope) -> Desired:
        """The facts the server should hold for ``scope``, computed from the model. Pure."""

    @abc.abstractmethod
    def actual(self, scope: Scope) -> Iterable[Fact]:
        """The managed facts the server holds now for ``scope``, read back and normalised."""

    @abc.abstractmethod
    def apply(self, ops: tuple[Op, ...], progress: Progress) -> None:
        """Execute operations in order; call ``progress(n)`` after every ``n`` done."""

    def order(self, op: Op) -> tuple[object, ...]:
        """Sort key for a plan's operations; the default narrows before it widens."""
        return removals_first(op)

    def plan(self, model: Model, scope: Scope) -> Plan:
        """Diff desired against actual. A group or role in scope brings its members in."""
        scope = scope.with_members(model)
        want = self.desired(model, scope)
        return diff(self.name, want.facts, self.actual(scope), scope, order=self.order, notes=want.notes)

    def close(self) -> None:  # noqa: B027 - optional: most backends hold nothing to release
        """Release connections. Called once when the core is done with the backend."""


BackendFactory = Callable[[BackendContext], Backend]


class BackendRegistry:
    """Collects backend kinds; plugins call :meth:`add` from ``pushdown_register_backends``."""

    def __init__(self) -> None:
        self._factories: dict[str, BackendFactory] = {}
        self._origins: dict[str, str] = {}

    def add(self, kind: str, factory: BackendFactory, *, origin: str = "") -> None:
        if kind in self._factories:
            raise ConfigError(f"backend kind {kind!r} registered twice ({self._origins[kind]} and {origin})")
        self._factories[kind] = factory
        self._origins[kind] = origin or getattr(factory, "__module__", "?")

    def create(self, kind: str, context: BackendContext) -> Backend:
        if kind not in self._factories:
            known = ", ".join(sorted(self._factories)) or "none"
            raise ConfigError(f"backend {context.name}: unknown kind {kind!r}; installed kinds: {known}")
        return self._factories[kind](context)

    def kinds(self) -> dict[str, str]:
        return dict(sorted(self._origins.items()))
