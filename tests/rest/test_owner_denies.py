"""Handing an object to a new owner, or deleting a role, lifts no DENY the caller may not
revoke: an owner's rights pass every DENY on the object and below, and a deleted role's
DENYs go from whoever held it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import Forbidden
from pushdown.model.securables import ObjectRef

from .asgi import Door

M = "/api/metalakes/test"
T1 = ObjectRef.of("table", "c1.s1.t1")
S1 = ObjectRef.of("schema", "c1.s1")


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Door]:
    """zed reads catalog c1 but role blocked (owned by bob, who may create roles) DENYs
    him table c1.s1.t1 (the metalake owner's table); mallory owns schema c1.s1 and uses
    the catalog, and may not revoke the DENY."""
    d = Door.open(tmp_path / "pd.db")
    try:
        assert d.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
        admin = d.ac.acting("admin")
        for obj in ("catalog c1", "schema c1.s1", "table c1.s1.t1", "schema c1.s2"):
            admin.create_object(obj)
        for user in ("zed", "mallory", "bob"):
            admin.add_user(user)
        admin.set_owner("schema c1.s1", "mallory")
        admin.set_owner("schema c1.s2", "mallory")
        admin.create_role("reader")
        admin.grant_privileges("reader", "catalog c1", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
        admin.grant_role("reader", "user zed")
        admin.grant_role("reader", "user mallory")
        admin.create_role("creator")
        admin.grant_privileges("creator", "metalake test", ["CREATE_ROLE"])
        admin.grant_role("creator", "user bob")
        assert d.request("POST", f"{M}/roles", "bob", {"name": "blocked"}).status == 200
        admin.grant_privileges("blocked", "table c1.s1.t1", ["SELECT_TABLE"], "DENY")
        admin.grant_role("blocked", "user zed")
        assert not _zed_reads(d)
        yield d
    finally:
        d.close()


def _zed_reads(door: Door) -> bool:
    return Evaluator(door.ac.decision_model()).authorize("zed", "load_table", T1, explain=False).allowed


def _owner(door: Door, kind: str, name: str, caller: str, new: str) -> int:
    body = {"name": new, "type": "USER"}
    return door.request("PUT", f"{M}/owners/{kind}/{name}", caller, body).status


def test_a_schema_owner_does_not_hand_a_deny_below_to_a_new_owner(door: Door) -> None:
    """Owning c1.s1, zed would load t1 past his DENY, which mallory may not revoke."""
    assert _owner(door, "schema", "c1.s1", "mallory", "zed") == 403
    assert door.ac.model.owners[S1] == "mallory" and not _zed_reads(door)
    # a schema with no DENY in it she hands over; the metalake's owner (who may revoke
    # roles) hands over this one
    assert _owner(door, "schema", "c1.s2", "mallory", "zed") == 200
    assert _owner(door, "schema", "c1.s1", "admin", "zed") == 403  # not its owner: the table's rule
    door.ac.set_owner("schema c1.s1", "admin")  # the administrator gives it back
    assert _owner(door, "schema", "c1.s1", "admin", "zed") == 200
    assert _zed_reads(door)


def test_the_owner_of_the_denied_object_may_hand_it_over(door: Door) -> None:
    """mallory owns t1 itself: she may revoke the DENY on it, so she may give it away."""
    door.ac.set_owner("table c1.s1.t1", "mallory")
    assert _owner(door, "table", "c1.s1.t1", "mallory", "zed") == 200
    assert _zed_reads(door)


def test_a_role_owner_does_not_delete_a_deny_another_put_in_his_role(door: Door) -> None:
    answer = door.request("DELETE", f"{M}/roles/blocked", "bob")
    assert answer.status == 403, answer.body
    assert "blocked" in door.ac.model.roles and not _zed_reads(door)
    # a role of his with no DENY he deletes; the metalake's owner deletes this one
    assert door.request("POST", f"{M}/roles", "bob", {"name": "plain"}).status == 200
    assert door.request("DELETE", f"{M}/roles/plain", "bob").json()["deleted"] is True
    assert door.request("DELETE", f"{M}/roles/blocked", "admin").json()["deleted"] is True
    assert _zed_reads(door)


def test_a_role_owner_deletes_a_deny_he_may_revoke(door: Door) -> None:
    """bob owns table t2 and put the DENY on it in his role himself: he may revoke it."""
    admin = door.ac.acting("admin")
    admin.create_object("table c1.s1.t2")
    admin.set_owner("table c1.s1.t2", "bob")
    assert door.request("POST", f"{M}/roles", "bob", {"name": "mine"}).status == 200
    door.ac.acting("bob").grant_privileges("mine", "table c1.s1.t2", ["SELECT_TABLE"], "DENY")
    assert door.request("DELETE", f"{M}/roles/mine", "bob").json()["deleted"] is True


def test_a_table_owner_does_not_hand_a_deny_above_it_to_a_new_owner(door: Door) -> None:
    """A DENY on the schema reaches t3 below it, and an owner's rights pass it too: mallory
    owns t3 (so she may revoke a DENY on it) but not schema c1.s3, whose DENY she may not
    revoke; handing t3 to zed would let him read it past that DENY."""
    admin = door.ac.acting("admin")
    for obj in ("schema c1.s3", "table c1.s3.t3"):
        admin.create_object(obj)
    admin.set_owner("table c1.s3.t3", "mallory")
    admin.grant_privileges("blocked", "schema c1.s3", ["SELECT_TABLE"], "DENY")
    t3 = ObjectRef.of("table", "c1.s3.t3")

    def reads() -> bool:
        return Evaluator(door.ac.decision_model()).authorize("zed", "load_table", t3, explain=False).allowed

    assert not reads()
    assert _owner(door, "table", "c1.s3.t3", "mallory", "zed") == 403
    assert door.ac.model.owners[t3] == "mallory" and not reads()
    # the metalake's owner (who may revoke roles) hands it over
    door.ac.set_owner("table c1.s3.t3", "admin")
    assert _owner(door, "table", "c1.s3.t3", "admin", "zed") == 200
    assert reads()


def test_a_caller_names_no_other_owner_of_what_he_creates(door: Door) -> None:
    """The library's ``creator=`` and ``owner=`` name who owns a new object or role: a
    checked caller naming another would hand him ownership past every check of set_owner
    (zed, denied the tables of c1.s1, would own and read a new one). He creates as himself,
    and hands it over as set_owner allows."""
    door.ac.grant_privileges("blocked", "schema c1.s1", ["SELECT_TABLE"], "DENY")
    door.ac.create_role("maker")
    door.ac.grant_privileges("maker", "catalog c1", ["USE_CATALOG", "USE_SCHEMA", "CREATE_TABLE"])
    door.ac.grant_privileges("maker", "metalake test", ["CREATE_ROLE"])
    door.ac.grant_role("maker", "user mallory")
    mallory = door.ac.acting("mallory")
    t5 = ObjectRef.of("table", "c1.s1.t5")
    with pytest.raises(Forbidden):
        mallory.create_object("table c1.s1.t5", creator="zed")
    with pytest.raises(Forbidden):
        mallory.create_role("r9", owner="zed")
    assert t5 not in door.ac.model.objects and "r9" not in door.ac.model.roles
    assert not Evaluator(door.ac.decision_model()).authorize("zed", "load_table", t5, explain=False).allowed
    mallory.create_object("table c1.s1.t5", creator="mallory")
    mallory.create_role("r9")
    assert door.ac.model.owners[t5] == "mallory"
    assert door.ac.model.owners[ObjectRef.of("role", "r9")] == "mallory"


def test_a_deny_above_that_no_owner_passes_does_not_hold_a_hand_over_back(door: Door) -> None:
    """A DENY of CREATE_CATALOG on the metalake reaches nothing an owner of a table gains:
    bob hands his table over. One of SELECT_TABLE there (which an owner meets another
    way) he may not revoke, and he keeps it."""
    admin = door.ac.acting("admin")
    admin.create_object("table c1.s2.t4")
    door.ac.set_owner("table c1.s2.t4", "bob")
    admin.grant_privileges("blocked", "metalake test", ["CREATE_CATALOG"], "DENY")
    assert _owner(door, "table", "c1.s2.t4", "bob", "zed") == 200
    door.ac.set_owner("table c1.s2.t4", "bob")
    admin.grant_privileges("blocked", "metalake test", ["SELECT_TABLE"], "DENY")
    assert _owner(door, "table", "c1.s2.t4", "bob", "zed") == 403
