"""A removal's refusal reveals nothing the caller may not see, and lifts no DENY.

Removing a user the directory still names, or a group with members, would lift a DENY of a
role the removal takes away. A holder of MANAGE_USERS (or MANAGE_GROUPS) who may not read
that role (``get_role``) must get the same answer whether it holds a DENY or not, and
whether the user is in a group or the group has members (neither shows to him): each pair
of twin estates below differs in one such fact only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import Forbidden
from pushdown.model.events import ExternalMembersChanged
from pushdown.model.securables import ObjectRef

from .asgi import Answer, Door

M = "/api/metalakes/test"
T1 = ObjectRef.of("table", "c1.s1.t1")


def _estate(path: Path, *, deny: bool, how: str) -> Door:
    """The directory names zed an analyst (analysts may read c1.s1.t1); zed, added, holds
    role x (SELECT_TABLE on the table: DENY or ALLOW) directly (``how="direct"``), through
    the model's group contractors (``"group"``), or not at all with contractors empty
    (``"empty"``); eve holds MANAGE_USERS and MANAGE_GROUPS, and may read none of x."""
    door = Door.open(path)
    assert door.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
    admin = door.ac.acting("admin")
    for obj in ("catalog c1", "schema c1.s1", "table c1.s1.t1"):
        admin.create_object(obj)
    admin.add_group("analysts")
    admin.create_role("reader")
    admin.grant_privileges("reader", "catalog c1", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
    admin.grant_role("reader", "group analysts")
    door.ac.change(lambda _: [ExternalMembersChanged("analysts", frozenset({"zed"}))], directory=True)
    admin.create_role("x")
    admin.grant_privileges("x", "table c1.s1.t1", ["SELECT_TABLE"], "DENY" if deny else "ALLOW")
    admin.create_role("desk")
    admin.grant_privileges("desk", "metalake test", ["MANAGE_USERS", "MANAGE_GROUPS"])
    admin.add_user("eve")
    admin.grant_role("desk", "user eve")
    admin.add_user("zed")
    admin.add_group("contractors", ["zed"] if how == "group" else [])
    admin.grant_role("x", "group contractors")
    if how == "direct":
        admin.grant_role("x", "user zed")
    return door


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[dict[tuple[bool, str], Door]]:
    doors = {
        (deny, how): _estate(tmp_path / f"{deny}-{how}.db", deny=deny, how=how)
        for deny in (True, False)
        for how in ("direct", "group", "empty")
    }
    try:
        yield doors
    finally:
        for door in doors.values():
            door.close()


def _reads(door: Door) -> bool:
    return Evaluator(door.ac.decision_model()).authorize("zed", "load_table", T1, explain=False).allowed


def _same(answers: list[Answer]) -> None:
    first = answers[0]
    for answer in answers[1:]:
        assert (answer.status, answer.body) == (first.status, first.body)


def test_removing_a_directory_user_answers_alike_whatever_his_roles_hold(
    twins: dict[tuple[bool, str], Door],
) -> None:
    """eve may not read x nor see zed's groups: the DENY in x, and whether he holds it
    directly, through a group or not at all, change nothing in her answer (before, the
    refusal told her that a role of zed held a DENY)."""
    answers = [door.request("DELETE", f"{M}/users/zed", "eve") for door in twins.values()]
    _same(answers)
    assert answers[0].status == 403, answers[0].body
    for (deny, how), door in twins.items():
        assert "zed" in door.ac.model.users
        assert _reads(door) is not (deny and how != "empty")  # nothing lifted
    # who may revoke roles (the metalake's owner) removes him; his DENY goes with the roles
    for door in twins.values():
        assert door.request("DELETE", f"{M}/users/zed", "admin").json()["removed"] is True
        assert _reads(door)


def test_removing_a_group_answers_alike_whatever_its_roles_hold_and_whoever_is_in_it(
    twins: dict[tuple[bool, str], Door],
) -> None:
    """contractors holds x, which eve may not read: whether x holds a DENY and whether the
    group has members change nothing in her answer (before, only a group with members and
    a DENY was refused)."""
    answers = [door.request("DELETE", f"{M}/groups/contractors", "eve") for door in twins.values()]
    _same(answers)
    assert answers[0].status == 403, answers[0].body
    for (deny, how), door in twins.items():
        assert "contractors" in door.ac.model.groups
        assert _reads(door) is not (deny and how != "empty")
    for door in twins.values():
        assert door.request("DELETE", f"{M}/groups/contractors", "admin").json()["removed"] is True


def test_a_group_manager_who_reads_every_role_of_the_group_still_removes_it(
    twins: dict[tuple[bool, str], Door],
) -> None:
    """eve holds x herself (so she reads it): an x with no DENY she removes with the group;
    an x with a DENY she may see, and is refused, whatever the members."""
    for (deny, how), door in twins.items():
        door.ac.acting("admin").grant_role("x", "user eve")
        answer = door.request("DELETE", f"{M}/groups/contractors", "eve")
        if deny:
            assert answer.status == 403, answer.body
            assert "contractors" in door.ac.model.groups
            assert "x" not in answer.json()["message"].split()  # a fixed rule, naming no role
        else:
            assert answer.json()["removed"] is True, (how, answer.body)


def test_a_user_the_directory_does_not_name_is_removed_by_a_user_manager(
    twins: dict[tuple[bool, str], Door],
) -> None:
    """Removed entirely (no longer a user), amy keeps no ALLOW a DENY of hers could have
    narrowed: MANAGE_USERS alone removes her, DENY or not."""
    for door in twins.values():
        admin = door.ac.acting("admin")
        admin.add_user("amy")
        admin.grant_role("x", "user amy")
        admin.add_member("contractors", "amy")
        assert door.request("DELETE", f"{M}/users/amy", "eve").json()["removed"] is True
        assert "amy" not in door.ac.decision_model().users


# -- a service admin named by the configuration is a user like any other --------------------

CALLS = [
    ("GET", "/api/metalakes", None),
    ("GET", M, None),
    ("GET", f"{M}/users", None),
    ("GET", f"{M}/roles", None),
    ("GET", f"{M}/catalogs", None),
    ("POST", "/api/metalakes", {"name": "other"}),
    ("POST", f"{M}/users", {"name": "newcomer"}),
]


def _rights(door: Door) -> dict[tuple[str, str], bool]:
    """What the other users may do on the catalog root owned, and with users."""
    evaluator = Evaluator(door.ac.decision_model())
    checks = (("load_catalog", ObjectRef.parse("catalog c9")), ("add_user", "x"), ("remove_user", "zed"))
    return {
        (user, op): evaluator.authorize(user, op, target, explain=False).allowed
        for user in ("admin", "eve", "zed")
        for op, target in checks
    }


def test_removing_a_service_admin_of_the_configuration_changes_no_one_else(tmp_path: Path) -> None:
    """root and ops are service admins by ``[access] service_admins``; root was added as a
    user, holds a role and owns a catalog. The power the configuration gives (the metalake's
    gate, creating the metalake, the page's admin view) is not the model's to take: a
    MANAGE_USERS holder removing root takes what removing any user takes (his roles, his
    ownerships), and leaves him exactly as ops, never added. Nobody else's rights change."""
    door = Door.open(tmp_path / "pd.db", admins=("admin", "root", "ops"))
    try:
        assert door.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
        admin = door.ac.acting("admin")
        for user in ("root", "eve", "zed"):
            admin.add_user(user)
        admin.create_role("desk")
        admin.grant_privileges("desk", "metalake test", ["MANAGE_USERS"])
        admin.grant_role("desk", "user eve")
        admin.grant_role("desk", "user root")
        admin.create_object("catalog c9")
        admin.set_owner("catalog c9", "root")
        before = _rights(door)
        assert door.request("DELETE", f"{M}/users/root", "eve").json()["removed"] is True
        assert "root" not in door.ac.decision_model().users
        assert door.ac.model.service_admins == set()  # the model never held him as one
        assert door.ac.model.owners.get(ObjectRef.parse("catalog c9")) is None
        assert _rights(door) == before
        for method, path, body in CALLS:
            root = door.request(method, path, "root", body)
            ops = door.request(method, path, "ops", body)
            assert root.status == ops.status, (path, root.body, ops.body)
            assert root.body.replace(b"root", b"ops") == ops.body, path
        # the listing shows neither, and root is added again as any user
        assert "root" not in door.request("GET", f"{M}/users", "admin").json()["names"]
        assert door.request("POST", f"{M}/users", "eve", {"name": "root"}).status == 200
    finally:
        door.close()


# -- a membership added grants the group's roles ----------------------------------------------


def test_a_group_manager_grants_no_role_by_adding_a_member(twins: dict[tuple[bool, str], Door]) -> None:
    """Taking a user into a group grants him its roles: a holder of MANAGE_GROUPS who may
    not grant roles (``grant_role``) neither joins analysts herself (whose role reads
    c1.s1.t1) nor puts back amy, removed and added again, whose DENY went with her roles.
    A group holding no role she fills; the metalake's owner fills any."""
    door = twins[(True, "direct")]
    admin = door.ac.acting("admin")
    admin.add_user("amy")
    admin.grant_role("x", "user amy")
    admin.add_member("analysts", "amy")
    evaluator = Evaluator(door.ac.decision_model())
    assert not evaluator.authorize("amy", "load_table", T1, explain=False).allowed
    eve = door.ac.acting("eve")
    with pytest.raises(Forbidden):
        eve.add_member("analysts", "eve")
    eve.remove_user("amy")  # removed entirely: no ALLOW left
    eve.add_user("amy")
    with pytest.raises(Forbidden):
        eve.add_member("analysts", "amy")
    evaluator = Evaluator(door.ac.decision_model())
    assert not any(evaluator.authorize(u, "load_table", T1, explain=False).allowed for u in ("amy", "eve"))
    assert "amy" not in door.ac.model.groups["analysts"]
    eve.add_group("plain")
    eve.add_member("plain", "amy")
    admin.add_member("analysts", "eve")
    assert Evaluator(door.ac.decision_model()).authorize("eve", "load_table", T1, explain=False).allowed
