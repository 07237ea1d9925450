"""Ranger reuses one resource matcher for equal policy resources of every policy type.

While Ranger 2.9 builds an engine it keeps each resource matcher by resource name and policy
resource (values, isExcludes, isRecursive) in the plugin context and hands the first one built
to every later policy with an equal resource, whatever its type. Hive's data-masking and
row-filter definitions turn wildcards off, so when a masking policy on ``column = *`` comes
before an access policy on ``column = *`` in the download (Admin sends them in one list, by
id), the access policy's ``*`` is a literal there: it no longer reaches a table or its
columns. The stand-in decides the same; each case here is asked of Ranger's own engine
too (:func:`pushdown_lab.ranger_ground_truth.judged` fails on any difference).
"""

from __future__ import annotations

from typing import Any

import pytest

from pushdown_lab.ranger_ground_truth import download, judged
from pushdown_lab.ranger_standin import Standin


def _resources(db: str, table: str, column: str | None = "*") -> dict[str, Any]:
    found = {"database": {"values": [db]}, "table": {"values": [table]}}
    if column is not None:
        found["column"] = {"values": [column]}
    return found


def _masking(standin: Standin, db: str = "s2", table: str = "b", **extra: Any) -> None:
    item = {"users": ["u2"], "accesses": [{"type": "select"}], "dataMaskInfo": {"dataMaskType": "MASK_NONE"}}
    standin.store.create_policy(
        {
            "service": "hive",
            "name": f"masking {db}.{table}",
            "policyType": 1,
            "resources": _resources(db, table),
            "dataMaskPolicyItems": [item],
            **extra,
        }
    )


def _row_filter(standin: Standin, db: str, table: str) -> None:
    item = {"users": ["u2"], "accesses": [{"type": "select"}], "rowFilterInfo": {"filterExpr": "1=1"}}
    standin.store.create_policy(
        {
            "service": "hive",
            "name": f"row filter {db}.{table}",
            "policyType": 2,
            "resources": _resources(db, table, None),
            "rowFilterPolicyItems": [item],
        }
    )


def _access(
    standin: Standin, name: str, resources: dict[str, Any], *, deny: bool = False, **extra: Any
) -> None:
    item = {"users": ["u1"], "accesses": [{"type": "select", "isAllowed": True}]}
    standin.store.create_policy(
        {
            "service": "hive",
            "name": name,
            "resources": resources,
            "policyItems": [] if deny else [item],
            "denyPolicyItems": [item] if deny else [],
            **extra,
        }
    )


ASKS = [
    ("hive", {"database": "s1", "table": "a"}, "select", "u1", ["g"]),
    ("hive", {"database": "s1", "table": "a", "column": "c1"}, "select", "u1", ["g"]),
    ("hive", {"database": "s1", "table": "a", "column": "*"}, "select", "u1", ["g"]),
]


@pytest.fixture
def hive(ranger_standin: Standin, ranger_judge: Any) -> Standin:
    ranger_standin.create_service("hive", "hive")
    return ranger_standin


def _decided(standin: Standin) -> list[bool]:
    """Ranger's answers to :data:`ASKS`, the stand-in's held equal to them."""
    mine = [standin.is_access_allowed(*ask) for ask in ASKS]
    assert [a.allowed for a in judged(standin, ASKS)] == mine
    return mine


def test_a_masking_policy_before_the_access_policy_takes_its_wildcard(hive: Standin) -> None:
    _masking(hive)  # on s2.b: another table, only its column resource is equal
    _access(hive, "every table of s1", _resources("s1", "?*"))
    ids = [p["id"] for p in download(hive, "hive")[0]["policies"]]
    assert ids == sorted(ids) and len(ids) == 2  # one list, the masking policy first
    # the access policy's "*" is the masking one's, a literal: no table, no column of s1
    assert _decided(hive) == [False, False, False]


def test_the_same_policies_the_other_way_round_allow(hive: Standin) -> None:
    _access(hive, "every table of s1", _resources("s1", "?*"))
    _masking(hive)
    assert _decided(hive) == [True, True, True]


def test_a_disabled_masking_policy_builds_no_matcher(hive: Standin) -> None:
    _masking(hive, isEnabled=False)
    _access(hive, "every table of s1", _resources("s1", "?*"))
    assert _decided(hive) == [True, True, True]


def test_a_row_filter_policy_turns_a_table_wildcard_literal(hive: Standin) -> None:
    _row_filter(hive, "s9", "?*")
    _access(hive, "every table of s1", _resources("s1", "?*"))
    assert _decided(hive) == [False, False, False]


def test_a_deny_whose_wildcard_was_taken_lets_another_allow_through(hive: Standin) -> None:
    """Wider than the policies read: the deny on every column of s1.a no longer matches c1,
    so the allow naming c1 stands (without the masking policy the deny wins)."""
    _access(hive, "c1 of s1.a", _resources("s1", "a", "c1"))
    _access(hive, "deny s1.a", _resources("s1", "a"), deny=True)
    assert _decided(hive)[1] is False
    policies = hive.store.list_policies({"serviceName": "hive"})
    for policy in policies:
        hive.store.delete_policy(policy["id"])
    _masking(hive)
    _access(hive, "c1 of s1.a", _resources("s1", "a", "c1"))
    _access(hive, "deny s1.a", _resources("s1", "a"), deny=True)
    assert _decided(hive)[1] is True


def test_an_unzoned_masking_policy_reaches_a_zones_access_policy(hive: Standin) -> None:
    """One engine builds the unzoned policies before each zone's: the matcher is shared."""
    hive.store.create_zone(
        {"name": "z1", "services": {"hive": {"resources": [{"database": ["s1"], "table": ["*"]}]}}}
    )
    _masking(hive)
    _access(hive, "every table of s1", _resources("s1", "?*"), zoneName="z1")
    assert hive.zone_of("hive", {"database": "s1", "table": "a"}) == "z1"
    assert _decided(hive) == [False, False, False]


def test_a_zones_resources_build_their_matchers_first(hive: Standin) -> None:
    """A zone's resource equal to the masking policy's is built first, with the access
    definition (wildcards on): the masking policy and the access policy after it share it."""
    spec = {"hive": {"resources": [{"database": ["s9"], "table": ["b"], "column": ["*"]}]}}
    hive.store.create_zone({"name": "z9", "services": spec})
    _masking(hive)
    _access(hive, "every table of s1", _resources("s1", "?*"))
    assert _decided(hive) == [True, True, True]


def test_the_next_engine_follows_the_masking_policy_going(hive: Standin) -> None:
    """The stand-in keeps an unchanged policy's evaluator from one engine to the next; it
    builds it again when the matcher it took goes (the masking policy disabled, deleted)."""
    _masking(hive)
    _access(hive, "every table of s1", _resources("s1", "?*"))
    assert _decided(hive) == [False, False, False]
    masking = hive.store.list_policies({"policyName": "masking s2.b"})[0]
    hive.store.update_policy(masking["id"], {**masking, "isEnabled": False})
    assert _decided(hive) == [True, True, True]
    hive.store.update_policy(masking["id"], {**masking, "isEnabled": True})
    assert _decided(hive) == [False, False, False]
    hive.store.delete_policy(masking["id"])
    assert _decided(hive) == [True, True, True]
