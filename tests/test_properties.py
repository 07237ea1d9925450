"""Properties of ALLOW / DENY over random small models (hypothesis).

A model: 2-4 users, 1-2 groups, 2-3 roles, catalog ``c`` with schemas ``s0``/``s1`` and
tables ``t0``/``t1`` in each, random ALLOW/DENY grants of five table-related privileges at
the levels the reference allows them, random role grants and random owners.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pushdown.decide.evaluator import Evaluator
from pushdown.model import changes
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Grant, Model

P = Privilege
USERS = ("u0", "u1", "u2", "u3")
GROUPS = ("g0", "g1")
ROLES = ("r0", "r1", "r2")
CATALOG = ObjectRef.of("catalog", "c")
SCHEMAS = tuple(ObjectRef.of("schema", f"c.s{i}") for i in range(2))
TABLES = tuple(ObjectRef.of("table", f"c.s{i}.t{j}") for i in range(2) for j in range(2))
OBJECTS = (METALAKE, CATALOG, *SCHEMAS, *TABLES)
# where the reference lets each privilege be granted ("Supports Securable Object")
LEVELS = {
    P.USE_CATALOG: (METALAKE, CATALOG),
    P.USE_SCHEMA: (METALAKE, CATALOG, *SCHEMAS),
    P.CREATE_TABLE: (METALAKE, CATALOG, *SCHEMAS),
    P.SELECT_TABLE: OBJECTS,
    P.MODIFY_TABLE: OBJECTS,
}
CHECKS = (
    ("load_catalog", CATALOG),
    *(("load_schema", s) for s in SCHEMAS),
    *((op, t) for op in ("load_table", "alter_table", "drop_table") for t in TABLES),
    *(("create_table", ObjectRef.of("table", f"{s.name}.new")) for s in SCHEMAS),
)
FAST = settings(max_examples=150, deadline=None, database=None)

#: (role, privilege, level, condition); every model has roles r0 and r1
grants = st.sampled_from(sorted(LEVELS, key=lambda p: p.value)).flatmap(
    lambda p: st.tuples(
        st.sampled_from(ROLES[:2]), st.just(p), st.sampled_from(LEVELS[p]), st.sampled_from(Condition)
    )
)


@dataclass(frozen=True)
class Spec:
    users: tuple[str, ...]
    groups: dict[str, frozenset[str]]
    roles: tuple[str, ...]
    grants: list[tuple[str, Privilege, ObjectRef, Condition]]
    user_roles: frozenset[tuple[str, str]]
    group_roles: frozenset[tuple[str, str]]
    owners: dict[ObjectRef, str | None]


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    users = USERS[: draw(st.integers(2, 4))]
    groups = {g: draw(st.frozensets(st.sampled_from(users))) for g in GROUPS[: draw(st.integers(1, 2))]}
    roles = ROLES[: draw(st.integers(2, 3))]
    chosen = draw(st.lists(grants, max_size=10))
    return Spec(
        users,
        groups,
        roles,
        chosen,
        draw(st.frozensets(st.tuples(st.sampled_from(users), st.sampled_from(roles)))),
        draw(st.frozensets(st.tuples(st.sampled_from(sorted(groups)), st.sampled_from(roles)))),
        {o: draw(st.sampled_from((None, None, None, *users))) for o in OBJECTS},
    )


def apply(model: Model, events: list) -> None:
    for e in events:
        model.apply(e)


def build(spec: Spec) -> Model:
    m = Model()
    for u in spec.users:
        apply(m, changes.add_user(m, u))
    for g, members in spec.groups.items():
        apply(m, changes.add_group(m, g, members))
    for obj in OBJECTS[1:]:
        props = {"backend": "x"} if obj == CATALOG else {}
        apply(m, changes.create_object(m, obj, spec.owners[obj], props))
    if spec.owners[METALAKE] is not None:
        apply(m, changes.set_owner(m, METALAKE, spec.owners[METALAKE]))
    for r in spec.roles:
        apply(m, changes.create_role(m, r))
    for r, p, o, c in spec.grants:
        apply(m, changes.grant_privileges(m, r, o, [p], c))
    for u, r in spec.user_roles:
        apply(m, changes.grant_role(m, r, Principal.user(u)))
    for g, r in spec.group_roles:
        apply(m, changes.grant_role(m, r, Principal.group(g)))
    return m


def decisions(m: Model) -> dict[tuple[str, str, ObjectRef], bool]:
    ev = Evaluator(m)
    return {
        (u, op, t): ev.authorize(u, op, t, explain=False).allowed for u in sorted(m.users) for op, t in CHECKS
    }


def privileges(m: Model) -> dict[tuple[str, ObjectRef], frozenset[Privilege]]:
    ev = Evaluator(m)
    return {(u, o): ev.effective_privileges(u, o) for u in sorted(m.users) for o in OBJECTS}


def granted(before: dict, after: dict) -> set:
    return {k for k, ok in after.items() if ok and not before[k]}


def lost(before: dict, after: dict) -> set:
    return {k for k, ok in before.items() if ok and not after[k]}


@FAST
@given(specs(), grants)
def test_adding_a_deny_never_adds_access(spec: Spec, extra: tuple) -> None:
    m = build(spec)
    before = decisions(m)
    r, p, o, _ = extra
    apply(m, changes.grant_privileges(m, r, o, [p], Condition.DENY))
    assert not granted(before, decisions(m))


@FAST
@given(specs(), grants)
def test_adding_an_allow_never_removes_access(spec: Spec, extra: tuple) -> None:
    m = build(spec)
    before = decisions(m)
    r, p, o, _ = extra
    apply(m, changes.grant_privileges(m, r, o, [p], Condition.ALLOW))
    assert not lost(before, decisions(m))


@FAST
@given(specs(), grants)
def test_grant_then_revoke_restores_every_decision(spec: Spec, extra: tuple) -> None:
    m = build(spec)
    r, p, o, c = extra
    assume(Grant(o, p, c) not in m.roles[r])
    before, before_privs = decisions(m), privileges(m)
    apply(m, changes.grant_privileges(m, r, o, [p], c))
    apply(m, changes.revoke_privileges(m, r, o, [p], c))
    assert Grant(o, p, c) not in m.roles[r]
    assert decisions(m) == before
    assert privileges(m) == before_privs


@FAST
@given(specs(), grants, st.data())
def test_a_deny_on_the_path_removes_the_privilege_below(
    spec: Spec, extra: tuple, data: st.DataObject
) -> None:
    m = build(spec)
    r, p, at, _ = extra
    user = data.draw(st.sampled_from(spec.users), label="user")
    via = sorted(g for g in spec.groups if user in spec.groups[g])
    if via and data.draw(st.booleans(), label="through a group"):
        apply(m, changes.grant_role(m, r, Principal.group(via[0])))
    else:
        apply(m, changes.grant_role(m, r, Principal.user(user)))
    apply(m, changes.grant_privileges(m, r, at, [p], Condition.DENY))
    ev = Evaluator(m)
    below = [o for o in OBJECTS if o.is_within(at)]
    assert below
    for obj in below:
        assert p not in ev.effective_privileges(user, obj), (user, p, at, obj)
    if p is P.USE_CATALOG:  # and load_catalog then rests on ownership alone
        owners = {m.owners.get(METALAKE), m.owners.get(CATALOG)}
        assert ev.authorize(user, "load_catalog", CATALOG).allowed == (user in owners)
