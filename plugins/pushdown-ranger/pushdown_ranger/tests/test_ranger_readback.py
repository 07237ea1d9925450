"""Ranger's JSON to facts and back, and the read-back after apply: pure."""

from __future__ import annotations

import copy
import json
import random
from importlib.resources import files
from typing import Any

import pytest
from pushdown_lab.ranger_judge import request
from pushdown_lab.ranger_standin.errors import RangerError
from pushdown_lab.ranger_standin.validators import check_policy

from pushdown_ranger.accepting import accepted, implying
from pushdown_ranger.answers import Written
from pushdown_ranger.compile.desired import RangerNaming
from pushdown_ranger.facts import PolicyFact
from pushdown_ranger.readback import (
    ADMIN,
    audit_finding,
    hand_modified,
    merged,
    new_policy,
    policy_fact,
    resource_key,
)

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


def test_plain_items_naming_our_roles_are_ours_and_a_modified_allow_item_is_marked() -> None:
    fact = policy_fact(hand_made(), OURS)
    assert fact == PolicyFact("hive", RES, frozenset({("pd_r", "select"), ("pd_r", "drop [conditions]")}))
    assert fact is not None and not any(hand_modified(a) for _, a in fact.allow if a == "select")


def test_merging_keeps_what_is_not_ours_and_replaces_what_is() -> None:
    out = merged(hand_made(), PolicyFact("hive", RES, frozenset({("pd_s", "create")})), OURS)
    items = out["policyItems"]
    assert items[0]["users"] == ["zed"] and items[0]["roles"] == []  # zed's item, without pd_r
    # the allow item with conditions named nobody but pd_r: gone with it
    assert items[1]["roles"] == ["pd_s"] and items[1]["accesses"] == [{"type": "create", "isAllowed": True}]
    assert len(items) == 2
    assert policy_fact(out, OURS) == PolicyFact("hive", RES, frozenset({("pd_s", "create")}))


def _modified(**modifiers: object) -> dict[str, object]:
    """A policy on ``RES`` with one allow and one deny item for ``pd_r`` and ``zed`` that
    carry ``modifiers`` (conditions, delegated admin), and a deny item for ``pd_r`` alone."""
    item = {"accesses": [{"type": "select", "isAllowed": True}], "users": ["zed"], "roles": ["pd_r"]}
    alone = {"accesses": [{"type": "drop", "isAllowed": True}], "roles": ["pd_r"], **modifiers}
    return {
        "service": "hive",
        "name": "edited",
        "resources": {"database": {"values": ["d"], "isRecursive": False}},
        "policyItems": [{**item, **modifiers}, {**alone, "accesses": [{"type": "alter"}]}],
        "denyPolicyItems": [{**item, **modifiers}, alone],
    }


@pytest.mark.parametrize(
    ("modifiers", "marked"),
    [
        ({"delegateAdmin": True}, "delegated admin"),
        ({"conditions": [{"type": "ip-range", "values": ["10.0.0.0/8"]}]}, "conditions"),
        ({"delegateAdmin": True, "conditions": [{"type": "ip-range"}]}, "conditions, delegated admin"),
    ],
    ids=["delegated-admin", "conditions", "both"],
)
def test_our_roles_leave_a_modified_allow_item_and_a_modified_deny_item_stays_whole(
    modifiers: dict[str, object], marked: str
) -> None:
    """An allow item somebody gave conditions or delegated admin still grants pushdown's role:
    read as marked pairs (never equal to what pushdown compiles, so the sync writes the
    policy), and merged without pushdown's roles however the model changed (only narrower).
    A deny item with them is never read as denying and keeps every principal (taking
    one out would widen); only the delegated admin of one naming nobody else is cleared
    (read as the marked allow pair ``[delegated admin]`` until then)."""
    policy = _modified(**modifiers)
    fact = policy_fact(policy, OURS)
    admin = {("pd_r", ADMIN)} if "delegated admin" in marked else set()
    assert fact == PolicyFact(
        "hive", RES, frozenset({("pd_r", f"select [{marked}]"), ("pd_r", f"alter [{marked}]"), *admin})
    )
    assert all(hand_modified(a) for _, a in fact.allow)
    for wanted in (None, PolicyFact("hive", RES, frozenset({("pd_r", "select")}))):
        out = merged(policy, wanted, OURS)
        allow, deny = out["policyItems"], out["denyPolicyItems"]
        assert [i for i in allow if i.get("roles") and _differs(i)] == []  # no modified item names pd_r
        assert {**policy["policyItems"][0], "roles": []} in allow  # zed keeps his (the item unchanged)
        assert policy["denyPolicyItems"][0] in deny  # zed's and pd_r's deny item: whole
        alone = policy["denyPolicyItems"][1]
        # pd_r's own deny item kept, without delegated admin
        assert ({**alone, "delegateAdmin": False} if alone.get("delegateAdmin") else alone) in deny
        assert policy_fact(out, OURS) == (
            wanted if "conditions" in modifiers else PolicyFact("hive", RES, *_with_deny(wanted))
        )


def _differs(item: dict[str, object]) -> bool:
    return bool(item.get("conditions") or item.get("delegateAdmin"))


def _with_deny(wanted: PolicyFact | None) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """``wanted``'s allow pairs, and the deny pair of pd_r's deny item once its delegated
    admin is cleared (then a plain deny item pushdown reads and manages as its own)."""
    return (wanted.allow if wanted else frozenset()), frozenset({("pd_r", "drop")})


@pytest.mark.parametrize(
    "accesses",
    [[], [{"type": "select", "isAllowed": False}]],
    ids=["no-access", "access-not-allowed"],
)
def test_delegated_admin_without_an_allowed_access_is_a_marked_pair(
    accesses: list[dict[str, object]],
) -> None:
    """An allow item for ``pd_r`` with delegated admin and no allowed access (Ranger accepts
    one without accesses when it has delegated admin) still lets ``pd_r``'s members edit the
    policy: read as the marked pair ``(pd_r, [delegated admin])``, so the policy is written,
    and the write drops the item (it names nobody else) and zed keeps his."""
    policy = {
        **hand_made(),
        "policyItems": [
            {"accesses": [{"type": "select"}], "users": ["zed"]},
            {"accesses": accesses, "roles": ["pd_r"], "delegateAdmin": True},
        ],
    }
    fact = policy_fact(policy, OURS)
    assert fact == PolicyFact("hive", RES, frozenset({("pd_r", ADMIN)}))
    assert all(hand_modified(a) for _, a in fact.allow)
    out = merged(policy, None, OURS)
    assert out["policyItems"] == [{"accesses": [{"type": "select"}], "users": ["zed"], "roles": []}]
    assert policy_fact(out, OURS) is None
    # a marked pair is never written as an item (it is no access type)
    assert merged(policy, fact, OURS)["policyItems"] == out["policyItems"]


def test_a_copy_of_our_deny_item_with_delegated_admin_is_marked_then_one_item() -> None:
    """A copy of pushdown's deny item given delegated admin: read as the marked allow pair
    ``[delegated admin]`` (the deny pair is read from pushdown's own item); merged with
    the same deny wanted it goes (pushdown's item denies the same), with another deny or
    none it stays, its delegated admin cleared (never wider)."""
    own = {"accesses": [{"type": "select", "isAllowed": True}], "roles": ["pd_r"], "delegateAdmin": False}
    policy = {**hand_made(), "policyItems": [], "denyPolicyItems": [own, {**own, "delegateAdmin": True}]}
    deny = frozenset({("pd_r", "select")})
    assert policy_fact(policy, OURS) == PolicyFact("hive", RES, frozenset({("pd_r", ADMIN)}), deny)
    out = merged(policy, PolicyFact("hive", RES, frozenset(), deny), OURS)
    assert [i["roles"] for i in out["denyPolicyItems"]] == [["pd_r"]]
    assert policy_fact(out, OURS) == PolicyFact("hive", RES, frozenset(), deny)
    other = frozenset({("pd_r", "drop")})
    for wanted in (None, PolicyFact("hive", RES, frozenset(), other)):
        out = merged(policy, wanted, OURS)
        assert {**own, "delegateAdmin": False} in out["denyPolicyItems"]
        assert policy_fact(out, OURS) == PolicyFact(
            "hive", RES, frozenset(), deny | (wanted.deny if wanted else set())
        )


@pytest.mark.parametrize(
    ("extra", "labelled", "said"),
    [
        ({}, False, True),
        ({}, True, False),  # pushdown's own, nothing else left: deleted, not written
        ({"allowExceptions": [{"users": ["bob"], "accesses": [{"type": "update"}]}]}, True, True),
        ({"denyPolicyItems": [{"users": ["zed"], "accesses": [{"type": "drop"}]}]}, False, False),
        ({"isAuditEnabled": True}, False, False),
    ],
    ids=["hand-made", "ours", "ours-with-exceptions", "another-item", "audited"],
)
def test_a_policy_left_with_no_item_is_audited(extra: dict[str, object], labelled: bool, said: bool) -> None:
    """Ranger refuses a policy with no allow or deny item and audit off (error 3008): when
    pushdown's items leave one, its audit is turned on (it allows nothing), and a finding
    says so before; a policy keeping another item keeps its audit off."""
    item = {"accesses": [{"type": "select", "isAllowed": True}], "roles": ["pd_r"]}
    policy = {
        **hand_made(),
        "isAuditEnabled": False,
        "policyItems": [item],
        "policyLabels": ["pushdown"] if labelled else [],
        **extra,
    }
    out = merged(policy, None, OURS)
    assert out["policyItems"] == []
    assert out["isAuditEnabled"] is (policy["isAuditEnabled"] or not out.get("denyPolicyItems"))
    assert (
        merged(policy, PolicyFact("hive", RES, frozenset({("pd_r", "drop")})), OURS)["isAuditEnabled"]
        is (policy["isAuditEnabled"])
    )
    found = audit_finding(policy, OURS, "pushdown")
    assert bool(found) is said and all("audit" in f and "by hand" in f for f in found)


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


def test_items_ranger_refuses_are_carried_with_the_same_decisions() -> None:
    """What Ranger's validator refuses is normalised without changing a decision: an access
    not allowed and an item then granting nothing go; a deny item keeps its allowed access; a
    user named null leaves an allow item (narrower) but stays in a deny item (said)."""
    policy = {
        "service": "hive",
        "name": "old",
        "resources": {"database": {"values": ["d"]}},
        "policyItems": [
            {
                "users": ["a", "null", " "],
                "accesses": [{"type": "select", "isAllowed": False}, {"type": "read"}],
            },
            {"users": ["b"], "accesses": [{"type": "select", "isAllowed": False}]},
            {"users": ["c"], "accesses": [], "delegateAdmin": True},
        ],
        "denyPolicyItems": [{"users": ["null"], "accesses": [{"type": "select"}]}],
        "allowExceptions": [{"users": [], "groups": [""], "accesses": [{"type": "select"}]}],
    }
    out, said = accepted(policy)
    assert out["policyItems"] == [
        {"users": ["a"], "accesses": [{"type": "read"}]},
        {"users": ["c"], "accesses": [], "delegateAdmin": True},
    ]
    assert out["denyPolicyItems"] == policy["denyPolicyItems"]
    assert out["allowExceptions"] == []
    assert any("3023" in s for s in said) and any("null is kept" in s for s in said)
    assert accepted(out)[1] == [s for s in said if "null is kept" in s]
    merged_out = merged(policy, None, OURS)
    assert [{k: v for k, v in i.items() if k != "roles"} for i in merged_out["policyItems"]] == out[
        "policyItems"
    ]


def _stored_policies(seed: int, count: int) -> list[dict[str, Any]]:
    """Hive policies (one per table) whose items mix what Ranger refuses today with what it
    accepts: accesses not allowed (``all`` too, which implies the others), items with no access
    (with and without delegated admin), blank and null names, items naming nobody, in allow,
    deny and exception lists; every fourth policy denies all else; the same users and groups
    throughout."""
    rng = random.Random(seed)
    users, groups = ["alice", "bob", "carol", "null", " ", "NULL"], ["g1", "g2", "", "Null"]

    def access() -> dict[str, Any]:
        got: dict[str, Any] = {"type": rng.choice(["select", "update", "drop", "all"])}
        if rng.random() < 0.6:
            got["isAllowed"] = rng.random() < 0.4
        return got

    def item() -> dict[str, Any]:
        return {
            "users": rng.sample(users, rng.randint(0, 2)),
            "groups": rng.sample(groups, rng.randint(0, 1)),
            "accesses": [access() for _ in range(rng.randint(0, 3))],
            "delegateAdmin": rng.random() < 0.2,
        }

    fields = ("policyItems", "denyPolicyItems", "allowExceptions", "denyExceptions")
    return [
        {
            "id": n + 1,
            "name": f"p{n}",
            "service": "hive",
            "isEnabled": True,
            "isAuditEnabled": True,
            "resources": {
                "database": {"values": ["d"]},
                "table": {"values": [f"t{n}"]},
                "column": {"values": ["*"]},
            },
            **{field: [item() for _ in range(rng.randint(0, 3))] for field in fields},
            "isDenyAllElse": n % 4 == 3,
        }
        for n in range(count)
    ]


WHO = (("alice", ["g1"]), ("bob", []), ("carol", ["g2"]), ("dave", ["g1", "g2"]), ("null", []))


def test_the_judge_finds_the_normalised_items_decide_the_same(ranger_judge: Any) -> None:
    """Ranger's own engine decides every access the same on the stored policies and on them as
    :func:`accepted` carries them knowing which access types imply others, for every user but
    one named null and every item but one whose first access of a type implying others is not
    allowed though a later one is (there it may only be narrower, said in the finding); not
    knowing which imply others, never wider. What is
    carried passes the stand-in's copy of Ranger's validator, unless the finding says it
    cannot (a null name kept where taking it out would widen, deny exceptions under isDenyAllElse)."""
    data = files("pushdown_lab.ranger_standin") / "data"
    sdef = json.loads((data / "ranger-servicedef-hive.json").read_text())
    implied = [
        ("hive", a["name"], frozenset(a["impliedGrants"]))
        for a in sdef["accessTypes"]
        if a.get("impliedGrants")
    ]
    stored = _stored_policies(seed=7, count=80)
    carried = [accepted(p, implying(implied, "hive")) for p in stored]
    for policy, (out, said) in zip(stored, carried, strict=True):
        kept_null = any("kept" in s for s in said)
        try:
            check_policy(copy.deepcopy(out), sdef)
        except RangerError as exc:
            assert kept_null or not (out["policyItems"] or out["denyPolicyItems"]), (policy, exc.message)
        else:
            assert not kept_null
    engines = {
        "before": stored,
        "exact": [out for out, _ in carried],
        "unknown": [accepted(p)[0] for p in stored],
    }
    for name, policies in engines.items():
        ranger_judge.load(name, {"serviceName": "hive", "serviceDef": sdef, "policies": policies})
    asks = [
        request({"database": "d", "table": f"t{n}", "column": "c"}, access, user, groups)
        for n in range(len(stored))
        for access in ("select", "update", "drop", "alter", "_any")
        for user, groups in WHO
    ]
    answers = {name: ranger_judge.decide(name, asks) for name in engines}
    before = answers["before"]
    for name in ("exact", "unknown"):
        changed = [
            (ask["user"], ask["accessType"], ask["resource"]["elements"]["table"], b.allowed, a.allowed)
            for ask, b, a in zip(asks, before, answers[name], strict=True)
            if (b.allowed, b.determined) != (a.allowed, a.determined)
        ]
        assert [c for c in changed if c[4]] == [], name  # never wider
        if name == "exact":  # only a null name or a type whose first access is not allowed narrows
            narrowed = {
                f"t{n}" for n, (_, said) in enumerate(carried) if any("first of its" in x for x in said)
            }
            assert [c for c in changed if c[0] != "null" and c[2] not in narrowed] == []
    assert sum(b.allowed for b in before) > 0 and sum(not b.allowed for b in before) > 0
    for name in engines:
        ranger_judge.drop(name)
