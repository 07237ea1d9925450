"""An engine built from the last one's parts (``Reuse``: the evaluators of the policies and
the role book entries of the roles that did not change) decides as one built afresh."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown_lab.ranger_standin import Standin
from pushdown_lab.ranger_standin.policy_evaluation import AccessRequest, Reuse, ServicePolicies
from pushdown_lab.tests.test_ranger_standin_policy_index import GROUPS, HIVE, NAMES, PEOPLE, _policy

pytestmark = pytest.mark.ranger

ROLE_NAMES = ["r1", "r2", "r3"]


@st.composite
def _role(draw: st.DrawFn, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "users": [{"name": u} for u in draw(st.lists(st.sampled_from(PEOPLE), max_size=2, unique=True))],
        "groups": [{"name": g} for g in draw(st.lists(st.sampled_from(GROUPS), max_size=1))],
        "roles": [{"name": r} for r in draw(st.lists(st.sampled_from(ROLE_NAMES), max_size=1)) if r != name],
    }


@st.composite
def _history(draw: st.DrawFn) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """States of (policies, roles), each from the one before: an object kept is the same
    object, a changed policy or role a new one (as the stand-in's store does)."""
    policies = {pid: draw(_policy(pid)) for pid in range(draw(st.integers(1, 4)))}
    roles = {name: draw(_role(name)) for name in ROLE_NAMES if draw(st.booleans())}
    states = [(list(policies.values()), list(roles.values()))]
    for _ in range(draw(st.integers(1, 5))):
        for _ in range(draw(st.integers(0, 2))):
            pid = draw(st.integers(0, 5))
            if draw(st.booleans()) and pid in policies:
                del policies[pid]
            else:
                policies[pid] = draw(_policy(pid))
        for _ in range(draw(st.integers(0, 2))):
            name = draw(st.sampled_from(ROLE_NAMES))
            if draw(st.booleans()) and name in roles:
                del roles[name]
            else:
                roles[name] = draw(_role(name))
        states.append((list(policies.values()), list(roles.values())))
    return states


def _requests() -> list[AccessRequest]:
    return [
        AccessRequest({"database": db, "table": table}, access, user, groups)
        for db in NAMES[:2]
        for table in ("a", "b")
        for access in ("select", "update", "")
        for user in PEOPLE
        for groups in ([], ["g1"])
    ]


@settings(max_examples=40, deadline=None)
@given(_history())
def test_an_engine_from_the_last_ones_parts_decides_as_a_fresh_one(
    history: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]],
) -> None:
    reuse = Reuse()
    for policies, roles in history:
        kept = ServicePolicies(HIVE, policies, roles, reuse=reuse)
        fresh = ServicePolicies(HIVE, policies, roles)
        for user in PEOPLE:
            for groups in ([], ["g1"]):
                assert kept.role_book.roles_of(user, groups) == fresh.role_book.roles_of(user, groups)
        for request in _requests():
            assert kept.evaluate(request) == fresh.evaluate(request), request


def test_the_standin_takes_over_what_did_not_change() -> None:
    """After a policy update only that policy's evaluator is new; after a role's member
    is added, the other policies' evaluators are the same objects, and the decisions follow."""
    with Standin() as ranger:
        ranger.create_service("hive", "hive")
        store = ranger.store
        store.create_role({"name": "r1", "users": [{"name": "u1"}]})
        store.create_role({"name": "r2", "users": [{"name": "u2"}]})
        one = store.create_policy(_allow("p1", "d1", "r1"))
        store.create_policy(_allow("p2", "d2", "r2"))
        before = {e.id: e for e in ranger.service_policies("hive").evaluators}
        book = ranger.service_policies("hive").role_book
        assert not ranger.is_access_allowed("hive", {"database": "d1", "table": "t"}, "update", "u1")
        store.update_policy(one["id"], {**_allow("p1", "d1", "r1"), "policyItems": [_item("r1", "update")]})
        after = {e.id: e for e in ranger.service_policies("hive").evaluators}
        assert ranger.service_policies("hive").role_book is book  # no role changed: taken over
        assert after[one["id"]] is not before[one["id"]]
        assert all(after[k] is v for k, v in before.items() if k != one["id"])
        assert ranger.is_access_allowed("hive", {"database": "d1", "table": "t"}, "update", "u1")
        assert not ranger.is_access_allowed("hive", {"database": "d1", "table": "t"}, "update", "u3")
        role = store.list_roles({"roleName": "r1"})[0]
        store.update_role(role["id"], {**role, "users": [{"name": "u1"}, {"name": "u3"}]})
        again = {e.id: e for e in ranger.service_policies("hive").evaluators}
        assert all(again[k] is v for k, v in after.items())
        assert ranger.service_policies("hive").role_book is not book
        assert ranger.is_access_allowed("hive", {"database": "d1", "table": "t"}, "update", "u3")
        assert not ranger.is_access_allowed("hive", {"database": "d2", "table": "t"}, "select", "u3")


def _item(role: str, access: str) -> dict[str, Any]:
    return {"accesses": [{"type": access, "isAllowed": True}], "roles": [role]}


def _allow(name: str, database: str, role: str) -> dict[str, Any]:
    return {
        "service": "hive",
        "name": name,
        "resources": {"database": {"values": [database]}, "table": {"values": ["*"]}},
        "policyItems": [_item(role, "select")],
    }
