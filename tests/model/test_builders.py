"""The shared builder of test worlds: what it builds, and what ``models()`` can draw."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, Phase, find, settings

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import ModelError
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Grant, Model
from tests.builders import CATALOG, OBJECTS, OTHER_CATALOG, Builder, index_of, models

T = SecurableType
ORDERS = ObjectRef.of("table", "sales.crm.orders")


def sales() -> Builder:
    return (
        Builder()
        .users("alice", "bob")
        .group("analysts", "alice")
        .catalog("sales", owner="bob")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .table("sales.crm.customers")
        .role("reader", users=["bob"], groups=["analysts"])
        .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
        .deny("reader", ORDERS, "SELECT_TABLE")
    )


def test_the_builder_applies_each_step_through_changes() -> None:
    m = sales().model
    assert m.users == {"alice", "bob"} and m.groups == {"analysts": {"alice"}}
    assert m.objects[ObjectRef.of("catalog", "sales")] == {"backend": "x"}
    assert m.owners == {ObjectRef.of("catalog", "sales"): "bob"}
    assert Grant(ORDERS, Privilege.SELECT_TABLE, Condition.DENY) in m.roles["reader"]
    assert m.holders_of("reader") == {"alice", "bob"}
    assert m.by_object == index_of(m)
    ev = Evaluator(m)
    assert ev.authorize("alice", "load_table", ObjectRef.of("table", "sales.crm.customers")).allowed
    assert not ev.authorize("alice", "load_table", ORDERS).allowed
    assert ev.authorize("bob", "load_table", ORDERS).allowed  # the catalog's owner


def test_renames_and_drops_carry_grants_and_owners() -> None:
    w = sales().owner(ORDERS, "alice").rename("schema sales.crm", "crm2")
    moved = ObjectRef.of("table", "sales.crm2.orders")
    assert w.model.owners[moved] == "alice"
    assert Grant(moved, Privilege.SELECT_TABLE, Condition.DENY) in w.model.roles["reader"]
    w.drop(moved)
    assert moved not in w.model.objects and moved not in w.model.owners
    assert all(g.object != moved for g in w.model.roles["reader"])


def test_an_invalid_step_raises_at_once() -> None:
    with pytest.raises(ModelError, match="unknown user"):
        Builder().catalog("c", owner="ghost")


def _grants(m: Model) -> list[Grant]:
    return [g for grants in m.roles.values() for g in grants]


FEATURES: dict[str, Callable[[Model], bool]] = {
    **{
        f"deny on a {level.value}": lambda m, level=level: any(
            g.condition is Condition.DENY and g.object.type is level for g in _grants(m)
        )
        for level in (T.METALAKE, T.CATALOG, T.SCHEMA, T.TABLE)
    },
    **{
        f"owner of a {level.value}": lambda m, level=level: any(o.type is level for o in m.owners)
        for level in (T.METALAKE, T.CATALOG, T.SCHEMA, T.TABLE, T.ROLE)
    },
    "a role held through a group": lambda m: any(m.group_roles.values()),
    "both gates": lambda m: "gate" in m.roles and len(m.roles["gate"]) == 2,
    "no gate": lambda m: "gate" not in m.roles,
    "a renamed schema or table": lambda m: any(o not in OBJECTS for o in m.objects),
    "a dropped object": lambda m: len(m.objects) < len(OBJECTS) - 1,
    "catalog d renamed or dropped": lambda m: OTHER_CATALOG not in m.objects,
    "service admins": lambda m: bool(m.service_admins),
}


@pytest.mark.parametrize("feature", FEATURES)
def test_models_can_draw(feature: str) -> None:
    found = find(
        models(),
        FEATURES[feature],
        settings=settings(
            max_examples=2000, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck)
        ),
    )
    assert CATALOG in found.objects and METALAKE not in found.objects
    assert {"r0", "r1"} <= set(found.roles)
    assert found.by_object == index_of(found)
