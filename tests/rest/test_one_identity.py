"""One identity per object: for random names (dots, backticks, quotes, unicode, long), a
spec, the library, the CLI's reading (``pushdown explain``) and the REST routes all
resolve the very same role, user and catalog, and whoever may act on it can read, grant,
revoke and delete it through each of them."""

from __future__ import annotations

import json
from pathlib import Path

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from pushdown.app.service.spec import load_spec_text
from pushdown.decide.evaluator import Evaluator, operation_named, resolve_target
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.text import has_control

from .asgi import Door, segment

M = "/api/metalakes/test"
ALPHABET = st.sampled_from([*"ab.`'\"/% é字😀\\*?#-_", "``", "..", "%2F", "`.`"])
names = st.one_of(
    st.lists(ALPHABET, min_size=1, max_size=12).map("".join),
    st.text(min_size=1, max_size=40),
    st.integers(20, 64).map(lambda n: "r." * n),  # long, up to the 128-character limit
).filter(lambda s: s.strip() == s and s.strip() and not has_control(s))


def _spec(role: str, user: str) -> str:
    # JSON is YAML: every name is written quoted, as the spec's author would quote it
    spec = {
        "metalake": "test",
        "service_admins": ["admin"],
        "users": ["admin", user],
        "roles": {role: {"owner": user, "to": [f"user {user}"]}},
        "owners": {"metalake": "admin"},
    }
    return json.dumps(spec, ensure_ascii=False)


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
# a user-id holding a colon cannot be sent in Basic authentication (RFC 7617: the first
# colon ends it), which is how the REST calls below name their caller
@given(role=names, user=names.filter(lambda s: s != "admin" and ":" not in s), catalog=names)
def test_every_entry_point_resolves_the_same_object(
    tmp_path: Path, role: str, user: str, catalog: str
) -> None:
    door = Door.open(tmp_path / f"pd{abs(hash((role, user, catalog)))}.db")
    try:
        # the spec (and `pushdown apply`) creates them
        door.ac.load_model(load_spec_text(_spec(role, user)))
        model = door.ac.model
        assert role in model.roles and user in model.users and role in model.user_roles[user]
        # the CLI's reading of a role name (`pushdown explain USER get_role ROLE`)
        target = resolve_target(operation_named("get_role"), role)
        assert target == ObjectRef(SecurableType.ROLE, (role,))
        assert Evaluator(model).authorize(user, "get_role", role).allowed
        # REST: the owner reads the role, its owner and its holder by the same names
        got = door.request("GET", f"{M}/roles/{segment(role)}", user)
        assert got.status == 200 and got.json()["role"]["name"] == role
        owner = door.request("GET", f"{M}/owners/role/{segment(role)}", user)
        assert owner.status == 200 and owner.json()["owner"]["name"] == user
        held = door.request("GET", f"{M}/users/{segment(user)}", "admin")
        assert held.status == 200 and held.json()["user"] == {**held.json()["user"], "name": user}
        # a catalog registered over REST is the library's catalog, and is found by its
        # full name on the {type}/{fullName} routes
        body = {"name": catalog, "type": "relational", "provider": "hive"}
        assert door.request("POST", f"{M}/catalogs", "admin", body).status == 200
        ref = ObjectRef(SecurableType.CATALOG, (catalog,))
        assert ref in door.ac.model.objects
        full = segment(ref.name)
        assert door.request("GET", f"{M}/owners/catalog/{full}", "admin").json()["owner"]["name"] == "admin"
        privileges = {"privileges": [{"name": "use_catalog", "condition": "allow"}]}
        grant = door.request(
            "PUT", f"{M}/permissions/roles/{segment(role)}/catalog/{full}/grant", "admin", privileges
        )
        assert grant.status == 200
        assert grant.json()["role"]["securableObjects"][0]["fullName"] == ref.name
        assert any(g.object == ref for g in door.ac.model.roles[role])
        revoke = f"{M}/permissions/roles/{segment(role)}/catalog/{full}/revoke"
        assert door.request("PUT", revoke, "admin", privileges).status == 200
        assert not door.ac.model.roles[role]
        # the library revokes the role, REST deletes it: the same role each time
        door.ac.acting("admin").revoke_role(role, Principal.user(user))
        assert role not in door.ac.model.user_roles.get(user, set())
        assert door.request("DELETE", f"{M}/roles/{segment(role)}", user).json()["deleted"] is True
        assert role not in door.ac.model.roles
        assert door.request("DELETE", f"{M}/catalogs/{segment(catalog)}", "admin").json()["dropped"] is True
    finally:
        door.close()
