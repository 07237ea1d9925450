"""``converge(model, target)``: the events that turn a model into a target model.

Random pairs of models come from the random histories of ``tests/histories.py`` (hostile
names, grants on registered and unregistered objects, owners, object properties).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.app.service import AccessControl
from pushdown.app.service.converge import converge
from pushdown.journal.store import Store
from pushdown.model import events as ev
from pushdown.model.events import event_from_json
from pushdown.model.privileges import Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from tests.builders import Builder, index_of, snapshot
from tests.histories import commit, random_model, replay

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


# -- random pairs -------------------------------------------------------------------------


@PAIRS
@given(st.data())
def test_converge_reaches_the_target_and_is_then_idempotent(data: st.DataObject) -> None:
    start, history = random_model(data, "model")
    target, _ = random_model(data, "target")
    model = replay(history)
    events = converge(model, target)
    assert snapshot(model) == snapshot(target)
    assert model.by_object == index_of(model)
    assert converge(model, target) == []
    assert snapshot(model) == snapshot(target)

    # the events alone, through JSON, turn the start into the target
    replayed = replay(history)
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
    events = converge(replay(history), target)
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
    return (
        Builder()
        .users("alice", "b`ob")
        .group("g", "alice")
        .role("r", owner="alice")
        .create(CAT, "alice", {"backend": "ranger"})
        .create(SCH, "b`ob")
        .create(TAB)
        .allow("r", SCH, Privilege.SELECT_TABLE)
        .deny("r", TAB, Privilege.MODIFY_TABLE)
        .grant_role("r", groups=["g"])
        .admins("b`ob")
        .model
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
    model = Builder().users("alice").create(CAT, "alice").model
    target = Builder().users("alice", "bob").create(CAT).model
    events = converge(model, target)
    assert snapshot(model) == snapshot(target)
    assert removals_before_additions(events)


def test_re_registration_removals_come_before_additions() -> None:
    model = Builder().create(CAT, properties={"backend": "x"}).model
    target = Builder().users("bob").create(CAT, properties={"backend": "y"}).model
    events = converge(model, target)
    assert snapshot(model) == snapshot(target)
    assert removals_before_additions(events)


def test_load_model_moves_the_metalake_owner() -> None:
    control = AccessControl(Store(":memory:"), push=False)
    try:
        control.add_user("alice")
        control.add_user("bob")
        control.set_owner("metalake", "alice")
        target = Builder().users("alice", "bob").owner(METALAKE, "bob").model
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
