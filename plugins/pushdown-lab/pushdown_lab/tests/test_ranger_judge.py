"""The Ranger judge (Ranger's own engine in a Java process) and the lab's Maven fetch."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pushdown_lab.maven import pom
from pushdown_lab.ranger_ground_truth import Disagreement, judged
from pushdown_lab.ranger_judge import JudgeUnavailable, request
from pushdown_lab.ranger_standin import Standin

HDFS = Path(__file__).parent / "vectors" / "test_policyengine_hdfs.json"


def _policies(*items: dict[str, Any]) -> dict[str, Any]:
    sdef = json.loads(HDFS.read_text(encoding="utf-8"))["serviceDef"]
    policy = {"id": 1, "name": "p", "isEnabled": True, "isAuditEnabled": True}
    policy["resources"] = {"path": {"values": ["/data"], "isRecursive": True}}
    return {"serviceName": "hdfsdev", "serviceDef": sdef, "policies": [{**policy, **i} for i in items]}


def test_the_judge_decides_allow_deny_and_roles(ranger_judge: Any) -> None:
    allow = [{"accesses": [{"type": "read", "isAllowed": True}], "roles": ["readers"]}]
    deny = [{"accesses": [{"type": "read", "isAllowed": True}], "users": ["mallory"]}]
    roles = {"rangerRoles": [{"name": "readers", "users": [{"name": "alice"}, {"name": "mallory"}]}]}
    ranger_judge.load("t1", _policies({"policyItems": allow, "denyPolicyItems": deny}), roles)
    asks = [request({"path": "/data/x"}, "read", u) for u in ("alice", "mallory", "bob")]
    asks.append(request({"path": "/data/x"}, "write", "alice"))
    answers = ranger_judge.decide("t1", asks)
    assert [a.allowed for a in answers] == [True, False, False, False]
    assert [a.policy_id for a in answers[:2]] == [1, 1]
    ranger_judge.drop("t1")


def test_the_judge_names_what_failed(ranger_judge: Any) -> None:
    with pytest.raises(JudgeUnavailable, match="no engine named nowhere"):
        ranger_judge.decide("nowhere", [request({"path": "/"}, "read", "alice")])
    assert ranger_judge.decide("nowhere", []) == []  # nothing asked, nothing sent


def test_the_stand_in_is_held_equal_to_the_judge(ranger_standin: Standin, monkeypatch: Any) -> None:
    ranger_standin.create_service("hdfs", "hdfs")
    ranger_standin.store.create_policy(
        {
            "service": "hdfs",
            "name": "p",
            "resources": {"path": {"values": ["/data"], "isRecursive": True}},
            "policyItems": [{"accesses": [{"type": "read", "isAllowed": True}], "users": ["alice"]}],
        },
        "admin",
    )
    asks = [("hdfs", {"path": "/data/x"}, "read", u, []) for u in ("alice", "bob")]
    assert [a.allowed for a in judged(ranger_standin, asks)] == [True, False]
    # a stand-in that answers otherwise is caught, naming the question
    wrong = ranger_standin.evaluate

    def flipped(*args: Any, **kw: Any) -> Any:
        got = wrong(*args, **kw)
        return dataclasses.replace(got, allowed=not got.allowed)

    monkeypatch.setattr(ranger_standin, "evaluate", flipped)
    with pytest.raises(Disagreement, match=r"on 2 of 2(?s:.*)alice \[\] read hdfs"):
        judged(ranger_standin, asks)


def test_the_pom_pins_versions_and_exclusions() -> None:
    text = pom(["g:a:1.0 -x:y", "h:b:2"])
    assert "<groupId>g</groupId><artifactId>a</artifactId><version>1.0</version>" in text
    assert "<exclusion><groupId>x</groupId><artifactId>y</artifactId></exclusion>" in text
    assert text.count("<dependency>") == 2 and text.count("<exclusions>") == 1
