"""The page shows a caller no more than REST would: an object, user, group or role the
caller may not see is named nowhere on the page (explain's answer and trace, the audit,
the principal view's recent changes, the object view's reasons and DENYs)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef
from tests.rest.asgi import Answer, Door
from tests.rest.test_name_oracles import CALLER, _estate

# the estate of REST's name-oracle tests: the page must hide what REST hides there


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Door]:
    d = Door.open(tmp_path / "pd.db")
    _estate(d)
    yield d
    d.close()


def _main(answer: Answer) -> str:
    text = answer.body.decode()
    return text.split("<main>", 1)[1] if "<main>" in text else text


def _ui(door: Door, path: str, user: str = CALLER) -> Answer:
    return door.request("GET", path, user)


# -- explain ------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["set_owner", "grant_privilege", "revoke_privilege", "get_credential"])
def test_explain_of_an_operation_on_any_object_hides_one_the_caller_may_not_load(door: Door, op: str) -> None:
    def ask(target: str) -> Answer:
        return _ui(door, f"/ui/explain?user={CALLER}&op={op}&target={quote(target)}")

    hidden, missing = ask("table hcat.s.x"), ask("table hcat.s.nosuch")
    assert "admin owns" not in _main(hidden)
    assert hidden.status == missing.status == 404
    assert _main(hidden).replace("hcat.s.x", "N") == _main(missing).replace("hcat.s.nosuch", "N")
    # her own table is explained (the same operation, an object she may load)
    mine = ask("table c.s.t")
    assert mine.status == 200 and f"{CALLER} owns table c.s.t" in _main(mine)


def test_explain_of_an_operation_on_two_objects_is_answered_as_a_missing_one(door: Door) -> None:
    """The page asks for one target: an operation that also names a tag or a policy is
    answered like an unknown one (never a failure)."""
    unknown = _ui(door, f"/ui/explain?user={CALLER}&op=nosuch&target={quote('table c.s.t')}")
    for op in ("get_tag_for_object", "get_policy_for_object"):
        answer = _ui(door, f"/ui/explain?user={CALLER}&op={op}&target={quote('table c.s.t')}")
        assert answer.status == unknown.status == 404
        assert _main(answer) == _main(unknown)


def test_what_bob_may_do_names_no_role_or_group_the_caller_may_not_see(door: Door) -> None:
    """A MANAGE_USERS holder may see bob (REST's get_user), not his group staff nor the role
    'secret' it brings him: bob's trace on a catalog, the matrix's reasons and bob's
    principal view name neither."""
    door.ac.acting("admin").add_user("mgr")
    door.ac.create_role("um")
    door.ac.grant_privileges("um", METALAKE, [Privilege.MANAGE_USERS])
    door.ac.grant_role("um", Principal.user("mgr"))
    door.ac.grant_privileges("secret", ObjectRef.parse("catalog c"), [Privilege.USE_CATALOG])
    door.ac.grant_privileges("um", ObjectRef.parse("catalog c"), [Privilege.USE_CATALOG])
    assert door.request("GET", "/api/metalakes/test/users/bob", "mgr").status == 200
    assert door.request("GET", "/api/metalakes/test/roles/secret", "mgr").status == 403
    assert door.request("GET", "/api/metalakes/test/groups/staff", "mgr").status == 403
    page = _ui(door, "/ui/explain?user=bob&op=load_catalog&target=c", "mgr")
    assert page.status == 200 and "USE_CATALOG allowed" in _main(page)
    assert "secret" not in _main(page) and "staff" not in _main(page)
    cells = _ui(door, "/ui/matrix?users=bob&objects=" + quote("catalog c"), "mgr")
    assert cells.status == 200 and "USE_CATALOG allowed" in _main(cells)
    assert "secret" not in _main(cells) and "staff" not in _main(cells)
    view = _ui(door, "/ui/principal?name=bob", "mgr")
    assert view.status == 200 and 'data-object="catalog c"' in _main(view)
    assert "secret" not in _main(view) and "staff" not in _main(view)
    # the administrator sees them
    for path in ("/ui/explain?user=bob&op=load_catalog&target=c", "/ui/principal?name=bob"):
        assert "secret" in _main(_ui(door, path, "admin")) and "staff" in _main(_ui(door, path, "admin"))


# -- the audit and the principal view ------------------------------------------------------


def test_audit_names_no_role_the_caller_may_not_see(door: Door) -> None:
    """admin grants on mallory's own table to role 'secret': REST's roles-of-an-object hides it
    from her (she may not get_role it); the audit must not name it either."""
    door.ac.grant_privileges("secret", ObjectRef.parse("table c.s.t"), [Privilege.SELECT_TABLE])
    rest = door.request("GET", "/api/metalakes/test/objects/table/c.s.t/roles", CALLER)
    assert rest.status == 200 and "secret" not in rest.json()["names"]
    page = _ui(door, "/ui/audit")
    assert page.status == 200
    assert "secret" not in _main(page)
    assert "made user mallory the owner of table c.s.t" in _main(page)  # her own lines stay
    assert "secret" in _main(_ui(door, "/ui/audit", "admin"))


def test_principal_view_names_no_user_the_caller_may_not_see(door: Door) -> None:
    """bob is given mallory's role 'mine': REST lets mallory see only herself (get_user bob is
    refused, list_users shows her alone); her own principal view must not name bob."""
    door.ac.acting("admin").grant_role("mine", Principal.user("bob"))
    assert door.request("GET", "/api/metalakes/test/users/bob", CALLER).status == 403
    assert door.request("GET", "/api/metalakes/test/users", CALLER).json()["names"] == [CALLER]
    page = _ui(door, f"/ui/principal?name={CALLER}")
    assert page.status == 200
    assert not re.search(r"\bbob\b", _main(page))
    assert "granted role mine to user mallory" in _main(page)  # her own change stays


# -- the object view -----------------------------------------------------------------------


def test_object_view_names_no_role_the_caller_may_not_see(door: Door) -> None:
    """A MANAGE_USERS holder sees every user (more than a page of them) but not the roles
    REST's roles-of-an-object hides: no DENY row and no reason names them."""
    adm = door.ac.acting("admin")
    adm.add_user("mgr")
    for i in range(55):
        adm.add_user(f"u{i:02d}")
    door.ac.create_role("um")
    door.ac.grant_privileges("um", METALAKE, [Privilege.MANAGE_USERS])
    door.ac.grant_privileges(
        "um", ObjectRef.parse("catalog c"), [Privilege.USE_CATALOG, Privilege.USE_SCHEMA]
    )
    door.ac.grant_privileges("um", ObjectRef.parse("table c.s.t"), [Privilege.SELECT_TABLE])
    door.ac.grant_role("um", Principal.user("mgr"))
    door.ac.grant_privileges(
        "secret", ObjectRef.parse("catalog c"), [Privilege.USE_CATALOG, Privilege.USE_SCHEMA]
    )
    door.ac.grant_privileges("secret", ObjectRef.parse("table c.s.t"), [Privilege.SELECT_TABLE])
    door.ac.grant_privileges(
        "secret", ObjectRef.parse("table c.s.t"), [Privilege.MODIFY_TABLE], Condition.DENY
    )
    door.ac.grant_role("secret", Principal.user("u00"))
    rest = door.request("GET", "/api/metalakes/test/objects/table/c.s.t/roles", "mgr")
    assert rest.status == 200 and rest.json()["names"] == ["um"]
    page = _ui(door, "/ui/object?name=" + quote("table c.s.t"), "mgr")
    assert page.status == 200
    body = _main(page)
    assert "secret" not in body
    assert 'id="denies"' not in body  # the only DENY is held by a role mgr may not see
    assert "role um" in body  # his own role is named
    shown = _main(_ui(door, "/ui/object?name=" + quote("table c.s.t"), "admin"))
    assert "secret" in shown and 'id="denies"' in shown


def test_the_audit_names_no_object_the_caller_may_no_longer_load(door: Door) -> None:
    """mallory owned hcat.s.x for a while: once it is handed back REST hides it from her,
    and so does her audit (the line naming her names the table too)."""
    x = ObjectRef.parse("table hcat.s.x")
    door.ac.set_owner(x, CALLER)
    door.ac.set_owner(x, "admin")
    assert door.request("GET", "/api/metalakes/test/catalogs/hcat/schemas/s/tables/x", CALLER).status in (
        403,
        404,
    )
    page = door.request("GET", "/ui/audit", CALLER)
    assert page.status == 200
    assert "hcat.s.x" not in page.body.decode().split("<main>", 1)[-1]
