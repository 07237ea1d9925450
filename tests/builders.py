"""The one builder of test worlds: a fluent :class:`Builder` and the hypothesis strategy :func:`models`.

Every step goes through :mod:`pushdown.model.changes` and :meth:`Model.apply`, so a world
is built exactly as the service builds one, and an invalid step raises ``ModelError``
at once::

    m = (
        Builder()
        .users("alice", "bob")
        .group("analysts", "alice")
        .catalog("sales", owner="bob")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .role("reader", users=["bob"], groups=["analysts"])
        .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
        .deny("reader", "table sales.crm.orders", "SELECT_TABLE")
        .model
    )

Objects are given as an :class:`ObjectRef` or as text (``"table c.s.t"``, ``"metalake"``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from hypothesis import strategies as st

from pushdown.errors import ModelError
from pushdown.model import changes
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import SUPPORTED_ON, Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

Obj = ObjectRef | str
#: (object, privilege, condition): one grant, as ``Builder.role`` takes them
GrantSpec = tuple[Obj, Privilege | str, Condition]
ALLOW, DENY = Condition.ALLOW, Condition.DENY


def ref(obj: Obj) -> ObjectRef:
    return obj if isinstance(obj, ObjectRef) else ObjectRef.parse(obj)


class Builder:
    """Changes applied one after the other to ``self.model``; every method returns the builder."""

    def __init__(self, model: Model | None = None) -> None:
        self.model = Model() if model is None else model

    def do(self, change: Callable[..., list[ev.Event]], *args: Any) -> Builder:
        """Any function of :mod:`pushdown.model.changes`, applied: ``do(changes.add_user, "u")``."""
        for event in change(self.model, *args):
            self.model.apply(event)
        return self

    # -- principals ------------------------------------------------------------------

    def users(self, *names: str) -> Builder:
        for name in names:
            self.do(changes.add_user, name)
        return self

    def group(self, name: str, *members: str) -> Builder:
        return self.do(changes.add_group, name, list(members))

    def member(self, group: str, user: str) -> Builder:
        return self.do(changes.add_member, group, user)

    def remove_member(self, group: str, user: str) -> Builder:
        return self.do(changes.remove_member, group, user)

    def admins(self, *users: str) -> Builder:
        return self.do(changes.set_service_admins, list(users))

    # -- roles and grants --------------------------------------------------------------

    def role(
        self,
        name: str,
        *grants: GrantSpec,
        owner: str | None = None,
        users: Iterable[str] = (),
        groups: Iterable[str] = (),
    ) -> Builder:
        """Create a role, grant it ``grants``, then grant it to ``users`` and ``groups``."""
        self.do(changes.create_role, name, owner)
        for obj, privilege, condition in grants:
            self.grant(name, obj, [privilege], condition)
        return self.grant_role(name, users=users, groups=groups)

    def grant(
        self, role: str, obj: Obj, privileges: Iterable[Privilege | str], condition: Condition = ALLOW
    ) -> Builder:
        return self.do(changes.grant_privileges, role, ref(obj), list(privileges), condition)

    def allow(self, role: str, obj: Obj, *privileges: Privilege | str) -> Builder:
        return self.grant(role, obj, privileges, ALLOW)

    def deny(self, role: str, obj: Obj, *privileges: Privilege | str) -> Builder:
        return self.grant(role, obj, privileges, DENY)

    def revoke(
        self, role: str, obj: Obj, privileges: Iterable[Privilege | str], condition: Condition = ALLOW
    ) -> Builder:
        return self.do(changes.revoke_privileges, role, ref(obj), list(privileges), condition)

    def grant_role(self, role: str, *, users: Iterable[str] = (), groups: Iterable[str] = ()) -> Builder:
        for user in users:
            self.do(changes.grant_role, role, Principal.user(user))
        for group in groups:
            self.do(changes.grant_role, role, Principal.group(group))
        return self

    # -- objects and owners ------------------------------------------------------------

    def create(self, obj: Obj, owner: str | None = None, properties: dict[str, str] | None = None) -> Builder:
        """Register any object; its creator ``owner`` owns it."""
        return self.do(changes.create_object, ref(obj), owner, properties)

    def catalog(self, name: str, owner: str | None = None, backend: str | None = "x") -> Builder:
        return self.create(
            ObjectRef.of("catalog", name), owner, None if backend is None else {"backend": backend}
        )

    def schema(self, name: str, owner: str | None = None) -> Builder:
        return self.create(ObjectRef.of("schema", name), owner)

    def table(self, name: str, owner: str | None = None, properties: dict[str, str] | None = None) -> Builder:
        return self.create(ObjectRef.of("table", name), owner, properties)

    def owner(self, obj: Obj, user: str) -> Builder:
        return self.do(changes.set_owner, ref(obj), user)

    def rename(self, obj: Obj, new_last: str) -> Builder:
        return self.do(changes.rename_object, ref(obj), new_last)

    def drop(self, obj: Obj) -> Builder:
        return self.do(changes.drop_object, ref(obj))


# -- comparing models ------------------------------------------------------------------


def snapshot(model: Model) -> dict[str, Any]:
    """Everything a model holds, with empty assignment sets dropped, as plain values."""

    def nonempty(d: dict[str, set[str]]) -> dict[str, set[str]]:
        return {k: set(v) for k, v in d.items() if v}

    return {
        "metalake": model.metalake,
        "users": set(model.users),
        "groups": {g: set(u) for g, u in model.groups.items()},
        "roles": {r: set(g) for r, g in model.roles.items()},
        "user_roles": nonempty(model.user_roles),
        "group_roles": nonempty(model.group_roles),
        "user_groups": nonempty(model.user_groups),
        "owners": dict(model.owners),
        "objects": {o: dict(p) for o, p in model.objects.items()},
        "service_admins": set(model.service_admins),
        "by_object": copy.deepcopy(model.by_object),
    }


def index_of(model: Model) -> dict[ObjectRef, dict[Privilege, dict[Condition, set[str]]]]:
    """The evaluator's index as it must be: rebuilt from the roles' grants."""
    out: dict[ObjectRef, dict[Privilege, dict[Condition, set[str]]]] = {}
    for role, grants in model.roles.items():
        for g in grants:
            out.setdefault(g.object, {}).setdefault(g.privilege, {}).setdefault(g.condition, set()).add(role)
    return out


# -- random models -----------------------------------------------------------------------

P = Privilege
T = SecurableType
USERS = ("u0", "u1", "u2", "u3")
GROUPS = ("g0", "g1")
#: every drawn model has roles r0 and r1; r2 sometimes
ROLES = ("r0", "r1", "r2")
#: catalog c is always there, never renamed or dropped; catalog d may be renamed or dropped
CATALOG, OTHER_CATALOG = ObjectRef.of("catalog", "c"), ObjectRef.of("catalog", "d")
SCHEMAS = (*(ObjectRef.of("schema", f"c.s{i}") for i in range(2)), ObjectRef.of("schema", "d.s0"))
TABLES = tuple(ObjectRef.of("table", f"{s.name}.t{j}") for s in SCHEMAS for j in range(2))
#: the objects every drawn model starts with, parents before children
OBJECTS = (METALAKE, CATALOG, OTHER_CATALOG, *SCHEMAS, *TABLES)
#: the privileges drawn, with the objects each may be granted on
PRIVILEGES = (P.USE_CATALOG, P.USE_SCHEMA, P.CREATE_SCHEMA, P.CREATE_TABLE, P.SELECT_TABLE, P.MODIFY_TABLE)
LEVELS = {p: tuple(o for o in OBJECTS if o.type in SUPPORTED_ON[p]) for p in PRIVILEGES}

#: (role, privilege, object, condition) among r0/r1 and the objects above
grants = st.sampled_from(PRIVILEGES).flatmap(
    lambda p: st.tuples(
        st.sampled_from(ROLES[:2]), st.just(p), st.sampled_from(LEVELS[p]), st.sampled_from(Condition)
    )
)


@st.composite
def models(draw: st.DrawFn, max_grants: int = 12, reshape: bool = True) -> Model:
    """A random model over the names above.

    2-4 users, 1-2 groups with random members, 2-3 roles (maybe owned) granted to random
    users and groups, owners (or none) on the metalake and on every catalog, schema and
    table, up to ``max_grants`` ALLOW/DENY grants at every level the reference allows,
    the USE_CATALOG / USE_SCHEMA gates on catalog ``c`` through a role ``gate`` held by
    some users (or absent), maybe service admins, and — with ``reshape`` — renames and
    drops of schemas, tables and catalog ``d`` after the grants.
    """
    b = Builder()
    users = USERS[: draw(st.integers(2, 4), label="users")]
    b.users(*users)
    owner = st.sampled_from((None, None, *users))
    for group in GROUPS[: draw(st.integers(1, 2), label="groups")]:
        b.group(group, *sorted(draw(st.frozensets(st.sampled_from(users)), label=f"{group} members")))
    for obj in OBJECTS[1:]:
        b.create(
            obj, draw(owner, label=f"owner of {obj}"), {"backend": "x"} if obj.type is T.CATALOG else None
        )
    metalake_owner = draw(owner, label="owner of the metalake")
    if metalake_owner is not None:
        b.owner(METALAKE, metalake_owner)
    for role in ROLES[: draw(st.integers(2, 3), label="roles")]:
        b.role(role, owner=draw(owner, label=f"owner of role {role}"))
    for role, privilege, obj, condition in draw(st.lists(grants, max_size=max_grants), label="grants"):
        b.grant(role, obj, [privilege], condition)
    _holders(draw, b, users)
    _gates(draw, b, users)
    if draw(st.booleans(), label="service admins"):
        b.admins(*sorted(draw(st.frozensets(st.sampled_from(users), max_size=2))))
    if reshape:
        _reshape(draw, b)
    return b.model


def _holders(draw: st.DrawFn, b: Builder, users: tuple[str, ...]) -> None:
    roles, groups = sorted(b.model.roles), sorted(b.model.groups)
    for user, role in sorted(draw(st.frozensets(st.tuples(st.sampled_from(users), st.sampled_from(roles))))):
        b.grant_role(role, users=[user])
    for group, role in sorted(
        draw(st.frozensets(st.tuples(st.sampled_from(groups), st.sampled_from(roles))))
    ):
        b.grant_role(role, groups=[group])


def _gates(draw: st.DrawFn, b: Builder, users: tuple[str, ...]) -> None:
    gates = draw(st.sampled_from(((), (P.USE_CATALOG,), (P.USE_CATALOG, P.USE_SCHEMA))), label="gates")
    if gates:
        holders = sorted(draw(st.frozensets(st.sampled_from(users), min_size=1), label="gate holders"))
        b.role("gate", *((CATALOG, p, ALLOW) for p in gates), users=holders)


def _reshape(draw: st.DrawFn, b: Builder) -> None:
    """Renames and drops after the grants: grants and owners below follow or go."""
    levels = (
        (OTHER_CATALOG,),
        tuple(o for o in OBJECTS if o.type is T.SCHEMA),
        tuple(o for o in OBJECTS if o.type is T.TABLE),
    )
    movable = st.sampled_from(levels).flatmap(st.sampled_from)
    steps = st.tuples(st.sampled_from(("rename", "drop")), movable, st.sampled_from(("n", "t0")))
    for kind, obj, new_last in draw(st.lists(steps, max_size=2), label="renames and drops"):
        try:
            if kind == "rename":
                b.rename(obj, new_last)
            else:
                b.drop(obj)
        except ModelError:
            continue  # renamed or dropped already, or the new name is taken
