"""A role change moves the stand-in's role book by the changed roles' members alone.

Random role edit histories through the stand-in's store (users, groups and member roles added
and removed, roles deleted and made again, renamed in case): after every edit the engine the
stand-in serves (moved by the change) holds the same roles for every user as a book built
from the store's roles now, lists the same role objects and decides as an engine built
afresh; every older book still answers as it did when it was served. The cost: the entries a
role change writes are the same at two estates 10x apart.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from pushdown_lab.ranger_standin import RangerError, Standin
from pushdown_lab.ranger_standin.policy_evaluation import AccessRequest, ServicePolicies
from pushdown_lab.ranger_standin.policyitems import RoleBook

pytestmark = pytest.mark.ranger

USERS = ["u1", "u2", "u3", "u4"]
GROUPS = ["g1", "g2", "public"]
ROLES = ["r1", "r2", "r3", "R1", "r4"]
GROUPINGS: list[list[str]] = [[], ["g1"], ["g2"], ["g1", "g2"]]


def _members(rng: random.Random, name: str) -> dict[str, Any]:
    return {
        "users": [{"name": u} for u in rng.sample(USERS, rng.randint(0, 3))],
        "groups": [{"name": g} for g in rng.sample(GROUPS, rng.randint(0, 1))],
        "roles": [{"name": r} for r in rng.sample(ROLES, rng.randint(0, 2)) if r != name],
    }


def _edit(rng: random.Random, ranger: Standin) -> None:
    """One random role edit (a refused one changes nothing, as in Ranger)."""
    store = ranger.store
    roles = store.list_roles({})
    roll = rng.random()
    if roll < 0.2 or not roles:
        name = rng.choice(ROLES)
        store.create_role({"name": name, **_members(rng, name)}, create_missing=rng.random() < 0.5)
        return
    role = rng.choice(roles)
    rid = int(role["id"])
    if roll < 0.35:
        store.delete_role(rid)
    elif roll < 0.45:
        name = str(role["name"])
        renamed = name.upper() if name.islower() else name.lower()  # in case
        store.update_role(rid, {**role, "name": renamed})
    elif roll < 0.55:
        store.update_role(rid, {**role, **_members(rng, str(role["name"]))}, create_missing=True)
    else:
        kind = rng.choice(["users", "groups", "roles"])
        pool = {"users": USERS, "groups": GROUPS, "roles": ROLES}[kind]
        request: dict[str, Any] = {"targetRoles": [role["name"]], kind: [rng.choice(pool)]}
        store.grant_revoke(request, grant=rng.random() < 0.6)


def _fresh(ranger: Standin) -> ServicePolicies:
    store = ranger.store
    with store.lock:
        return ServicePolicies(
            store.service_def("hive"),
            store.list_policies({"serviceName": "hive"}, copied=False),
            [role for _, role in sorted(store.roles.items())],
        )


def _held(book: RoleBook) -> dict[tuple[str, tuple[str, ...]], frozenset[str]]:
    return {(u, tuple(g)): book.roles_of(u, g) for u in USERS for g in GROUPINGS}


def _differences(seed: int, steps: int = 40) -> tuple[list[str], int]:
    """Where the served engine and a fresh one differ over one history, and the moves made."""
    rng = random.Random(seed)
    found: list[str] = []
    moved = 0
    with Standin() as ranger:
        ranger.create_service("hive", "hive")
        for k, name in enumerate(ROLES):
            ranger.store.create_policy(
                {
                    "service": "hive",
                    "name": f"p{k}",
                    "resources": {"database": {"values": [f"d{k}"]}, "table": {"values": ["*"]}},
                    "policyItems": [{"roles": [name], "accesses": [{"type": "select", "isAllowed": True}]}],
                },
                create_missing=True,
            )
        served = ranger.service_policies("hive")
        seen: list[tuple[RoleBook, dict[tuple[str, tuple[str, ...]], frozenset[str]]]] = []
        for step in range(steps):
            try:
                _edit(rng, ranger)
            except RangerError:
                continue
            before, served = served, ranger.service_policies("hive")
            moved += served.role_book is not before.role_book
            fresh = _fresh(ranger)
            held = _held(served.role_book)
            if held != _held(fresh.role_book):
                found.append(f"seed {seed} step {step}: roles held")
            if [r["id"] for r in served.roles] != [r["id"] for r in fresh.roles]:
                found.append(f"seed {seed} step {step}: role objects")
            for k in range(len(ROLES)):
                for user in USERS:
                    request = AccessRequest({"database": f"d{k}", "table": "t"}, "select", user, ["g1"])
                    if served.evaluate(request) != fresh.evaluate(request):
                        found.append(f"seed {seed} step {step}: {request}")
            seen.append((served.role_book, held))
            for book, then in seen[-8:]:
                if _held(book) != then:
                    found.append(f"seed {seed} step {step}: an older book changed")
    return found, moved


HISTORIES = 30


def test_role_edits_moved_decide_as_built_afresh() -> None:
    results = [_differences(seed) for seed in range(HISTORIES)]
    assert [d for found, _ in results for d in found] == []
    assert sum(moved for _, moved in results) > HISTORIES * 15  # most edits moved the book


def test_a_skipped_role_move_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RoleBook, "moved", lambda self, gone, added: self)
    assert any(_differences(seed)[0] for seed in range(HISTORIES))


def _written_by_a_role_change(roles: int) -> int:
    """The role book entries written when one role's users change, in an estate of ``roles``
    roles (each with two users, a group, the role before it as a member)."""
    with Standin() as ranger:
        ranger.create_service("hive", "hive")
        store = ranger.store
        for k in range(roles):
            store.create_role(
                {
                    "name": f"r{k}",
                    "users": [{"name": f"u{k}"}, {"name": f"u{k + 1}"}],
                    "groups": [{"name": f"g{k % 7}"}],
                    "roles": [{"name": f"r{k - 1}"}] if k % 10 else [],
                }
            )
        store.create_policy(
            {
                "service": "hive",
                "name": "p",
                "resources": {"database": {"values": ["d"]}, "table": {"values": ["*"]}},
                "policyItems": [{"roles": ["r5"], "accesses": [{"type": "select", "isAllowed": True}]}],
            }
        )
        before = ranger.service_policies("hive")
        role = store.list_roles({"roleName": "r5"})[0]
        store.update_role(int(role["id"]), {**role, "users": [{"name": "u5"}, {"name": "x"}]})
        after = ranger.service_policies("hive")
        assert after.role_book is not before.role_book
        assert ranger.is_access_allowed("hive", {"database": "d", "table": "t"}, "select", "x")
        assert not ranger.is_access_allowed("hive", {"database": "d", "table": "t"}, "select", "u6")
        return _entries_written(before, after)


def _entries_written(before: ServicePolicies, after: ServicePolicies) -> int:
    """The role book entries and role list items the move made anew: what the move wrote,
    or (a book copied whole, a role list listed again) all of them."""
    written = int(getattr(after.role_book, "touched", 0))
    for name in ("by_user", "by_group", "containing"):  # a book whose indexes were copied
        index = getattr(after.role_book, name, None)
        if index is not None and index is not getattr(before.role_book, name, None):
            written += len(index)
    listed = after.__dict__.get("roles", after.__dict__.get("_roles"))
    if listed is not None and listed is not before.__dict__.get("roles", before.__dict__.get("_roles")):
        written += len(listed)
    return written


def test_a_role_change_writes_as_many_entries_at_ten_times_the_roles() -> None:
    small, large = _written_by_a_role_change(300), _written_by_a_role_change(3000)
    assert 0 < small == large, (small, large)
    assert small <= 6  # the role object and its members' entries (u5, u6, x, g5)
