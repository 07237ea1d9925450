"""Cost follows the change, counted not timed: the scoped compile of a one-table grant
visits as many users' mappings and model objects in an estate ten times larger. Pure.

The counted bound holds when no plugin implements ``pushdown_map_principal`` (the mapping
is then a pure function of the backend's settings, kept across syncs). With a mapping hook
the cost is whole-model by design: the hook may answer otherwise for any user at any time,
so every sync that grants maps every user again, or a clash caused by a user outside the
scope would go unseen."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope, scope_of
from pushdown_mysql.compile import AccountNaming, ServerObjects, compile_desired
from pushdown_mysql.identity import sharing
from pushdown_mysql.names import keyed_objects

#: what a one-table change may visit, whatever the estate (measured 3 and 1; before the
#: kept identity and the model's marks: 21 and 121 at scale 1, 201 and 1,201 at scale 10)
MAPPINGS_BOUND = 5
OBJECTS_BOUND = 10


def _do(model: Model, events: list[object]) -> None:
    for event in events:
        model.apply(event)  # type: ignore[arg-type]


def _grant(model: Model, role: str, obj: str, *privileges: str) -> None:
    _do(model, ch.grant_privileges(model, role, ObjectRef.parse(obj), list(privileges)))


def estate(scale: int) -> Model:
    """``scale`` x (10 users, 10 roles, 10 tables in the MySQL catalog, 100 tables in a
    catalog no backend enforces), each user holding a role with a grant on one table."""
    model = Model()
    _do(model, ch.create_object(model, ObjectRef.of("catalog", "c"), properties={"backend": "m"}))
    _do(model, ch.create_object(model, ObjectRef.of("catalog", "lake")))
    _do(model, ch.create_object(model, ObjectRef.parse("schema c.crm")))
    _do(model, ch.create_object(model, ObjectRef.parse("schema lake.raw")))
    _do(model, ch.create_role(model, "base"))
    _do(
        model, ch.grant_privileges(model, "base", ObjectRef.of("catalog", "c"), ["USE_CATALOG", "USE_SCHEMA"])
    )
    for i in range(10 * scale):
        _do(model, ch.add_user(model, f"u{i}"))
        _do(model, ch.create_role(model, f"r{i}"))
        _do(model, ch.create_object(model, ObjectRef.parse(f"table c.crm.t{i}")))
        _do(
            model, ch.grant_privileges(model, f"r{i}", ObjectRef.parse(f"table c.crm.t{i}"), ["SELECT_TABLE"])
        )
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
    objects: int = 0


@contextmanager
def counting(monkeypatch: pytest.MonkeyPatch, counts: Counts) -> Iterator[None]:
    """Count every ``ObjectRef.catalog`` and ``is_within`` asked (a model object visited)."""
    catalog, within = ObjectRef.catalog, ObjectRef.is_within

    def counted_catalog(self: ObjectRef) -> str | None:
        counts.objects += 1
        return catalog.fget(self)  # type: ignore[attr-defined, no-any-return]

    def counted_within(self: ObjectRef, root: ObjectRef) -> bool:
        counts.objects += 1
        return within(self, root)

    with monkeypatch.context() as m:
        m.setattr(ObjectRef, "catalog", property(counted_catalog))
        m.setattr(ObjectRef, "is_within", counted_within)
        yield


def one_table_change(scale: int, monkeypatch: pytest.MonkeyPatch) -> Counts:
    counts = Counts()

    def mapper(p: Principal) -> str:
        counts.mappings += 1
        return p.name

    model = estate(scale)
    naming = AccountNaming(map_principal=mapper, mapping_stable=lambda: True)  # no mapping hook
    inventory = ServerObjects(frozenset({"crm"}), frozenset({("crm", "t0"), ("crm", "t1")}))
    everything = Scope.everything().resolve(model)
    compile_desired(model, "c", inventory, frozenset(), naming, everything)  # the first sync
    counts.mappings = 0
    events = ch.grant_privileges(model, "r1", ObjectRef.parse("table c.crm.t0"), ["MODIFY_TABLE"])
    _do(model, events)
    with counting(monkeypatch, counts):
        scope = scope_of(events[0]).resolve(model)
        scope = sharing(scope, model, naming)
        compile_desired(model, "c", inventory, frozenset(), naming, scope)
    return counts


def test_a_one_table_change_visits_as_much_in_an_estate_ten_times_larger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small, large = one_table_change(1, monkeypatch), one_table_change(10, monkeypatch)
    assert small == large, (small, large)
    assert small.mappings <= MAPPINGS_BOUND and small.objects <= OBJECTS_BOUND, small


def test_objects_with_grants_are_found_by_key_within_their_catalog() -> None:
    model = estate(1)
    data = ("schema", "table")
    everywhere = {o for o in (*model.by_object, *model.owners) if o.type.value in data}
    assert set(keyed_objects(model, "c")) == {o for o in everywhere if o.catalog == "c"}
