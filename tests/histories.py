"""Random histories of change requests, valid or not, with hostile names.

Shared by the store's tests (every commit must load back as the model) and by
``converge``'s (random pairs of models): users, groups, members, roles, ALLOW/DENY grants
on registered and unregistered objects, role grants, owners, objects created, renamed and
dropped, service admins. Names carry dots, backticks, quotes, spaces and non-ASCII text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st

from pushdown.errors import ModelError
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import SUPPORTED_ON, Condition, Privilege
from pushdown.model.securables import DATA_TYPES, METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

T = SecurableType
P = Privilege
ALLOW, DENY = Condition.ALLOW, Condition.DENY

USERS = ("alice", "b.o`b", " é漢 ", "'q' \"dq\"")
GROUPS = ("g", "grp.`x`", "g 2")
ROLES = ("r", "role 'q'", "r.`1`")
SEGS = ("c", "s.t")  # object segments: one plain, one that looks like two
NEW_LAST = ("c", "s.t", "n`")
PROPS = ({}, {"backend": "ranger"}, {"backend": "my.sql", "k`": " v "})

seg = st.sampled_from(SEGS)
catalogs = seg.map(lambda a: ObjectRef(T.CATALOG, (a,)))
schemas = st.tuples(seg, seg).map(lambda n: ObjectRef(T.SCHEMA, n))
leaves = st.tuples(st.sampled_from((T.TABLE, T.TOPIC, T.FILESET)), seg, seg, seg).map(
    lambda a: ObjectRef(a[0], a[1:])
)
others = st.tuples(st.sampled_from((T.TAG, T.POLICY, T.JOB_TEMPLATE, T.JOB)), seg).map(
    lambda a: ObjectRef(a[0], (a[1],))
)
creatable = st.one_of(catalogs, schemas, leaves, others)
any_object = st.one_of(
    st.just(METALAKE), creatable, st.sampled_from(ROLES).map(lambda r: ObjectRef(T.ROLE, (r,)))
)
OBJECT_POOL = (
    METALAKE,
    *(ObjectRef(T.CATALOG, (a,)) for a in SEGS),
    *(ObjectRef(T.SCHEMA, (a, b)) for a in SEGS for b in SEGS),
    *(ObjectRef(T.TABLE, ("c", b, x)) for b in SEGS for x in SEGS),
    ObjectRef(T.TOPIC, ("c", "c", "c")),
    ObjectRef(T.TAG, ("c",)),
    *(ObjectRef(T.ROLE, (r,)) for r in ROLES),
)

Change = tuple[Callable[..., list[ev.Event]], tuple[Any, ...]]
#: how often each kind of change is drawn, relatively
KIND_WEIGHTS = {
    "add_user": 2, "remove_user": 1, "add_group": 1, "remove_group": 1, "add_member": 2,
    "remove_member": 1, "create_role": 2, "delete_role": 1, "grant": 3, "revoke": 1, "grant_role": 2,
    "revoke_role": 1, "set_owner": 1, "clear_owner": 1, "create": 4, "drop": 1, "rename": 2,
    "service_admins": 1,
}  # fmt: skip
KINDS = tuple(kind for kind, weight in KIND_WEIGHTS.items() for _ in range(weight))


def _grantable(obj: ObjectRef) -> list[Privilege]:
    return sorted(p for p, types in SUPPORTED_ON.items() if obj.type in types) or [P.SELECT_TABLE]


def _pick(d: Callable[..., Any], existing: Any, pool: tuple[Any, ...]) -> Any:
    """Mostly something the model holds, sometimes anything from the pool (maybe unknown)."""
    held = sorted(existing)
    if held and d(st.integers(min_value=0, max_value=4)) < 4:
        return d(st.sampled_from(held))
    return d(st.sampled_from(pool))


def _fresh(d: Callable[..., Any], existing: Any, pool: tuple[str, ...]) -> str:
    """Mostly a name the model does not hold yet, sometimes any name (maybe a duplicate)."""
    free = [n for n in pool if n not in existing]
    if free and d(st.integers(min_value=0, max_value=4)) < 4:
        return str(d(st.sampled_from(free)))
    return str(d(st.sampled_from(pool)))


def _new_object(d: Callable[..., Any], model: Model) -> ObjectRef:
    """A child of a registered object (or of the metalake), sometimes any object at all."""
    if d(st.integers(min_value=0, max_value=4)) == 4:
        return d(creatable)
    parents = [METALAKE, *sorted(o for o in model.objects if o.type in (T.CATALOG, T.SCHEMA))]
    parent = d(st.sampled_from(parents))
    last = d(seg)
    if parent is METALAKE:
        kind = d(st.sampled_from((T.CATALOG, T.TAG, T.POLICY, T.JOB_TEMPLATE, T.JOB)))
    elif parent.type is T.CATALOG:
        kind = T.SCHEMA
    else:
        kind = d(st.sampled_from((T.TABLE, T.TOPIC, T.FILESET)))
    return ObjectRef(kind, (*parent.names, last))


def seed_changes() -> list[Change]:
    """A populated start: every user, group and role, a catalog tree, a few grants and owners."""
    c, cc, cst = (
        ObjectRef(T.CATALOG, ("c",)),
        ObjectRef(T.SCHEMA, ("c", "c")),
        ObjectRef(T.SCHEMA, ("c", "s.t")),
    )
    table = ObjectRef(T.TABLE, ("c", "c", "s.t"))
    return [
        *((ch.add_user, (u,)) for u in USERS),
        *((ch.add_group, (g, USERS[i : i + 2])) for i, g in enumerate(GROUPS)),
        *((ch.create_role, (r, USERS[i])) for i, r in enumerate(ROLES)),
        (ch.create_object, (c, USERS[0], PROPS[1])),
        (ch.create_object, (cc, None, {})),
        (ch.create_object, (cst, USERS[1], {})),
        (ch.create_object, (table, USERS[2], {})),
        (ch.grant_privileges, (ROLES[0], c, [P.USE_CATALOG, P.SELECT_TABLE], ALLOW)),
        (ch.grant_privileges, (ROLES[1], table, [P.SELECT_TABLE], DENY)),
        (ch.grant_privileges, (ROLES[2], cst, [P.MODIFY_TABLE], ALLOW)),
        (ch.grant_role, (ROLES[0], Principal.user(USERS[3]))),
        (ch.grant_role, (ROLES[1], Principal.group(GROUPS[0]))),
        (ch.set_service_admins, (USERS[:1],)),
        (ch.set_owner, (METALAKE, USERS[1])),
    ]


def draw_history(data: st.DataObject, model: Model, steps: int) -> Iterator[Change | None]:
    """Maybe the seed, then ``steps`` random changes drawn against the model as it evolves."""
    if not data.draw(st.booleans(), label="start empty"):
        yield from seed_changes()
    for _ in range(steps):
        yield draw_change(data, model)


def draw_change(data: st.DataObject, model: Model) -> Change | None:
    """One random change request (valid or not) against ``model``; None to skip a known bug."""
    d = data.draw
    kind = d(st.sampled_from(KINDS), label="kind")
    grants = sorted((r, g) for r, gs in model.roles.items() for g in gs)

    def user() -> str:
        return str(_pick(d, model.users, USERS))

    def group() -> str:
        return str(_pick(d, model.groups, GROUPS))

    def role() -> str:
        return str(_pick(d, model.roles, ROLES))

    def obj() -> ObjectRef:
        return ObjectRef.parse(str(_pick(d, map(str, model.objects), tuple(map(str, OBJECT_POOL)))))

    if kind == "add_user":
        return ch.add_user, (_fresh(d, model.users, USERS),)
    if kind == "remove_user":
        return ch.remove_user, (user(),)
    if kind == "add_group":
        return ch.add_group, (_fresh(d, model.groups, GROUPS), [user() for _ in range(d(st.integers(0, 3)))])
    if kind == "remove_group":
        return ch.remove_group, (group(),)
    if kind in ("add_member", "remove_member"):
        return (ch.add_member if kind == "add_member" else ch.remove_member), (group(), user())
    if kind == "create_role":
        return ch.create_role, (_fresh(d, model.roles, ROLES), user() if d(st.booleans()) else None)
    if kind == "delete_role":
        return ch.delete_role, (role(),)
    if kind == "grant":
        target = obj() if d(st.booleans()) else d(any_object)
        privs = d(st.lists(st.sampled_from(_grantable(target)), min_size=1, max_size=3))
        return ch.grant_privileges, (role(), target, privs, d(st.sampled_from(Condition)))
    if kind == "revoke":
        if grants and not d(st.booleans()):
            holder, g = d(st.sampled_from(grants))
            return ch.revoke_privileges, (holder, g.object, [g.privilege], g.condition)
        target = obj()
        return ch.revoke_privileges, (role(), target, _grantable(target)[:2], d(st.sampled_from(Condition)))
    if kind in ("grant_role", "revoke_role"):
        holder = Principal.user(user()) if d(st.booleans()) else Principal.group(group())
        return (ch.grant_role if kind == "grant_role" else ch.revoke_role), (role(), holder)
    if kind == "set_owner":
        target = obj() if d(st.booleans()) else d(any_object)
        return ch.set_owner, (target, user())
    if kind == "clear_owner":
        return ch.clear_owner, (ObjectRef.parse(str(_pick(d, map(str, model.owners), ("metalake",)))),)
    if kind == "create":
        creator = user() if d(st.booleans()) else None
        return ch.create_object, (_new_object(d, model), creator, d(st.sampled_from(PROPS)))
    if kind == "drop":
        return ch.drop_object, (obj(),)
    if kind == "rename":
        data_objects = [o for o in model.objects if o.type in DATA_TYPES]
        target = ObjectRef.parse(str(_pick(d, map(str, data_objects), tuple(map(str, OBJECT_POOL)))))
        new_last = d(st.sampled_from(NEW_LAST))
        return ch.rename_object, (target, new_last)
    return ch.set_service_admins, ([user() for _ in range(d(st.integers(0, 2)))],)


def random_model(data: st.DataObject, label: str, max_steps: int = 30) -> tuple[Model, list[ev.Event]]:
    """A model built by a random history (the changes ``changes`` rejects skipped), and its events."""
    model, history = Model(), []
    steps = data.draw(st.integers(min_value=0, max_value=max_steps), label=f"{label} steps")
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


def replay(history: list[ev.Event]) -> Model:
    """A fresh model from a history's events (a copy that shares nothing with the original)."""
    model = Model()
    for event in history:
        model.apply(event)
    return model


def commit(store: Store, events: list[ev.Event]) -> list[int]:
    """Journal ``events`` in one transaction, as the service does."""
    with store.write_lock():
        return store.append(events)
