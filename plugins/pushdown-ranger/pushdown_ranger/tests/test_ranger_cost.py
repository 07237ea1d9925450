"""Cost follows the change, counted not timed (issue 30): the scoped compile of a one-table
grant maps as many users, and visits as many model objects by key, in an estate ten times
larger. Pure.

Measured (one table, scale 1 / scale 10): 1 / 1 mapping calls, 1 / 1 objects by key; kept
estate-sized: 15 / 105 role reads, 10 / 100 schemas looked into, 33 / 303 catalog grants
scanned (before the kept identity, 50 / 500 mapping calls).

A scoped Ranger sync compiles the Hive database of the change (a Ranger focus is a
database), not its catalog. Two steps stay estate-sized on purpose, and are counted apart:
every scoped sync compiles pushdown's roles (one per model role: a member added by hand is
taken out by the next sync, whatever its scope) and its topics and filesets (the catalog's
schemas are scanned for them). The mapping is kept between syncs
(:class:`~pushdown.reconcile.identity.KeptIdentity`), trusted only while no plugin
implements ``pushdown_map_principal``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.identity import KeptIdentity
from pushdown.reconcile.scope import scope_of
from pushdown_ranger.compile import compile_all
from pushdown_ranger.compile.naming import RangerNaming
from pushdown_ranger.facts import PolicyFact
from pushdown_ranger.scoping import focus_of, scope_users

#: what a one-table change may map and visit by key, whatever the estate (measured 1 and 1;
#: mappings before the kept identity: 50 at scale 1, 500 at scale 10)
MAPPINGS_BOUND = 2
OBJECTS_BOUND = 12
DENY = {"hive": True, "hdfs": True, "kafka": True}


def _do(model: Model, events: list[object]) -> None:
    for event in events:
        model.apply(event)  # type: ignore[arg-type]


def estate(scale: int) -> Model:
    """``scale`` x (10 users, 10 roles, 10 schemas of one table in the Ranger catalog, 100
    tables in a catalog no backend enforces), each user holding a role with a grant on one
    table."""
    model = Model()
    _do(model, ch.create_object(model, ObjectRef.of("catalog", "c"), properties={"backend": "rg"}))
    _do(model, ch.create_object(model, ObjectRef.of("catalog", "lake")))
    _do(model, ch.create_object(model, ObjectRef.parse("schema lake.raw")))
    _do(model, ch.create_role(model, "base"))
    _do(
        model, ch.grant_privileges(model, "base", ObjectRef.of("catalog", "c"), ["USE_CATALOG", "USE_SCHEMA"])
    )
    for i in range(10 * scale):
        table = ObjectRef.parse(f"table c.s{i}.t{i}")
        _do(model, ch.add_user(model, f"u{i}"))
        _do(model, ch.create_role(model, f"r{i}"))
        _do(model, ch.create_object(model, ObjectRef.parse(f"schema c.s{i}")))
        _do(model, ch.create_object(model, table))
        _do(model, ch.grant_privileges(model, f"r{i}", table, ["SELECT_TABLE"]))
        _do(model, ch.grant_role(model, f"r{i}", Principal.user(f"u{i}")))
        _do(model, ch.grant_role(model, "base", Principal.user(f"u{i}")))
    for i in range(100 * scale):
        _do(model, ch.create_object(model, ObjectRef.parse(f"table lake.raw.x{i}")))
        _do(
            model, ch.grant_privileges(model, "r0", ObjectRef.parse(f"table lake.raw.x{i}"), ["SELECT_TABLE"])
        )
    return model


@dataclass
class Counts:
    mappings: int = 0
    #: model objects looked at by key (their catalog, ancestors, marks)
    objects: int = 0
    #: the estate-sized steps kept on purpose: roles whose holders are read, and the scans of
    #: the catalog for topics, filesets and case twins (its schemas, and what its grants name)
    roles: int = 0
    schemas: int = 0
    scanned: int = 0


@contextmanager
def counting(monkeypatch: pytest.MonkeyPatch, counts: Counts) -> Iterator[None]:
    catalog, within, ancestor = ObjectRef.catalog, ObjectRef.is_within, ObjectRef.ancestor
    marked, holders, children = Model.marked_within, Model.holders_of, Model.children

    def counted_catalog(self: ObjectRef) -> str | None:
        counts.objects += 1
        return catalog.fget(self)  # type: ignore[attr-defined, no-any-return]

    def counted_within(self: ObjectRef, root: ObjectRef) -> bool:
        counts.objects += 1
        return within(self, root)

    def counted_ancestor(self: ObjectRef, kind: object) -> ObjectRef | None:
        counts.objects += 1
        return ancestor(self, kind)  # type: ignore[arg-type]

    def counted_marked(self: Model, root: ObjectRef) -> object:
        found = marked(self, root)
        if root.type.value == "catalog":
            counts.scanned += len(found)
        else:
            counts.objects += len(found)
        return found

    def counted_holders(self: Model, role: str) -> set[str]:
        counts.roles += 1
        return holders(self, role)

    def counted_children(self: Model, obj: ObjectRef) -> Iterator[ObjectRef]:
        counts.schemas += obj.type.value == "schema"
        return children(self, obj)

    with monkeypatch.context() as m:
        m.setattr(ObjectRef, "catalog", property(counted_catalog))
        m.setattr(ObjectRef, "is_within", counted_within)
        m.setattr(ObjectRef, "ancestor", counted_ancestor)
        m.setattr(Model, "marked_within", counted_marked)
        m.setattr(Model, "holders_of", counted_holders)
        m.setattr(Model, "children", counted_children)
        yield


def one_table_change(scale: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Counts, frozenset[object]]:
    counts = Counts()

    def mapper(p: Principal) -> str:
        counts.mappings += 1
        return p.name

    model = estate(scale)
    naming = RangerNaming(map_principal=mapper)
    kept = KeptIdentity(naming.user, stable=lambda: True)  # no mapping hook
    kw = {"elsewhere": frozenset(), "hive": "c", "voided": {}, "services": frozenset(DENY)}
    compile_all(model, ["c"], naming, DENY, focus=None, identity=kept.of(model.users), **kw)  # first sync
    table = ObjectRef.parse("table c.s0.t0")
    events = ch.grant_privileges(model, "r1", table, ["MODIFY_TABLE"])
    _do(model, events)
    counts.mappings = 0
    with counting(monkeypatch, counts):
        scope = scope_of(events[0]).resolve(model)
        focus = focus_of(scope, "c")
        identity = kept.of(model.users, scope_users(scope))
        desired = compile_all(model, ["c"], naming, DENY, focus=focus, identity=identity, **kw)
    hive = frozenset(f for f in desired.facts if isinstance(f, PolicyFact))
    return counts, hive


def test_a_one_table_change_maps_and_visits_as_much_in_an_estate_ten_times_larger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (small, small_hive), (large, large_hive) = (
        one_table_change(1, monkeypatch),
        one_table_change(10, monkeypatch),
    )
    print(f"\nranger scoped compile, one table: scale 1 {small}, scale 10 {large}")
    assert small_hive == large_hive  # the same policies: the change's database only
    assert (small.mappings, small.objects) == (large.mappings, large.objects), (small, large)
    assert small.mappings <= MAPPINGS_BOUND and small.objects <= OBJECTS_BOUND, small
    # the steps kept estate-sized grow with it, no faster (one read per role, one look per
    # schema, each scan of the catalog's grants once)
    for kept in ("roles", "schemas", "scanned"):
        assert getattr(large, kept) <= 10 * getattr(small, kept), (kept, small, large)
