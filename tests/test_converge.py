"""``converge(model, target)``: the events that turn a model into a target model.

Random pairs of models come from the random histories of ``tests/test_store.py`` (hostile
names, grants on registered and unregistered objects, owners, object properties).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.app.converge import converge
from pushdown.app.service import AccessControl
from pushdown.errors import ModelError
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.events import event_from_json
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from tests.test_store import commit, draw_history, index_of, snapshot

PAIRS = settings(max_examples=100, deadline=None, database=None)

REMOVALS = (
    ev.UserRemoved,
    ev.GroupRemoved,
    ev.GroupMemberRemoved,
    ev.RoleDeleted,
    ev.PrivilegesRevoked,
    ev.RoleRevoked,
    ev.ObjectDropped,
)
ADDITIONS = (
    ev.UserAdded,
    ev.GroupAdded,
    ev.GroupMemberAdded,
    ev.RoleCreated,
    ev.PrivilegesGranted,
    ev.RoleGranted,
    ev.ObjectCreated,
)


def is_removal(event: ev.Event) -> bool:
    return isinstance(event, REMOVALS) or (isinstance(event, ev.OwnerSet) and event.owner is None)


def is_addition(event: ev.Event) -> bool:
    return isinstance(event, ADDITIONS) or (isinstance(event, ev.OwnerSet) and event.owner is not None)


def removals_before_additions(events: list[ev.Event], *, owners: bool = True) -> bool:
    kept = [e for e in events if owners or not isinstance(e, ev.OwnerSet)]
    removals = [i for i, e in enumerate(kept) if is_removal(e)]
    additions = [i for i, e in enumerate(kept) if is_addition(e)]
    return not removals or not additions or max(removals) < min(additions)


def random_model(data: st.DataObject, label: str) -> tuple[Model, list[ev.Event]]:
    """A model built by a random history, and that history's events."""
    model, history = Model(), []
    steps = data.draw(st.integers(min_value=0, max_value=30), label=f"{label} steps")
    for change in draw_history(data, model, steps):
        if change is None:
            continue
        fn, args = change
        try:
            events = fn(model, *args)
        except ModelError:
            continue
        for event in events:
            model.apply(event)
        history += events
    return model, history


def clone(history: list[ev.Event]) -> Model:
    """A fresh copy of a random model (not copy.deepcopy: see test_converge_works_on_deep_copies)."""
    model = Model()
    for event in history:
        model.apply(event)
    return model


def build(*steps: tuple[object, ...]) -> Model:
    model = Model()
    for fn, *args in steps:
        for event in fn(model, *args):  # type: ignore[operator]
            model.apply(event)
    return model


# -- random pairs -------------------------------------------------------------------------


@PAIRS
@given(st.data())
def test_converge_reaches_the_target_and_is_then_idempotent(data: st.DataObject) -> None:
    start, history = random_model(data, "model")
    target, _ = random_model(data, "target")
    model = clone(history)
    events = converge(model, target)
    assert snapshot(model) == snapshot(target)
    assert model.by_object == index_of(model)
    assert converge(model, target) == []
    assert snapshot(model) == snapshot(target)

    # the events alone, through JSON, turn the start into the target
    replayed = clone(history)
    for event in events:
        replayed.apply(event_from_json(event.to_json()))
    assert snapshot(replayed) == snapshot(target)

    # and journalled by the store they leave the tables equal to the target
    store = Store(":memory:")
    try:
        commit(store, converge(Model(), start))
        assert snapshot(store.load()) == snapshot(start)
        commit(store, events)
        assert snapshot(store.load()) == snapshot(target)
    finally:
        store.close()


@PAIRS
@given(st.data())
def test_removals_come_before_additions(data: st.DataObject) -> None:
    _, history = random_model(data, "model")
    target, _ = random_model(data, "target")
    events = converge(clone(history), target)
    assert removals_before_additions(events), [str(e) for e in events]


@settings(max_examples=40, deadline=None, database=None)
@given(st.data())
def test_access_control_load_model_converges_as_one_change(data: st.DataObject) -> None:
    control = AccessControl(Store(":memory:"), push=False)
    try:
        start, _ = random_model(data, "model")
        target, _ = random_model(data, "target")
        # load_model deep-copies the model, which breaks a changed metalake owner
        # (test_load_model_moves_the_metalake_owner): leave the metalake unowned
        for model in (start, target):
            model.owners.pop(METALAKE, None)
        control.load_model(start)
        assert snapshot(control.model) == snapshot(start)
        seq = control.store.last_seq()
        result = control.load_model(target)
        assert snapshot(control.model) == snapshot(target)
        assert snapshot(control.store.load()) == snapshot(target)
        assert list(result.events) == [e for _, e in control.store.events_since(seq)]
        assert control.load_model(target).events == ()
    finally:
        control.close()


# -- examples -------------------------------------------------------------------------------

CAT = ObjectRef.of("catalog", "c")
SCH = ObjectRef.of("schema", "c.`s.t`")
TAB = ObjectRef.of("table", (*SCH.names, "t"))


def _rich() -> Model:
    return build(
        (ch.add_user, "alice"),
        (ch.add_user, "b`ob"),
        (ch.add_group, "g", ["alice"]),
        (ch.create_role, "r", "alice"),
        (ch.create_object, CAT, "alice", {"backend": "ranger"}),
        (ch.create_object, SCH, "b`ob"),
        (ch.create_object, TAB),
        (ch.grant_privileges, "r", SCH, [Privilege.SELECT_TABLE], Condition.ALLOW),
        (ch.grant_privileges, "r", TAB, [Privilege.MODIFY_TABLE], Condition.DENY),
        (ch.grant_role, "r", Principal.group("g")),
        (ch.set_service_admins, ["b`ob"]),
    )


@pytest.mark.parametrize(("start", "target"), [(Model, _rich), (_rich, Model), (_rich, _rich)])
def test_converge_examples(start: Callable[[], Model], target: Callable[[], Model]) -> None:
    model, goal = start(), target()
    events = converge(model, goal)
    assert snapshot(model) == snapshot(goal)
    assert removals_before_additions(events)
    assert converge(model, goal) == []


def test_changed_catalog_properties_re_register_it_and_restore_what_lies_below() -> None:
    model, target = _rich(), _rich()
    target.objects[CAT] = {"backend": "mysql"}
    events = converge(model, target)
    assert snapshot(model) == snapshot(target)
    assert ev.ObjectDropped(CAT) in events and ev.ObjectCreated(CAT, (("backend", "mysql"),)) in events
    assert converge(model, target) == []


def test_owner_cleared_before_additions() -> None:
    model = build((ch.add_user, "alice"), (ch.create_object, CAT, "alice"))
    target = build((ch.add_user, "alice"), (ch.add_user, "bob"), (ch.create_object, CAT, None))
    events = converge(model, target)
    assert snapshot(model) == snapshot(target)
    assert removals_before_additions(events)


def test_re_registration_removals_come_before_additions() -> None:
    model = build((ch.create_object, CAT, None, {"backend": "x"}))
    target = build((ch.add_user, "bob"), (ch.create_object, CAT, None, {"backend": "y"}))
    events = converge(model, target)
    assert snapshot(model) == snapshot(target)
    assert removals_before_additions(events)


def test_load_model_moves_the_metalake_owner() -> None:
    control = AccessControl(Store(":memory:"), push=False)
    try:
        control.add_user("alice")
        control.add_user("bob")
        control.set_owner("metalake", "alice")
        target = build((ch.add_user, "alice"), (ch.add_user, "bob"), (ch.set_owner, METALAKE, "bob"))
        result = control.load_model(target)
        assert result.events == (ev.OwnerSet(METALAKE, "bob", "alice"),)
        assert control.model.owners == {METALAKE: "bob"}
    finally:
        control.close()


def test_converge_works_on_deep_copies() -> None:
    model = copy.deepcopy(_rich())
    target = copy.deepcopy(_rich())
    target.objects[CAT] = {"backend": "mysql"}
    target.owners[ObjectRef(SecurableType.METALAKE, ())] = "b`ob"
    converge(model, target)
    assert snapshot(model) == snapshot(target)
