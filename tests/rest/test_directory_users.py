"""One name, one user: a user whom only the directory names (a group member recorded at
the last sync, ``AccessControl.decision_model``) is the same user in the listing, in a
read, in a grant and as an owner: listed and read (never a 404 for a listed name), and a
change that needs him in the model says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import Forbidden
from pushdown.model.events import ExternalMembersChanged
from pushdown.model.securables import ObjectRef

from .asgi import Door

USERS = "/api/metalakes/test/users"
PERMS = "/api/metalakes/test/permissions/users"


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Door]:
    d = Door.open(tmp_path / "pd.db")
    try:
        assert d.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
        admin = d.ac.acting("admin")
        admin.add_group("analysts")
        admin.create_role("reader")
        admin.grant_role("reader", "group analysts")
        # the directory says zed is an analyst (as a sync records it)
        d.ac.change(lambda _: [ExternalMembersChanged("analysts", frozenset({"zed"}))], directory=True)
        yield d
    finally:
        d.close()


def test_a_listed_directory_user_is_read_not_404(door: Door) -> None:
    listed = door.request("GET", USERS, "admin").json()["names"]
    assert "zed" in listed
    for name in listed:
        answer = door.request("GET", f"{USERS}/{name}", "admin")
        assert answer.status == 200, (name, answer.body)
        assert answer.json()["user"]["name"] == name
    assert door.request("GET", "/api/metalakes/test/groups/analysts", "admin").status == 200
    # zed, a user of the metalake through the directory, reads himself too
    assert door.request("GET", f"{USERS}/zed", "zed").status == 200
    assert door.request("GET", f"{USERS}/nobody", "admin").status == 404


def test_a_change_that_needs_the_directory_user_in_the_model_says_so(door: Door) -> None:
    grant = door.request("PUT", f"{PERMS}/zed/grant", "admin", {"roleNames": ["reader"]})
    assert grant.status == 400, grant.body
    assert "only the directory names" in grant.json()["message"]
    owner = door.request(
        "PUT", "/api/metalakes/test/owners/role/reader", "admin", {"name": "zed", "type": "USER"}
    )
    assert owner.status == 400, owner.body
    assert door.request("PUT", f"{PERMS}/nobody/grant", "admin", {"roleNames": ["reader"]}).status == 404
    # once added, the same name is granted as any user
    assert door.request("POST", USERS, "admin", {"name": "zed"}).status == 200
    assert door.request("PUT", f"{PERMS}/zed/grant", "admin", {"roleNames": ["reader"]}).status == 200
    assert door.request("GET", f"{USERS}/zed", "admin").json()["user"]["roles"] == ["reader"]


# -- removing a user the directory still names lifts no DENY -------------------------------

T1 = ObjectRef.of("table", "c1.s1.t1")
M = "/api/metalakes/test"


def _zed_reads(door: Door) -> bool:
    return Evaluator(door.ac.decision_model()).authorize("zed", "load_table", T1, explain=False).allowed


@pytest.fixture
def denied(door: Door) -> Door:
    """analysts (the directory names zed) may read c1.s1.t1; zed and eve, added, hold
    MANAGE_USERS (role helpdesk); role blocked holds the DENY of reading it."""
    admin = door.ac.acting("admin")
    admin.create_object("catalog c1")
    admin.create_object("schema c1.s1")
    admin.create_object("table c1.s1.t1")
    admin.grant_privileges("reader", "catalog c1", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
    admin.create_role("blocked")
    admin.grant_privileges("blocked", "table c1.s1.t1", ["SELECT_TABLE"], "DENY")
    admin.create_role("helpdesk")
    admin.grant_privileges("helpdesk", "metalake test", ["MANAGE_USERS"])
    admin.add_user("zed")
    admin.add_user("eve")
    admin.grant_role("helpdesk", "user zed")
    admin.grant_role("helpdesk", "user eve")
    assert _zed_reads(door)
    return door


def test_a_user_with_manage_users_cannot_remove_himself_out_of_his_deny(denied: Door) -> None:
    denied.ac.acting("admin").grant_role("blocked", "user zed")
    assert not _zed_reads(denied)
    assert denied.request("GET", f"{M}/catalogs/c1/schemas/s1/tables/t1", "zed").status == 403
    for caller in ("zed", "eve"):
        answer = denied.request("DELETE", f"{USERS}/zed", caller)
        assert answer.status == 403, answer.body
        assert "blocked" not in answer.json()["message"]  # a fixed rule, naming no role
        assert "zed" in denied.ac.model.users and not _zed_reads(denied)
    assert denied.request("GET", f"{M}/catalogs/c1/schemas/s1/tables/t1", "zed").status == 403
    # the metalake's owner may revoke the DENY, so he may remove zed (who then reads, as the
    # directory's analyst he is)
    assert denied.request("DELETE", f"{USERS}/zed", "admin").json()["removed"] is True
    assert _zed_reads(denied)


def test_a_model_group_with_a_deny_is_not_left_by_removing_a_directory_user(denied: Door) -> None:
    admin = denied.ac.acting("admin")
    admin.add_group("contractors", ["zed"])
    admin.grant_role("blocked", "group contractors")
    assert not _zed_reads(denied)
    assert denied.request("DELETE", f"{USERS}/zed", "eve").status == 403
    assert "zed" in denied.ac.model.groups["contractors"] and not _zed_reads(denied)


def _grantdesk(door: Door) -> None:
    """gus holds MANAGE_USERS, MANAGE_GROUPS and MANAGE_GRANTS: he may revoke roles."""
    admin = door.ac.acting("admin")
    admin.add_user("gus")
    admin.create_role("grantdesk")
    admin.grant_privileges("grantdesk", "metalake test", ["MANAGE_USERS", "MANAGE_GROUPS", "MANAGE_GRANTS"])
    admin.grant_role("grantdesk", "user gus")


def test_removing_a_user_the_directory_does_not_name_is_still_manage_users(denied: Door) -> None:
    denied.ac.acting("admin").add_user("amy")  # not in the directory: removed entirely
    denied.ac.acting("admin").grant_role("blocked", "user amy")
    assert denied.request("DELETE", f"{USERS}/amy", "eve").json()["removed"] is True
    # zed, whom the directory names, holds no DENY; eve may not see that (nor his groups):
    # she may not remove him, a caller who may revoke roles may
    answer = denied.request("DELETE", f"{USERS}/zed", "eve")
    assert answer.status == 403, answer.body
    assert "zed" in denied.ac.model.users
    _grantdesk(denied)
    assert denied.request("DELETE", f"{USERS}/zed", "gus").json()["removed"] is True
    assert _zed_reads(denied)


def test_a_group_whose_role_holds_a_deny_is_removed_only_by_who_may_revoke_it(denied: Door) -> None:
    """eve manages groups, not grants: removing a group she is in with a DENY would lift it."""
    admin = denied.ac.acting("admin")
    admin.create_role("groupdesk")
    admin.grant_privileges("groupdesk", "metalake test", ["MANAGE_GROUPS"])
    admin.grant_role("groupdesk", "user eve")
    admin.grant_role("reader", "user eve")
    admin.add_group("contractors", ["eve"])
    admin.grant_role("blocked", "group contractors")
    eve = Evaluator(denied.ac.decision_model()).authorize("eve", "load_table", T1, explain=False)
    assert not eve.allowed
    answer = denied.request("DELETE", f"{M}/groups/contractors", "eve")
    assert answer.status == 403, answer.body
    assert "blocked" not in answer.json()["message"]
    assert "contractors" in denied.ac.model.groups
    # an empty group with the same role too: she may not see that it is empty
    admin.add_group("empty")
    admin.grant_role("blocked", "group empty")
    assert denied.request("DELETE", f"{M}/groups/empty", "eve").status == 403
    # a group whose every role she may read (she holds reader) and holds no DENY, she removes
    admin.add_group("readers", ["eve"])
    admin.grant_role("reader", "group readers")
    assert denied.request("DELETE", f"{M}/groups/readers", "eve").json()["removed"] is True
    for group in ("empty", "contractors"):
        assert denied.request("DELETE", f"{M}/groups/{group}", "admin").json()["removed"] is True


def test_the_library_takes_nobody_out_of_a_group_with_a_deny_for_a_group_manager(denied: Door) -> None:
    admin = denied.ac.acting("admin")
    admin.create_role("groupdesk")
    admin.grant_privileges("groupdesk", "metalake test", ["MANAGE_GROUPS"])
    admin.grant_role("groupdesk", "user eve")
    admin.add_group("contractors", ["eve"])
    admin.grant_role("blocked", "group contractors")
    with pytest.raises(Forbidden, match="may not"):
        denied.ac.acting("eve").remove_member("contractors", "eve")
    assert "eve" in denied.ac.model.groups["contractors"]
    admin.remove_member("contractors", "eve")
    assert "eve" not in denied.ac.model.groups["contractors"]


# -- a DENY the principal keeps through another path is not lifted: a grant manager removes ---


def test_removing_a_directory_user_who_keeps_the_deny_through_the_directory(denied: Door) -> None:
    """zed holds blocked directly and as the directory's analyst: removing him lifts nothing;
    eve, who may see neither, is refused all the same, as for any user the directory names."""
    admin = denied.ac.acting("admin")
    admin.grant_role("blocked", "user zed")
    admin.grant_role("blocked", "group analysts")
    assert denied.request("DELETE", f"{USERS}/zed", "eve").status == 403
    _grantdesk(denied)
    assert denied.request("DELETE", f"{USERS}/zed", "gus").json()["removed"] is True
    assert not _zed_reads(denied)  # still denied: the directory keeps him an analyst


def _groupdesk(door: Door) -> None:
    admin = door.ac.acting("admin")
    admin.create_role("groupdesk")
    admin.grant_privileges("groupdesk", "metalake test", ["MANAGE_GROUPS"])
    admin.grant_role("groupdesk", "user eve")


def test_a_member_who_keeps_the_deny_another_way_is_taken_out_by_a_grant_manager(denied: Door) -> None:
    _groupdesk(denied)
    admin = denied.ac.acting("admin")
    admin.add_user("amy")
    admin.add_group("contractors", ["zed", "amy"])
    admin.grant_role("blocked", "group contractors")
    admin.grant_role("blocked", "user zed")  # zed keeps it directly
    # eve may not see that zed keeps it: the group's role holds a DENY, so she is refused both
    for user in ("zed", "amy"):
        with pytest.raises(Forbidden, match="may not"):
            denied.ac.acting("eve").remove_member("contractors", user)
        assert user in denied.ac.model.groups["contractors"]
    _grantdesk(denied)
    denied.ac.acting("gus").remove_member("contractors", "zed")
    assert "zed" not in denied.ac.model.groups["contractors"] and not _zed_reads(denied)


def test_a_group_whose_members_keep_its_deny_another_way_is_removed_by_a_grant_manager(
    denied: Door,
) -> None:
    _groupdesk(denied)
    admin = denied.ac.acting("admin")
    admin.add_group("contractors", ["zed"])
    admin.grant_role("blocked", "group contractors")
    admin.grant_role("blocked", "group analysts")  # zed, the directory's analyst, keeps it
    admin.add_group("temps", ["zed", "eve"])
    admin.grant_role("blocked", "group temps")
    # eve may not see its members, nor what they keep: a group holding a DENY she does not remove
    for group in ("contractors", "temps"):
        assert denied.request("DELETE", f"{M}/groups/{group}", "eve").status == 403
        assert group in denied.ac.model.groups
    _grantdesk(denied)
    assert denied.request("DELETE", f"{M}/groups/contractors", "gus").json()["removed"] is True
    assert not _zed_reads(denied)


# -- dropping a registration lifts no DENY on the data the server keeps ---------------------


def test_a_schema_owner_does_not_drop_a_deny_on_a_table_to_register_it_again(denied: Door) -> None:
    """The server keeps the table a drop unregisters: mallory, who owns the schema but may
    not revoke the DENY on the table, would drop it and register it again (she may drop it,
    so the server's copy does not stop her), and zed's catalog-wide ALLOW would reach it."""
    admin = denied.ac.acting("admin")
    admin.add_user("mallory")
    admin.set_owner("schema c1.s1", "mallory")
    admin.create_role("builder")
    admin.grant_privileges("builder", "catalog c1", ["USE_CATALOG", "USE_SCHEMA", "CREATE_TABLE"])
    admin.grant_role("builder", "user mallory")
    admin.grant_role("blocked", "user zed")
    assert not _zed_reads(denied)
    with pytest.raises(Forbidden):
        denied.ac.acting("mallory").revoke_privileges("blocked", "table c1.s1.t1", ["SELECT_TABLE"], "DENY")
    answer = denied.request("DELETE", f"{M}/catalogs/c1/schemas/s1/tables/t1", "mallory")
    assert answer.status == 403, answer.body
    assert "blocked" not in answer.json()["message"]
    assert T1 in denied.ac.model.objects and not _zed_reads(denied)
    cascade = denied.request("DELETE", f"{M}/catalogs/c1/schemas/s1?cascade=true", "mallory")
    assert cascade.status == 403, cascade.body
    assert T1 in denied.ac.model.objects and not _zed_reads(denied)
    # a table with no DENY she still drops; the metalake's owner drops this one
    admin.create_object("table c1.s1.t2")
    assert denied.request("DELETE", f"{M}/catalogs/c1/schemas/s1/tables/t2", "mallory").json()["dropped"]
    assert denied.request("DELETE", f"{M}/catalogs/c1/schemas/s1/tables/t1", "admin").json()["dropped"]


def test_a_schema_owner_does_not_rename_a_deny_away_from_the_server_name(denied: Door) -> None:
    """A rename moves the grants to the new name; the server's table keeps the old one."""
    admin = denied.ac.acting("admin")
    admin.add_user("mallory")
    admin.set_owner("schema c1.s1", "mallory")
    admin.create_role("builder")
    admin.grant_privileges("builder", "catalog c1", ["USE_CATALOG", "USE_SCHEMA"])
    admin.grant_role("builder", "user mallory")
    admin.grant_role("blocked", "user zed")
    with pytest.raises(Forbidden, match="only a caller who may revoke"):
        denied.ac.acting("mallory").rename_object("table c1.s1.t1", "t9")
    assert T1 in denied.ac.model.objects and not _zed_reads(denied)
    admin.create_object("table c1.s1.t2")
    denied.ac.acting("mallory").rename_object("table c1.s1.t2", "t8")  # no DENY there
    admin.rename_object("table c1.s1.t1", "t9")
