"""The model's indexes a case-blind, scoped compile reads by key stay equal to a scan
from scratch after random histories: the spellings of a schema other than its case fold
(:attr:`Model.folds`), the topics and filesets a grant or an owner names
(:attr:`Model.marked_leaves`), and the stamps of an object's grants and owner
(:attr:`Model.held_stamps`: a stamp that stands proves them unmoved), in copies and
directory views too."""

from __future__ import annotations

import copy
import itertools
import pickle
import random
from typing import Any

from pushdown.model import events as ev
from pushdown.model import state
from pushdown.model.directory import with_members
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model

T = SecurableType
_SPELLINGS = ("s1", "S1", "ſ1", "ss", "SS", "ß", "ẞ", "Ss")
OBJECTS = [
    *(ObjectRef(T.SCHEMA, (c, s)) for c in ("c", "d") for s in _SPELLINGS),
    *(ObjectRef(T.TABLE, (c, s, t)) for c in ("c", "d") for s in _SPELLINGS for t in ("t", "T")),
    *(ObjectRef(T.TOPIC, ("c", s, "k")) for s in ("s1", "S1")),
    *(ObjectRef(T.FILESET, ("d", s, "f")) for s in ("ss", "ß")),
    ObjectRef(T.CATALOG, ("c",)),
    ObjectRef(T.CATALOG, ("d",)),
]


def _held(model: Model, obj: ObjectRef) -> tuple[object, object]:
    return copy.deepcopy(model.by_object.get(obj)), model.owners.get(obj)


def _folds(model: Model) -> dict[ObjectRef, set[ObjectRef]]:
    out: dict[ObjectRef, set[ObjectRef]] = {}
    for obj in {*model.objects, *model.by_object, *model.owners}:
        if len(obj.names) >= 2 and obj.names[1] != obj.names[1].casefold():
            key = ObjectRef(T.SCHEMA, (obj.names[0], obj.names[1].casefold()))
            out.setdefault(key, set()).add(obj)
    return out


def _marked_leaves(model: Model) -> dict[str, set[ObjectRef]]:
    out: dict[str, set[ObjectRef]] = {}
    for obj in {*model.by_object, *model.owners}:
        if obj.type in (T.TOPIC, T.FILESET):
            out.setdefault(obj.names[0], set()).add(obj)
    return out


def _check(model: Model) -> None:
    assert model.folds == _folds(model)
    assert model.marked_leaves == _marked_leaves(model)
    again = copy.deepcopy(model)
    again.reindex()
    assert (again.folds, again.marked_leaves) == (model.folds, model.marked_leaves)
    # rebuilt: every object holding or having held grants or an owner stamped anew
    assert set(again.held_stamps) == {*model.held_stamps, *model.by_object, *model.owners}
    assert not any(model.held_stamps.get(o) == stamp for o, stamp in again.held_stamps.items())
    for other in (copy.deepcopy(model), with_members(model, {"g": {"newcomer"}})):
        assert other.folds == _folds(other)
        assert other.marked_leaves == _marked_leaves(other)


def _event(rng: random.Random, model: Model) -> ev.Event:
    obj = rng.choice(OBJECTS)
    role = rng.choice(["r", "q"])
    if role not in model.roles:
        return ev.RoleCreated(role)
    privs = frozenset({Privilege(rng.choice(["SELECT_TABLE", "MODIFY_TABLE", "USE_SCHEMA"]))})
    condition = rng.choice([Condition.ALLOW, Condition.ALLOW, Condition.DENY])
    roll = rng.random()
    if roll < 0.03:
        return ev.RoleDeleted(role)
    if roll < 0.08 and obj.type is not T.CATALOG:
        names = (*obj.names[:-1], rng.choice(_SPELLINGS))
        return ev.ObjectRenamed(obj, ObjectRef(obj.type, names))
    return rng.choice(
        [
            ev.PrivilegesGranted(role, obj, privs, condition),
            ev.PrivilegesGranted(role, obj, privs, condition),
            ev.PrivilegesRevoked(role, obj, privs, condition),
            ev.OwnerSet(obj, rng.choice(["ann", "bob", None])),
            ev.ObjectCreated(obj) if obj not in model.objects else ev.ObjectDropped(obj),
        ]
    )


def test_folds_leaves_and_stamps_equal_a_scan_after_random_histories() -> None:
    for seed in range(4):
        rng = random.Random(seed)
        model = Model()
        model.apply(ev.UserAdded("ann"))
        model.apply(ev.GroupAdded("g"))
        for _ in range(200):
            before = {o: (_held(model, o), model.held_stamps.get(o)) for o in OBJECTS}
            event = _event(rng, model)
            model.apply(event)
            _check(model)
            for obj, (held, stamp) in before.items():
                if stamp is not None and model.held_stamps.get(obj) == stamp:
                    assert _held(model, obj) == held, (seed, event, obj)
            if rng.random() < 0.02:
                model.reindex()


def test_a_stamp_moves_with_every_change_of_grants_or_owner() -> None:
    model = Model()
    table = ObjectRef(T.TABLE, ("c", "s1", "t"))
    assert model.held_stamps.get(table) is None  # never stamped: proves nothing
    seen = set()
    for event in (
        ev.RoleCreated("r"),
        ev.PrivilegesGranted("r", table, frozenset({Privilege("SELECT_TABLE")}), Condition.ALLOW),
        ev.OwnerSet(table, "ann"),
        ev.PrivilegesRevoked("r", table, frozenset({Privilege("SELECT_TABLE")}), Condition.ALLOW),
        ev.PrivilegesGranted("r", table, frozenset({Privilege("SELECT_TABLE")}), Condition.DENY),
        ev.RoleDeleted("r"),
        ev.OwnerSet(table, None),
    ):
        was = model.held_stamps.get(table)
        model.apply(event)
        if not isinstance(event, ev.RoleCreated):
            assert model.held_stamps.get(table) not in (None, was), event
            seen.add(model.held_stamps[table])
    assert len(seen) == 6


def test_a_model_unpickled_from_another_process_never_reuses_a_stamp(monkeypatch: Any) -> None:
    """A model pickled in another process carries that process's stamps; this process's
    count may give one of them again to a change of the same object (a stale stamp that
    stands while the grants moved: wider). Unpickled, every object is stamped anew here."""
    catalog = ObjectRef(T.CATALOG, ("c",))
    select = frozenset({Privilege("SELECT_TABLE")})
    model = Model()
    model.apply(ev.RoleCreated("r"))
    model.apply(ev.PrivilegesGranted("r", catalog, select, Condition.ALLOW))
    data = pickle.dumps(model)
    # this process's count at the stamp the other process gave the catalog
    monkeypatch.setattr(state, "_HELD_STAMPS", itertools.count(model.held_stamps[catalog]))
    loaded = pickle.loads(data)
    was = loaded.held_stamps.get(catalog)
    loaded.apply(ev.PrivilegesRevoked("r", catalog, select, Condition.ALLOW))
    assert loaded.held_stamps.get(catalog) != was
    # a copy in this process shares the count: a copy's stamps stay (no estate-sized pass)
    assert copy.deepcopy(model).held_stamps == model.held_stamps
    assert copy.copy(model).held_stamps is model.held_stamps
