"""The shared harness of the backends' counted-cost tests: cost follows the change, counted
not timed. A change is synced in an :func:`estate` at two scales ten times apart, and what it
cost (mappings, model objects visited, calls) must be the same at both
(:func:`same_at_both_scales`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

import pytest

from pushdown.host.hookspecs import hookimpl
from pushdown.host.plugins import Hooks
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

T = TypeVar("T")

#: the two scales a cost is measured at, ten times apart
SMALL, LARGE = 1, 10


def do(model: Model, events: Iterable[ev.Event]) -> None:
    for event in events:
        model.apply(event)


def estate(scale: int, backend: str, *, schema_each: bool = False, gate_each: bool = False) -> Model:
    """``scale`` x (10 users, 10 roles, 10 tables in catalog ``c`` enforced by ``backend``,
    100 tables in a catalog no backend enforces), each user holding a role with a grant on
    one table, and every user role ``base`` with the USE gates on ``c``.

    The tables of ``c`` are ``c.crm.t{i}``, or with ``schema_each`` each in its own schema,
    ``c.s{i}.t{i}``; with ``gate_each`` every role holds ``c``'s USE_CATALOG too."""
    model = Model()
    do(model, ch.create_object(model, ObjectRef.of("catalog", "c"), properties={"backend": backend}))
    do(model, ch.create_object(model, ObjectRef.of("catalog", "lake")))
    if not schema_each:
        do(model, ch.create_object(model, ObjectRef.parse("schema c.crm")))
    do(model, ch.create_object(model, ObjectRef.parse("schema lake.raw")))
    do(model, ch.create_role(model, "base"))
    do(model, ch.grant_privileges(model, "base", ObjectRef.of("catalog", "c"), ["USE_CATALOG", "USE_SCHEMA"]))
    for i in range(10 * scale):
        table = ObjectRef.parse(f"table c.s{i}.t{i}" if schema_each else f"table c.crm.t{i}")
        do(model, ch.add_user(model, f"u{i}"))
        do(model, ch.create_role(model, f"r{i}"))
        if schema_each:
            do(model, ch.create_object(model, ObjectRef.parse(f"schema c.s{i}")))
        do(model, ch.create_object(model, table))
        do(model, ch.grant_privileges(model, f"r{i}", table, ["SELECT_TABLE"]))
        if gate_each:
            do(model, ch.grant_privileges(model, f"r{i}", ObjectRef.of("catalog", "c"), ["USE_CATALOG"]))
        do(model, ch.grant_role(model, f"r{i}", Principal.user(f"u{i}")))
        do(model, ch.grant_role(model, "base", Principal.user(f"u{i}")))
    for i in range(100 * scale):
        table = ObjectRef.parse(f"table lake.raw.x{i}")
        do(model, ch.create_object(model, table))
        do(model, ch.grant_privileges(model, "r0", table, ["SELECT_TABLE"]))
    return model


class Mapper:
    """The identity mapping of principals to backend names, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, principal: Principal) -> str:
        self.calls += 1
        return principal.name


@dataclass
class Counts:
    mappings: int = 0
    #: model objects visited (their catalog asked, or whether they lie within another)
    objects: int = 0


@contextmanager
def counting_objects(m: pytest.MonkeyPatch, counts: Counts) -> Iterator[None]:
    """Count every ``ObjectRef.catalog`` and ``is_within`` asked (a model object visited)."""
    catalog, within = ObjectRef.catalog, ObjectRef.is_within

    def counted_catalog(self: ObjectRef) -> str | None:
        counts.objects += 1
        return catalog.fget(self)  # type: ignore[attr-defined, no-any-return]

    def counted_within(self: ObjectRef, root: ObjectRef) -> bool:
        counts.objects += 1
        return within(self, root)

    with m.context() as patched:
        patched.setattr(ObjectRef, "catalog", property(counted_catalog))
        patched.setattr(ObjectRef, "is_within", counted_within)
        yield


def at_both_scales(cost: Callable[[int], T]) -> tuple[T, T]:
    """What ``cost`` measured at the small scale and at the large one."""
    return cost(SMALL), cost(LARGE)


def same_at_both_scales(cost: Callable[[int], T]) -> T:
    """What ``cost`` measured, asserted the same at both scales."""
    small, large = at_both_scales(cost)
    assert small == large, (small, large)
    return small


class Aliases:
    """A plugin mapping principals by name (``alias``): a test changes its answer underneath,
    no plugin comes or goes, so the mapping version stays the same."""

    def __init__(self) -> None:
        self.alias: dict[str, str] = {}

    @hookimpl
    def pushdown_map_principal(self, backend: str, principal: Principal) -> str | None:
        return self.alias.get(principal.name)


def clash_model(backend: str, *, carol: bool = True) -> Model:
    """The mapping-clash model: users bob (and carol), catalog ``c`` enforced by ``backend``
    with schema ``c.hr``, role ``r`` with ``c``'s USE gates held by bob alone."""
    model = Model()
    for step in (
        lambda: ch.add_user(model, "bob"),
        lambda: ch.add_user(model, "carol") if carol else [],
        lambda: ch.create_object(model, ObjectRef.of("catalog", "c"), properties={"backend": backend}),
        lambda: ch.create_object(model, ObjectRef.parse("schema c.hr")),
        lambda: ch.create_role(model, "r"),
        lambda: ch.grant_privileges(model, "r", ObjectRef.of("catalog", "c"), ["USE_CATALOG", "USE_SCHEMA"]),
        lambda: ch.grant_role(model, "r", Principal.user("bob")),
    ):
        do(model, step())
    return model


def aliased_hooks() -> tuple[Aliases, Hooks]:
    """The hooks with an :class:`Aliases` plugin (none from entry points): mapping not stable."""
    aliases = Aliases()
    hooks = Hooks.load(extra=[aliases], load_entry_points=False)
    assert not hooks.mapping_stable()
    return aliases, hooks
