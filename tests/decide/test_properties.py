"""Properties of ALLOW / DENY over random small models (hypothesis).

The models are ``tests.builders.models()``: 2-4 users, 1-2 groups, 2-3 roles, catalogs
``c`` and ``d`` with schemas and tables, random ALLOW/DENY grants of table-related
privileges at every level the reference allows them, random role grants, owners at every
level, the USE gates present or absent, renames and drops after the grants.
"""

from __future__ import annotations

from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import ModelError
from pushdown.model import changes
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Grant, Model
from tests.builders import OBJECTS, grants, models

P = Privilege
T = SecurableType
FAST = settings(max_examples=150, deadline=None, database=None)
Checks = list[tuple[str, ObjectRef]]


def objects(m: Model) -> list[ObjectRef]:
    """The objects every drawn model starts with, and what renames made of them."""
    return sorted(set(OBJECTS) | set(m.objects))


def checks(m: Model) -> Checks:
    out: Checks = []
    for o in objects(m):
        if o.type is T.CATALOG:
            out.append(("load_catalog", o))
        elif o.type is T.SCHEMA:
            out += [("load_schema", o), ("create_table", ObjectRef.of("table", f"{o.name}.new"))]
        elif o.type is T.TABLE:
            out += [(op, o) for op in ("load_table", "alter_table", "drop_table")]
    return out


def decisions(m: Model, checked: Checks) -> dict[tuple[str, str, ObjectRef], bool]:
    ev = Evaluator(m)
    return {
        (u, op, t): ev.authorize(u, op, t, explain=False).allowed
        for u in sorted(m.users)
        for op, t in checked
    }


def privileges(m: Model) -> dict[tuple[str, ObjectRef], frozenset[Privilege]]:
    ev = Evaluator(m)
    return {(u, o): ev.effective_privileges(u, o) for u in sorted(m.users) for o in objects(m)}


def grant(m: Model, role: str, privilege: Privilege, obj: ObjectRef, condition: Condition) -> None:
    """Grant, or discard the example when the object's catalog was renamed or dropped."""
    try:
        events = changes.grant_privileges(m, role, obj, [privilege], condition)
    except ModelError:
        reject()
    for e in events:
        m.apply(e)


def apply(model: Model, events: list) -> None:
    for e in events:
        model.apply(e)


def granted(before: dict, after: dict) -> set:
    return {k for k, ok in after.items() if ok and not before[k]}


def lost(before: dict, after: dict) -> set:
    return {k for k, ok in before.items() if ok and not after[k]}


@FAST
@given(models(), grants)
def test_adding_a_deny_never_adds_access(m: Model, extra: tuple) -> None:
    checked = checks(m)
    before = decisions(m, checked)
    r, p, o, _ = extra
    grant(m, r, p, o, Condition.DENY)
    assert not granted(before, decisions(m, checked))


@FAST
@given(models(), grants)
def test_adding_an_allow_never_removes_access(m: Model, extra: tuple) -> None:
    checked = checks(m)
    before = decisions(m, checked)
    r, p, o, _ = extra
    grant(m, r, p, o, Condition.ALLOW)
    assert not lost(before, decisions(m, checked))


@FAST
@given(models(), grants)
def test_grant_then_revoke_restores_every_decision(m: Model, extra: tuple) -> None:
    r, p, o, c = extra
    assume(Grant(o, p, c) not in m.roles[r])
    checked = checks(m)
    before, before_privs = decisions(m, checked), privileges(m)
    grant(m, r, p, o, c)
    apply(m, changes.revoke_privileges(m, r, o, [p], c))
    assert Grant(o, p, c) not in m.roles[r]
    assert decisions(m, checked) == before
    assert privileges(m) == before_privs


@FAST
@given(models(), grants, st.data())
def test_a_deny_on_the_path_removes_the_privilege_below(m: Model, extra: tuple, data: st.DataObject) -> None:
    r, p, at, _ = extra
    user = data.draw(st.sampled_from(sorted(m.users)), label="user")
    via = sorted(g for g in m.groups if user in m.groups[g])
    if via and data.draw(st.booleans(), label="through a group"):
        apply(m, changes.grant_role(m, r, Principal.group(via[0])))
    else:
        apply(m, changes.grant_role(m, r, Principal.user(user)))
    grant(m, r, p, at, Condition.DENY)
    ev = Evaluator(m)
    below = [o for o in objects(m) if o.is_within(at)]
    assert below
    for obj in below:
        assert p not in ev.effective_privileges(user, obj), (user, p, at, obj)
    if p is P.USE_CATALOG:  # and load_catalog then rests on ownership alone
        for catalog in (o for o in below if o.type is T.CATALOG):
            owners = {m.owners.get(METALAKE), m.owners.get(catalog)}
            assert ev.authorize(user, "load_catalog", catalog).allowed == (user in owners)
