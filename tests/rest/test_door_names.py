"""One name, one object; refusals that reveal nothing (issue 24: E4, L1, L2).

- A role's name is flat: ``x``, `` `x` `` and ``a.b`` are three roles, and the check and the
  change act on the same one, over REST as in the library.
- A caller who may not see an object gets the same bytes whether it exists or not, and a
  refusal names no owner, holder or grant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pushdown.model.securables import ObjectRef

from .asgi import Door, segment

M = "/api/metalakes/test"
CREATOR = {
    "name": "creators",
    "securableObjects": [
        {
            "type": "metalake",
            "fullName": "test",
            "privileges": [{"name": "create_role", "condition": "allow"}],
        }
    ],
}


def estate(door: Door, *, catalog: bool = True, table: bool = True) -> None:
    """The metalake ``test`` (admin owns it), users alice, bob and eve, the creators role
    (CREATE_ROLE) held by alice and bob, and catalog c1 / schema s1 / table t1 owned by admin."""
    admin = "admin"
    assert door.request("POST", "/api/metalakes", admin, {"name": "test"}).status == 200
    for user in ("alice", "bob", "eve"):
        assert door.request("POST", f"{M}/users", admin, {"name": user}).status == 200
    assert door.request("POST", f"{M}/roles", admin, CREATOR).status == 200
    for user in ("alice", "bob"):
        grant = {"roleNames": ["creators"]}
        assert door.request("PUT", f"{M}/permissions/users/{user}/grant", admin, grant).status == 200
    if catalog:
        body = {"name": "c1", "type": "relational", "provider": "hive"}
        assert door.request("POST", f"{M}/catalogs", admin, body).status == 200
        assert door.request("POST", f"{M}/catalogs/c1/schemas", admin, {"name": "s1"}).status == 200
        if table:
            path = f"{M}/catalogs/c1/schemas/s1/tables"
            assert door.request("POST", path, admin, {"name": "t1", "columns": []}).status == 200


@pytest.fixture
def doors(tmp_path: Path) -> Iterator[Callable[..., Door]]:
    opened: list[Door] = []

    def make(**shape: bool) -> Door:
        door = Door.open(tmp_path / f"pd{len(opened)}.db")
        opened.append(door)
        estate(door, **shape)
        return door

    yield make
    for door in opened:
        door.close()


# -- E4: one name, one role -------------------------------------------------------------


def test_e4_the_owner_of_role_x_neither_reads_nor_deletes_the_role_named_backtick_x(
    doors: Callable[..., Door],
) -> None:
    door = doors()
    assert door.request("POST", f"{M}/roles", "alice", {"name": "x"}).status == 200
    assert door.request("POST", f"{M}/roles", "bob", {"name": "`x`"}).status == 200
    bobs = f"{M}/roles/{segment('`x`')}"

    assert door.request("GET", bobs, "alice").status == 403
    assert door.request("DELETE", bobs, "alice").status == 403
    assert "`x`" in door.ac.model.roles and "x" in door.ac.model.roles

    mine = door.request("GET", bobs, "bob")
    assert mine.status == 200 and mine.json()["role"]["name"] == "`x`"
    assert door.request("DELETE", bobs, "bob").json()["deleted"] is True
    assert set(door.ac.model.roles) == {"creators", "x"}


@pytest.mark.parametrize("role", ["a.b", "`a`.b", "`q`", "x.`y`.z", ' "quoted" ', "a/b.c"])
def test_e4_a_role_with_dots_or_backticks_is_read_granted_revoked_and_deleted_over_rest(
    doors: Callable[..., Door], role: str
) -> None:
    door = doors()
    door.ac.acting("admin").create_role(role)  # as the library (and the CLI and a spec) make it
    path = f"{M}/roles/{segment(role)}"
    got = door.request("GET", path, "admin")
    assert got.status == 200 and got.json()["role"]["name"] == role
    assert (
        door.request("PUT", f"{M}/permissions/users/eve/grant", "admin", {"roleNames": [role]}).status == 200
    )
    assert role in door.ac.model.user_roles["eve"]
    privileges = {"privileges": [{"name": "select_table", "condition": "allow"}]}
    on_table = f"{M}/permissions/roles/{segment(role)}/table/c1.s1.t1"
    assert door.request("PUT", f"{on_table}/grant", "admin", privileges).status == 200
    assert door.request("PUT", f"{on_table}/revoke", "admin", privileges).status == 200
    owner = door.request("GET", f"{M}/owners/role/{segment(role)}", "admin")
    assert owner.status == 200 and owner.json()["owner"]["name"] == "admin"
    assert (
        door.request("PUT", f"{M}/permissions/users/eve/revoke", "admin", {"roleNames": [role]}).status == 200
    )
    assert door.request("DELETE", path, "admin").json()["deleted"] is True
    assert role not in door.ac.model.roles


def test_e4_the_library_checks_the_role_it_changes(doors: Callable[..., Door]) -> None:
    door = doors()
    door.ac.acting("alice").create_role("x")
    door.ac.acting("bob").create_role("`x`")
    with pytest.raises(Exception, match="may not"):
        door.ac.acting("alice").delete_role("`x`")
    door.ac.acting("bob").delete_role("`x`")
    assert set(door.ac.model.roles) == {"creators", "x"}
    assert ObjectRef.parse(str(ObjectRef.of("role", "`x`"))).names == ("`x`",)


# -- L1: a refusal names no owner -------------------------------------------------------


def test_l1_a_refusal_names_no_owner_and_reads_the_same_for_a_missing_table(
    doors: Callable[..., Door],
) -> None:
    with_table, without = doors(), doors(table=False)
    path = f"{M}/catalogs/c1/schemas/s1/tables/t1"
    for method in ("GET", "DELETE"):
        there, missing = with_table.request(method, path, "eve"), without.request(method, path, "eve")
        assert there.status == 403
        assert "admin" not in there.json()["message"]
        assert there.body == missing.body
    owners = f"{M}/owners/table/c1.s1.t1"
    there, missing = with_table.request("GET", owners, "eve"), without.request("GET", owners, "eve")
    assert there.status == 403 and there.body == missing.body


# -- L2: no existence oracle before authorization ---------------------------------------


@pytest.mark.parametrize("user", [None, "eve", "stranger"])
def test_l2_a_caller_cannot_tell_an_existing_catalog_or_metalake_from_a_missing_one(
    doors: Callable[..., Door], user: str | None
) -> None:
    door = doors()
    probes = [
        ("POST", f"{M}/catalogs/{{}}/schemas", {"name": "s9"}),
        ("GET", f"{M}/catalogs/{{}}/schemas", None),
        ("GET", f"{M}/catalogs/{{}}", None),
    ]
    for method, template, body in probes:
        real = door.request(method, template.format("c1"), user, body)
        ghost = door.request(method, template.format("c9"), user, body)
        assert real.status in (401, 403) and ghost.body == real.body.replace(b"c1", b"c9")
    ghost = door.request("GET", "/api/metalakes/nope", user)
    if user != "eve":  # eve is a user of metalake test: she sees it
        real = door.request("GET", "/api/metalakes/test", user)
        assert real.status in (401, 403) and ghost.body == real.body.replace(b"test", b"nope")
    assert ghost.status in (401, 403)  # a service admin, and only one, learns what does not exist
    assert door.request("GET", "/api/metalakes/nope", "admin").status == 404


def test_l1_a_refusal_by_the_core_names_no_owner_or_holder(doors: Callable[..., Door]) -> None:
    door = doors()
    held = door.request("DELETE", f"{M}/roles/creators", "eve")  # refused by the core's check
    assert held.status == 403
    assert held.json()["message"] == "eve may not delete_role role creators"
    grant = {"roleNames": ["creators"]}
    refused = door.request("PUT", f"{M}/permissions/users/eve/grant", "alice", grant)
    assert refused.status == 403 and "admin" not in refused.json()["message"]
