"""A DENY is never dropped, at every entry point that brings grants in: the spec file,
the REST service (a role created with its securable objects, privileges granted to a
role) and the library keep every DENY they are given, or refuse the whole input with an
error naming it. (The Gravitino source: tests/source/test_follow.py and
tests/source/test_source_surface.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.app.service import AccessControl
from pushdown.app.service.spec import load_spec_text
from pushdown.errors import ModelError, SpecError
from pushdown.journal.store import Store
from pushdown.model.events import PrivilegesGranted
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Grant

from ..rest.inprocess import Site, site

HEAD = """
metalake: m
users: [ann]
catalogs:
  c:
    schemas:
      db:
        tables: [t0, t1]
"""
PLACES = ("catalog c", "schema c.db", "table c.db.t0", "table c.db.t1")
#: privileges grantable on every place above
READS = ("SELECT_TABLE", "MODIFY_TABLE")


def _spec(grants: str) -> str:
    return HEAD + "roles:\n  r:\n    to: [user ann]\n    grants:\n" + grants


def _denies(model: Any) -> set[str]:
    return {str(g) for g in model.roles.get("r", ()) if g.condition is Condition.DENY}


# -- the spec ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "grant,named",
    [
        ("      - on: catalog c\n        deny: [SELECT_VIEW]\n", "SELECT_VIEW"),
        ("      - on: catalog c\n        deny: [EXECUTE_FUNCTION]\n", "EXECUTE_FUNCTION"),
        ("      - on: table nowhere.db.t\n        deny: [SELECT_TABLE]\n", "nowhere"),
        ("      - on: view c.db.v\n        deny: [SELECT_TABLE]\n", "view"),
        ("      - on: catalog c\n        denied: [SELECT_TABLE]\n", "denied"),
        ("      - on: catalog c\n        deny: SELECT_TABLE\n", "deny list"),
        ("      - on: catalog c\n        deny: [SELECT_TABLE]\n        deny: [MODIFY_TABLE]\n", "duplicate"),
        ("      - on: catalog c\n        deny: [MANAGE_USERS]\n", "MANAGE_USERS"),
    ],
    ids=[
        "view-privilege",
        "function-privilege",
        "unplaced",
        "view-type",
        "typo",
        "scalar",
        "twice",
        "not-here",
    ],
)
def test_a_spec_deny_that_cannot_be_held_refuses_the_whole_spec(grant: str, named: str) -> None:
    allow = "      - on: catalog c\n        allow: [USE_CATALOG, USE_SCHEMA, SELECT_TABLE]\n"
    with pytest.raises(SpecError) as refused:
        load_spec_text(_spec(allow + grant))
    assert named.lower() in str(refused.value).lower(), str(refused.value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(PLACES),
            st.lists(st.sampled_from(READS), max_size=2, unique=True),
            st.lists(st.sampled_from(READS), max_size=2, unique=True),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_spec_keeps_every_deny_it_carries(grants: list[tuple[str, list[str], list[str]]]) -> None:
    text = ""
    wanted: set[str] = set()
    for place, allow, deny in grants:
        if not allow and not deny:
            continue
        text += f"      - on: {place}\n"
        if allow:
            text += f"        allow: [{', '.join(allow)}]\n"
        if deny:
            text += f"        deny: [{', '.join(deny)}]\n"
        wanted |= {str(Grant(ObjectRef.parse(place), Privilege(p), Condition.DENY)) for p in deny}
    if not text:
        return
    model = load_spec_text(_spec(text))
    assert _denies(model) == wanted


# -- the library --------------------------------------------------------------------------------


@pytest.fixture
def library() -> Iterator[AccessControl]:
    ac = AccessControl(Store(":memory:"), push=False)
    ac.create_object("catalog c")
    ac.create_object("schema c.db")
    ac.create_role("r")
    try:
        yield ac
    finally:
        ac.close()


@pytest.mark.parametrize(
    "privileges,condition,named",
    [
        (["SELECT_VIEW"], "DENY", "SELECT_VIEW"),
        (["SELECT_TABLE", "CREATE_VIEW"], Condition.DENY, "CREATE_VIEW"),
        (["SELECT_TABLE"], "DENIED", "DENIED"),
        (["SELECT_TABLE"], "maybe", "maybe"),
    ],
)
def test_the_library_refuses_a_deny_it_cannot_hold_and_writes_nothing(
    library: AccessControl, privileges: list[str], condition: Any, named: str
) -> None:
    seq = library.store.last_seq()
    with pytest.raises(ModelError, match=named):
        library.grant_privileges("r", "schema c.db", privileges, condition)
    assert library.store.last_seq() == seq and library.model.roles["r"] == set()


@pytest.mark.parametrize("condition", ["deny", "DENY", " Deny ", Condition.DENY])
def test_the_library_keeps_a_deny_given_in_any_spelling(library: AccessControl, condition: Any) -> None:
    library.grant_privileges("r", "schema c.db", ["select_table"], condition)
    assert _denies(library.model) == {"DENY SELECT_TABLE on schema c.db"}


# -- the REST service ---------------------------------------------------------------------------


@pytest.fixture
def rest(tmp_path: Path) -> Iterator[Site]:
    with site(tmp_path) as s:
        with s.http("admin") as h:
            base = "/api/metalakes/test/catalogs"
            made = h.post(base, json={"name": "c", "type": "relational", "provider": "x", "properties": {}})
            assert made.status_code == 200, made.text
            assert h.post(f"{base}/c/schemas", json={"name": "db"}).status_code == 200
        yield s


def _objects(*items: tuple[str, str, str, str]) -> list[dict[str, Any]]:
    return [
        {"type": t, "fullName": full, "privileges": [{"name": name, "condition": cond}]}
        for t, full, name, cond in items
    ]


@pytest.mark.parametrize(
    "bad",
    [
        ("CATALOG", "c", "select_view", "deny"),
        ("CATALOG", "c", "select_table", "denied"),
        ("SCHEMA", "c.db", "execute_function", "deny"),
        ("VIEW", "c.db.v", "select_table", "deny"),
    ],
    ids=["view-privilege", "condition", "function-privilege", "view-type"],
)
def test_rest_refuses_a_role_whose_deny_it_cannot_hold_and_writes_nothing(rest: Site, bad: Any) -> None:
    seq = rest.seq()
    body = {"name": "r", "securableObjects": _objects(("CATALOG", "c", "select_table", "allow"), bad)}
    with rest.http("admin") as h:
        answer = h.post("/api/metalakes/test/roles", json=body)
    assert answer.status_code == 400, answer.text
    assert (
        bad[2] in answer.text.lower()
        or bad[3] in answer.text.lower()
        or bad[0].lower() in answer.text.lower()
    )
    assert rest.seq() == seq and "r" not in rest.ac.model.roles


def test_rest_keeps_every_deny_and_writes_the_denies_first(rest: Site) -> None:
    """A role created with ALLOWs and DENYs on several objects, then privileges granted:
    every DENY arrives, and each is journalled before any ALLOW of the same request (a
    sync or a failure in between is never wider than the request)."""
    seq = rest.seq()
    objects = _objects(
        ("CATALOG", "c", "select_table", "allow"),
        ("SCHEMA", "c.db", "select_table", "deny"),
        ("CATALOG", "c", "modify_table", "deny"),
    )
    with rest.http("admin") as h:
        made = h.post("/api/metalakes/test/roles", json={"name": "r", "securableObjects": objects})
        assert made.status_code == 200, made.text
        both = {
            "privileges": [
                {"name": "use_catalog", "condition": "allow"},
                {"name": "create_schema", "condition": "deny"},
            ]
        }
        granted = h.put("/api/metalakes/test/permissions/roles/r/catalog/c/grant", json=both)
        assert granted.status_code == 200, granted.text
    assert _denies(rest.ac.model) == {
        "DENY SELECT_TABLE on schema c.db",
        "DENY MODIFY_TABLE on catalog c",
        "DENY CREATE_SCHEMA on catalog c",
    }
    events = [e for _, e in rest.ac.store.events_since(seq) if isinstance(e, PrivilegesGranted)]
    conditions = [e.condition for e in events]
    first_request, second_request = conditions[:3], conditions[3:]
    assert first_request == [Condition.DENY, Condition.DENY, Condition.ALLOW], conditions
    assert second_request == [Condition.DENY, Condition.ALLOW], conditions


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(PLACES), st.sampled_from(READS), st.sampled_from(["allow", "deny"])),
        min_size=1,
        max_size=6,
    )
)
def test_the_library_loading_a_model_keeps_every_deny(grants: list[tuple[str, str, str]]) -> None:
    """``load_model`` (what the spec, the source and a library caller hand the store)
    converges the store to the target with every DENY of it."""
    text = "".join(f"      - on: {place}\n        {cond}: [{name}]\n" for place, name, cond in grants)
    target = load_spec_text(_spec(text))
    ac = AccessControl(Store(":memory:"), push=False)
    try:
        ac.load_model(target)
        assert _denies(ac.model) == _denies(target)
        assert bool(_denies(target)) == any(c == "deny" for _, _, c in grants)
        assert {str(g) for g in ac.model.roles["r"]} == {str(g) for g in target.roles["r"]}
    finally:
        ac.close()
