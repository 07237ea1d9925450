"""The model's marks (what carries a grant or an owner below each object) stay equal to
a rebuild from scratch after every kind of change, renames and drops included."""

from __future__ import annotations

import copy
import random

from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

OBJECTS = [
    ObjectRef.parse(text)
    for text in (
        "catalog c",
        "schema c.s",
        "table c.s.a",
        "table c.s.b",
        "schema c.t",
        "table c.t.a",
        "catalog d",
    )
]


def _rebuilt(model: Model) -> dict[ObjectRef, set[ObjectRef]]:
    again = copy.deepcopy(model)
    again.reindex()
    return again.marks


def test_marks_equal_a_rebuild_after_every_change() -> None:
    rng = random.Random(30)
    model = Model()
    model.apply(ev.UserAdded("ann"))
    for role in ("r", "q"):
        model.apply(ev.RoleCreated(role))
    for _ in range(400):
        obj = rng.choice(OBJECTS)
        role = rng.choice(["r", "q"])
        privs = frozenset({Privilege(rng.choice(["SELECT_TABLE", "MODIFY_TABLE"]))})
        event: ev.Event = rng.choice(
            [
                ev.PrivilegesGranted(role, obj, privs, Condition.ALLOW),
                ev.PrivilegesRevoked(role, obj, privs, Condition.ALLOW),
                ev.OwnerSet(obj, rng.choice(["ann", None])),
                ev.ObjectCreated(obj) if obj not in model.objects else ev.ObjectDropped(obj),
            ]
        )
        if rng.random() < 0.02 and role in model.roles:
            event = ev.RoleDeleted(role)
        if role not in model.roles:
            event = ev.RoleCreated(role)
        model.apply(event)
        assert model.marks == _rebuilt(model), event
        for root in OBJECTS:
            want = {o for o in (*model.by_object, *model.owners) if o.is_within(root)}
            assert set(model.marked_within(root)) == want
    model.apply(ev.RoleGranted("r", Principal.user("ann")))
    model.apply(ev.ObjectRenamed(ObjectRef.parse("schema c.s"), ObjectRef.parse("schema c.u")))
    assert model.marks == _rebuilt(model)
