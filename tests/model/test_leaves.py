"""The model's index of topics and filesets by parent (:attr:`Model.leaves`) stays equal to
a look at every registered object after creates, drops and renames, and to a rebuild."""

from __future__ import annotations

import copy
import random

from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.directory import with_members
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model

OBJECTS = [
    ObjectRef.parse(text)
    for text in (
        "catalog c",
        "schema c.s",
        "table c.s.a",
        "topic c.s.b",
        "fileset c.s.f",
        "schema c.t",
        "fileset c.t.a",
        "table c.t.b",
        "schema c.u",
    )
]


def _looked(model: Model) -> dict[ObjectRef, set[ObjectRef]]:
    out: dict[ObjectRef, set[ObjectRef]] = {}
    for obj in model.objects:
        if obj.type in (SecurableType.TOPIC, SecurableType.FILESET) and obj.parent is not None:
            out.setdefault(obj.parent, set()).add(obj)
    return out


def test_leaves_equal_a_look_at_every_object_after_every_change() -> None:
    rng = random.Random(30)
    model = Model()
    held = 0
    for _ in range(500):
        obj = rng.choice(OBJECTS)
        event: ev.Event = ev.ObjectCreated(obj) if obj not in model.objects else ev.ObjectDropped(obj)
        if rng.random() < 0.1 and obj.type is SecurableType.SCHEMA and obj in model.objects:
            others = [o for o in OBJECTS if o.type is SecurableType.SCHEMA and o not in model.objects]
            if others:
                event = ev.ObjectRenamed(obj, rng.choice(others))
        model.apply(event)
        assert model.leaves == _looked(model), event
        again = copy.deepcopy(model)
        again.reindex()
        assert again.leaves == model.leaves, event
        held += bool(model.leaves)
    assert held > 100  # topics and filesets were held most of the way


def _do(model: Model, events: list[ev.Event], store: Store | None = None) -> None:
    for event in events:
        model.apply(event)
    if store is not None:
        store.append(events)


def test_leaves_follow_changes_of_a_whole_catalog_and_the_store_and_the_members_view() -> None:
    """A catalog renamed and a schema or catalog dropped with its children (as
    :mod:`pushdown.model.changes` makes them), the model read back from the store, and the
    members view sharing the model's indexes: the index stays that of a look at every object."""
    store = Store(":memory:")
    model = Model()
    for text in ("catalog c", "schema c.s", "topic c.s.b", "fileset c.s.f", "schema c.t", "fileset c.t.a"):
        _do(model, ch.create_object(model, ObjectRef.parse(text)), store)
    _do(model, ch.add_user(model, "ann"), store)
    _do(model, ch.add_group(model, "g", []), store)
    steps = [
        lambda m: ch.rename_object(m, ObjectRef.parse("catalog c"), "d"),
        lambda m: ch.drop_object(m, ObjectRef.parse("schema d.s")),
        lambda m: ch.create_object(m, ObjectRef.parse("catalog e")),
        lambda m: ch.create_object(m, ObjectRef.parse("schema e.s")),
        lambda m: ch.create_object(m, ObjectRef.parse("topic e.s.x")),
        lambda m: ch.drop_object(m, ObjectRef.parse("catalog d")),
    ]
    for step in steps:
        _do(model, step(model), store)
        assert model.leaves == _looked(model)
        assert store.load().leaves == model.leaves
        assert with_members(model, {"g": {"bob"}}).leaves == model.leaves
    assert model.leaves == {ObjectRef.parse("schema e.s"): {ObjectRef.parse("topic e.s.x")}}
