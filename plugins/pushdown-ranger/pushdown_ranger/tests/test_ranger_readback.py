"""Ranger's JSON to facts and back, and the read-back after apply: pure."""

from __future__ import annotations

from pushdown_ranger.answers import Written
from pushdown_ranger.compile.desired import RangerNaming
from pushdown_ranger.facts import PolicyFact
from pushdown_ranger.readback import merged, new_policy, policy_fact, resource_key

OURS = RangerNaming().ours
RES = (("database", ("d",), False),)


def hand_made() -> dict[str, object]:
    return {
        "service": "hive",
        "name": "by hand",
        "resources": {"database": {"values": ["d"], "isRecursive": False}},
        "policyItems": [
            {"accesses": [{"type": "select", "isAllowed": True}], "users": ["zed"], "roles": ["pd_r"]},
            {
                "accesses": [{"type": "drop", "isAllowed": True}],
                "roles": ["pd_r"],
                "conditions": [{"type": "ip"}],
            },
        ],
    }


def test_only_plain_items_naming_our_roles_are_ours() -> None:
    fact = policy_fact(hand_made(), OURS)
    assert fact == PolicyFact("hive", RES, frozenset({("pd_r", "select")}))


def test_merging_keeps_what_is_not_ours_and_replaces_what_is() -> None:
    out = merged(hand_made(), PolicyFact("hive", RES, frozenset({("pd_s", "create")})), OURS)
    items = out["policyItems"]
    assert items[0]["users"] == ["zed"] and items[0]["roles"] == []  # zed's item, without pd_r
    assert items[1]["conditions"]  # an item with conditions is never touched
    assert items[2]["roles"] == ["pd_s"] and items[2]["accesses"] == [{"type": "create", "isAllowed": True}]
    assert policy_fact(out, OURS) == PolicyFact("hive", RES, frozenset({("pd_s", "create")}))


def test_an_excluded_resource_never_equals_one_pushdown_writes() -> None:
    policy = {"resources": {"database": {"values": ["d"], "isExcludes": True}}}
    assert resource_key(policy) != RES


def test_a_new_policy_reads_back_as_its_fact() -> None:
    fact = PolicyFact(
        "hive", RES, frozenset({("pd_r", "select"), ("pd_q", "select")}), frozenset({("pdu_a", "drop")})
    )
    policy = new_policy(fact, "pushdown")
    assert policy["policyLabels"] == ["pushdown"] and len(policy["policyItems"]) == 1  # roles share an item
    assert policy_fact(policy, OURS) == fact


def test_the_expected_versions_count_our_own_writes() -> None:
    written = Written()
    written.policy(("hive", RES), {"id": 1})
    written.policy(("hive", RES), None)
    written.role("pd_r", {"id": 2})
    before = (("hdfs", 3, None), ("hive", 7, None), ("", None, 11))
    assert written.expected(before) == (("hdfs", 3, None), ("hive", 9, None), ("", None, 12))
    assert written.patched_policies({("hive", RES): {"id": 1}}) == {}
