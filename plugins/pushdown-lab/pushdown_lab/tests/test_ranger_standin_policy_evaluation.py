"""The stand-in's evaluation of its current policies and roles (the API the backend's proofs use)."""

from __future__ import annotations

from typing import Any

import pytest
from apache_ranger.client.ranger_client import RangerClient

from pushdown_lab.ranger_standin import Standin
from pushdown_lab.ranger_standin.policy_evaluation import AccessRequest, ServicePolicies
from pushdown_lab.ranger_standin.servicedefs import load_service_defs

pytestmark = pytest.mark.ranger

HIVE = next(d for d in load_service_defs() if d["name"] == "hive")


def _table(db: str, table: str, column: str = "*") -> dict[str, Any]:
    return {"database": {"values": [db]}, "table": {"values": [table]}, "column": {"values": [column]}}


def _item(accesses: list[str], **who: list[str]) -> dict[str, Any]:
    return {"accesses": [{"type": a, "isAllowed": True} for a in accesses], **who}


@pytest.fixture
def hive(ranger_standin: Standin) -> Standin:
    ranger_standin.create_service("hivedev", "hive")
    return ranger_standin


def _allowed(standin: Standin, user: str, access: str, groups: tuple[str, ...] = (), **res: str) -> bool:
    return standin.is_access_allowed("hivedev", res, access, user, groups)


def test_allow_deny_and_exceptions(hive: Standin) -> None:
    hive.store.create_policy(
        {
            "service": "hivedev",
            "name": "sales",
            "resources": _table("sales", "*"),
            "policyItems": [_item(["select", "update"], groups=["analysts"])],
            "allowExceptions": [_item(["update"], users=["intern"])],
            "denyPolicyItems": [_item(["select"], users=["mallory"])],
            "denyExceptions": [_item(["select"], groups=["auditors"])],
        }
    )
    where = {"database": "sales", "table": "orders", "column": "id"}
    assert _allowed(hive, "ann", "select", ("analysts",), **where)
    assert not _allowed(hive, "ann", "select", (), **where)  # not determined: denied
    assert not _allowed(hive, "intern", "update", ("analysts",), **where)  # allow exception
    assert _allowed(hive, "intern", "select", ("analysts",), **where)
    assert not _allowed(hive, "mallory", "select", ("analysts",), **where)  # deny wins
    assert hive.evaluate("hivedev", where, "select", "mallory", ["analysts"]).determined
    assert not hive.evaluate("hivedev", where, "select", "ann").determined
    with_exception = hive.evaluate("hivedev", where, "select", "mallory", ["analysts", "auditors"])
    assert with_exception.allowed  # the deny exception lifts the deny, the allow item applies


def test_roles_groups_public_and_nested(hive: Standin) -> None:
    hive.store.create_role({"name": "readers", "users": [{"name": "bob"}], "groups": [{"name": "bi"}]})
    hive.store.create_role({"name": "all_readers", "roles": [{"name": "readers"}]})
    hive.store.create_policy(
        {
            "service": "hivedev",
            "name": "p",
            "resources": _table("db", "t"),
            "policyItems": [_item(["select"], roles=["all_readers"]), _item(["update"], groups=["public"])],
        }
    )
    where = {"database": "db", "table": "t", "column": "c"}
    assert _allowed(hive, "bob", "select", **where)
    assert _allowed(hive, "carol", "select", ("bi",), **where)
    assert not _allowed(hive, "dave", "select", **where)
    assert _allowed(hive, "dave", "update", **where)  # public
    role = hive.store.role_by_name("readers")
    hive.store.update_role(role["id"], {**role, "users": []})
    assert not _allowed(hive, "bob", "select", **where)  # the cached engine sees the role change


def test_priority_override_and_deny_all_else(hive: Standin) -> None:
    hive.store.create_policy(
        {
            "service": "hivedev",
            "name": "deny",
            "resources": _table("db", "t"),
            "denyPolicyItems": [_item(["select"], groups=["public"])],
        }
    )
    hive.store.create_policy(
        {
            "service": "hivedev",
            "name": "override",
            "policyPriority": 1,
            "resources": _table("db", "t", "c1"),
            "policyItems": [_item(["select"], users=["eve"])],
        }
    )
    hive.store.create_policy(
        {
            "service": "hivedev",
            "name": "only",
            "isDenyAllElse": True,
            "resources": _table("db2", "*"),
            "policyItems": [_item(["all"], users=["root"])],
        }
    )
    assert _allowed(hive, "eve", "select", database="db", table="t", column="c1")
    assert not _allowed(hive, "eve", "select", database="db", table="t", column="c2")
    assert _allowed(hive, "root", "drop", database="db2", table="x", column="y")  # 'all' implies drop
    denied = hive.evaluate("hivedev", {"database": "db2", "table": "x", "column": "y"}, "select", "ann")
    assert not denied.allowed and denied.determined


def test_matching_wildcards_case_excludes_and_any_access(hive: Standin) -> None:
    hive.store.create_policy(
        {
            "service": "hivedev",
            "name": "p",
            "resources": {
                "database": {"values": ["fin?"]},
                "table": {"values": ["secret*"], "isExcludes": True},
                "column": {"values": ["*"]},
            },
            "policyItems": [_item(["select"], users=["ann"])],
        }
    )
    assert _allowed(hive, "ann", "select", database="FIN1", table="public", column="c")  # ignoreCase
    assert not _allowed(hive, "ann", "select", database="fin1", table="secret_pay", column="c")
    assert not _allowed(hive, "ann", "select", database="fin12", table="public", column="c")
    assert hive.is_access_allowed("hivedev", {"database": "fin1"}, "", "ann")  # any access, descendant
    assert not hive.is_access_allowed("hivedev", {"database": "fin1"}, "select", "ann")


def test_paths_recursion_and_owner(ranger_standin: Standin) -> None:
    ranger_standin.create_service("hdfsdev", "hdfs")
    ranger_standin.store.create_policy(
        {
            "service": "hdfsdev",
            "name": "home",
            "resources": {"path": {"values": ["/home/{USER}"], "isRecursive": True}},
            "policyItems": [_item(["read", "write"], users=["{USER}"])],
        }
    )
    ranger_standin.store.create_policy(
        {
            "service": "hdfsdev",
            "name": "data",
            "resources": {"path": {"values": ["/data"], "isRecursive": False}},
            "policyItems": [_item(["read"], users=["{OWNER}"])],
        }
    )
    allowed = ranger_standin.is_access_allowed
    assert allowed("hdfsdev", {"path": "/home/ann/notes/a.txt"}, "write", "ann")
    assert not allowed("hdfsdev", {"path": "/home/ann/notes/a.txt"}, "write", "bob")
    assert not allowed("hdfsdev", {"path": "/Home/ann"}, "read", "ann")  # hdfs paths are case sensitive
    assert allowed("hdfsdev", {"path": "/data"}, "read", "ann", owner="ann")
    assert not allowed("hdfsdev", {"path": "/data/x"}, "read", "ann", owner="ann")  # not recursive
    assert not allowed("hdfsdev", {"path": "/data"}, "read", "ann", owner="bob")


def test_deny_items_ignored_when_the_service_def_disables_them() -> None:
    policy = {
        "id": 1,
        "name": "p",
        "resources": _table("db", "t"),
        "policyItems": [_item(["select"], users=["a"])],
        "denyPolicyItems": [_item(["select"], users=["a"])],
    }
    request = AccessRequest({"database": "db", "table": "t", "column": "c"}, "select", "a")
    assert not ServicePolicies(HIVE, [policy]).evaluate(request).allowed
    disabled = {**HIVE, "options": {"enableDenyAndExceptionsInPolicies": "false"}}
    assert ServicePolicies(disabled, [policy]).evaluate(request).allowed


def test_kafka_topics(ranger_standin: Standin) -> None:
    ranger_standin.create_service("kafkadev", "kafka")
    ranger_standin.store.create_policy(
        {
            "service": "kafkadev",
            "name": "t",
            "resources": {"topic": {"values": ["orders"]}},
            "policyItems": [_item(["publish", "consume"], groups=["apps"])],
        }
    )
    assert ranger_standin.is_access_allowed("kafkadev", {"topic": "orders"}, "consume", "svc", ["apps"])
    assert not ranger_standin.is_access_allowed("kafkadev", {"topic": "orders"}, "delete", "svc", ["apps"])


def test_the_engine_follows_a_service_def_change(hive: Standin) -> None:
    hive.store.create_policy(
        {
            "service": "hivedev",
            "name": "p",
            "resources": _table("db", "t"),
            "policyItems": [_item(["select"], users=["a"])],
            "denyPolicyItems": [_item(["select"], users=["a"])],
        }
    )
    where = {"database": "db", "table": "t", "column": "c"}
    assert not hive.is_access_allowed("hivedev", where, "select", "a")
    client = RangerClient(hive.url, hive.auth)
    sdef = client.get_service_def("hive")
    sdef["options"] = {"enableDenyAndExceptionsInPolicies": "false"}
    assert client.update_service_def("hive", sdef).version == sdef.version + 1
    assert hive.is_access_allowed("hivedev", where, "select", "a")  # deny items no longer count


def test_self_or_descendants_scope_lets_a_descendant_policy_apply() -> None:
    policy = {
        "id": 1,
        "name": "p",
        "resources": _table("db", "t"),
        "policyItems": [_item(["select"], users=["a"])],
    }
    engine = ServicePolicies(HIVE, [policy])
    on_db = {"database": "db"}
    assert not engine.evaluate(AccessRequest(on_db, "select", "a")).allowed
    assert engine.evaluate(AccessRequest(on_db, "select", "a", matching_scope="SELF_OR_DESCENDANTS")).allowed


def test_a_descendant_deny_counts_only_when_the_request_says_so() -> None:
    allow = {
        "id": 1,
        "name": "allow",
        "resources": _table("db", "*"),
        "policyItems": [_item(["select"], users=["a"])],
    }
    deny = {
        "id": 2,
        "name": "deny",
        "policyPriority": 1,
        "resources": _table("db", "t"),
        "denyPolicyItems": [_item(["select"], users=["a"])],
    }
    engine = ServicePolicies(HIVE, [allow, deny])
    assert engine.evaluate(AccessRequest({"database": "db"}, "", "a")).allowed
    strict = AccessRequest({"database": "db"}, "", "a", ignore_descendant_deny=False)
    assert not engine.evaluate(strict).allowed
