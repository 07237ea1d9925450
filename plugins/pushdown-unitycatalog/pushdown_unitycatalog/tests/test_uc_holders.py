"""The compile decides only for the users who hold something in the catalog (by the
model's indexes) and one user who holds nothing there; it must give exactly what deciding
for every user gives: no user outside that set gains or loses a grant, no DENY is lost.
Random models (grants and DENYs on the metalake, the catalog, its schemas and tables and
another catalog; roles held directly and through a group; owners; service admins) are
compiled both ways. Pure: no server."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Model
from pushdown_unitycatalog import compile as uc_compile
from pushdown_unitycatalog.compile import Held, compile_desired

USERS = ("u1", "u2", "u3", "u4", "u5", "u6", "u7")
ROLES = ("r1", "r2", "r3")
OBJECTS = (
    METALAKE,
    ObjectRef.parse("catalog c"),
    ObjectRef.parse("schema c.s1"),
    ObjectRef.parse("table c.s1.a"),
    ObjectRef.parse("table c.s1.b"),
    ObjectRef.parse("table c.s1.later"),
    ObjectRef.parse("schema c.S2"),
    ObjectRef.parse("catalog other"),
    ObjectRef.parse("table other.x.y"),
)
REGISTERED = ("catalog c", "schema c.s1", "table c.s1.a", "table c.s1.b", "catalog other")
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE", "CREATE_SCHEMA")
HELD = Held("c", {"s1": ("a", "b", "c")})

steps = st.one_of(
    st.tuples(
        st.just("grant"),
        st.sampled_from(ROLES),
        st.sampled_from(OBJECTS),
        st.lists(st.sampled_from(PRIVILEGES), min_size=1, max_size=3),
        st.sampled_from(("ALLOW", "DENY")),
    ),
    st.tuples(st.just("role"), st.sampled_from(ROLES), st.sampled_from((*USERS, "group g"))),
    st.tuples(st.just("member"), st.sampled_from(USERS)),
    st.tuples(
        st.just("owner"),
        st.sampled_from((*OBJECTS, *(ObjectRef.parse(o) for o in REGISTERED))),
        st.sampled_from(USERS),
    ),
    st.tuples(st.just("admins"), st.lists(st.sampled_from(USERS), max_size=2)),
)


def _model(history: list[tuple[Any, ...]]) -> Model:
    model = Model()
    events: list[Any] = [*(e for u in USERS for e in ch.add_user(model, u))]
    for e in events:
        model.apply(e)
    for text in REGISTERED:
        for e in ch.create_object(model, ObjectRef.parse(text)):
            model.apply(e)
    for e in [*ch.add_group(model, "g"), *(e for r in ROLES for e in ch.create_role(model, r))]:
        model.apply(e)
    gates = ["USE_CATALOG", "USE_SCHEMA"]
    for role in ROLES[:2]:  # the gates, so that a grant below them decides something
        for e in ch.grant_privileges(model, role, ObjectRef.parse("catalog c"), gates):
            model.apply(e)
    for kind, *args in history:
        try:
            if kind == "grant":
                events = ch.grant_privileges(model, args[0], args[1], args[2], args[3])
            elif kind == "role":
                who = Principal.group("g") if args[1] == "group g" else Principal.user(args[1])
                events = ch.grant_role(model, args[0], who)
            elif kind == "member":
                events = ch.add_member(model, "g", args[0])
            elif kind == "owner":
                events = ch.set_owner(model, args[0], args[1])
            else:
                events = ch.set_service_admins(model, args[0])
        except ModelError:
            continue
        for e in events:
            model.apply(e)
    return model


def _name_of(user: str) -> str | None:
    return None if user == "u5" else user  # u5: outside the fence


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(history=st.lists(steps, min_size=1, max_size=12))
def test_deciding_for_the_holders_gives_what_deciding_for_everyone_gives(history: list[Any]) -> None:
    model = _model(history)
    narrow = compile_desired(model, HELD, _name_of)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(uc_compile, "_holders", lambda m, inv, c: (set(m.users), None))
        everyone = compile_desired(model, HELD, _name_of)
    assert narrow == everyone


def test_users_with_nothing_in_the_catalog_are_not_decided_for() -> None:
    """u1 holds r1 with SELECT in the catalog; u2 (r3, in another catalog) and the others
    hold nothing there: one of them is decided for (to learn that such users get nothing),
    the rest are not."""
    model = _model(
        [
            (
                "grant",
                "r1",
                ObjectRef.parse("catalog c"),
                ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"],
                "ALLOW",
            ),
            ("grant", "r3", ObjectRef.parse("catalog other"), ["USE_CATALOG"], "ALLOW"),
            ("role", "r1", "u1"),
            ("role", "r3", "u2"),
        ]
    )
    holders, anyone = uc_compile._holders(model, HELD.inventory(), "c")
    assert holders == {"u1"} and anyone in set(USERS) - {"u1"}
    desired = compile_desired(model, HELD, _name_of)
    assert {f.principal for f in desired.facts} == {"u1"}
