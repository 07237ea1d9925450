"""The stand-in refuses, over HTTP, each policy Ranger 2.9's RangerPolicyValidator refuses, with
Ranger's error code; and accepts (normalised as Ranger stores it) what Ranger accepts."""

from __future__ import annotations

import copy
import json
from importlib.resources import files
from typing import Any

import pytest
import requests

from pushdown_lab.ranger_standin import Standin

pytestmark = pytest.mark.ranger

SELECT = [{"type": "select", "isAllowed": True}]


def _policy(**extra: Any) -> dict[str, Any]:
    return {
        "service": "hivedev",
        "name": "p",
        "resources": {
            "database": {"values": ["db1"]},
            "table": {"values": ["t1"]},
            "column": {"values": ["*"]},
        },
        "policyItems": [{"accesses": SELECT, "users": ["alice"]}],
        **extra,
    }


def _item(**fields: Any) -> dict[str, Any]:
    return {"accesses": SELECT, "users": ["alice"], **fields}


@pytest.fixture
def api(ranger_standin: Standin) -> tuple[requests.Session, str]:
    ranger_standin.create_service("hivedev", "hive")
    ranger_standin.create_service("hdfsdev", "hdfs")
    session = requests.Session()
    session.auth = ranger_standin.auth
    return session, f"{ranger_standin.url}/service/public/v2/api"


def _code(answer: requests.Response) -> str:
    assert answer.status_code == 400, answer.text
    text = str(answer.json()["msgDesc"])
    assert text.startswith("(0) Validation failure: error code[")
    return text.split("error code[", 1)[1].split("]", 1)[0]


REFUSED = {
    "access-not-allowed": (
        _policy(policyItems=[_item(accesses=[{"type": "select", "isAllowed": False}])]),
        "3023",
    ),
    "deny-access-not-allowed": (
        _policy(denyPolicyItems=[_item(accesses=[{"type": "select", "isAllowed": False}])]),
        "3023",
    ),
    "exception-access-not-allowed": (
        _policy(allowExceptions=[_item(accesses=[{"type": "select", "isAllowed": False}])]),
        "3023",
    ),
    "no-access-no-admin": (_policy(policyItems=[_item(accesses=[])]), "3002"),
    "no-access-in-deny-exception": (
        _policy(denyExceptions=[_item(accesses=[], delegateAdmin=False)]),
        "3002",
    ),
    "access-without-type": (
        _policy(policyItems=[_item(accesses=[{"type": " ", "isAllowed": True}])]),
        "3002",
    ),
    "null-access": (_policy(policyItems=[_item(accesses=[None])]), "3021"),
    "null-item": (_policy(denyPolicyItems=[None]), "3019"),
    "nobody": (_policy(policyItems=[{"accesses": SELECT, "users": [], "groups": [], "roles": []}]), "3020"),
    "user-named-null": (_policy(policyItems=[_item(users=["alice", "null"])]), "3053"),
    "blank-user": (_policy(policyItems=[_item(users=["  "])]), "3053"),
    "group-named-NULL": (_policy(policyItems=[_item(users=[], groups=["NULL"])]), "3054"),
    "role-named-empty": (_policy(policyItems=[_item(users=[], roles=[""])]), "3055"),
    "deny-all-else-with-deny": (_policy(isDenyAllElse=True, denyPolicyItems=[_item()]), "3049"),
    "deny-all-else-with-deny-exception": (_policy(isDenyAllElse=True, denyExceptions=[_item()]), "3049"),
    "priority": (_policy(policyPriority=2), "3030"),
    "service-type": (_policy(serviceType="hdfs"), "4009"),
    "masking-item-without-type": (
        _policy(policyType=1, dataMaskPolicyItems=[_item(dataMaskInfo={"dataMaskType": ""})]),
        "3019",
    ),
    "row-filter-access-type": (
        _policy(policyType=2, rowFilterPolicyItems=[_item(accesses=[{"type": "update"}])]),
        "3022",
    ),
    "schedule-empty": (_policy(validitySchedules=[{}]), "0"),
    "schedule-bad-date": (_policy(validitySchedules=[{"startTime": "2026-01-01"}]), "0"),
    "schedule-ends-first": (
        _policy(validitySchedules=[{"startTime": "2026/02/01 00:00:00", "endTime": "2026/01/01 00:00:00"}]),
        "0",
    ),
    "blank-resource-values": (
        _policy(
            resources={"database": {"values": [" "]}, "table": {"values": ["t"]}, "column": {"values": ["*"]}}
        ),
        "3026",
    ),
    "no-resources": (_policy(resources={}), "3012"),
    "hdfs-excludes": (
        {
            **_policy(service="hdfsdev", resources={"path": {"values": ["/a"], "isExcludes": True}}),
            "policyItems": [],
        },
        "3015",
    ),
    "hdfs-single-hierarchy": (
        _policy(service="hdfsdev", policyItems=[_item(accesses=[{"type": "read"}])]),
        "3024",
    ),
    "zone-unknown": (_policy(zoneName="nowhere"), "3033"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_standin_refuses_what_rangers_policy_validator_refuses(
    api: tuple[requests.Session, str], case: str
) -> None:
    session, url = api
    policy, code = REFUSED[case]
    assert _code(session.post(f"{url}/policy", json=policy)) == code
    # the same policy, made acceptable, is created: the refusal was for that reason alone
    assert session.post(f"{url}/policy", json=_policy(name="ok")).status_code == 200


def test_what_ranger_accepts_is_stored_as_ranger_stores_it(api: tuple[requests.Session, str]) -> None:
    """Delegated admin without accesses is accepted; names are trimmed and repeats dropped, a
    repeated access type dropped, blank resource values dropped; an isAllowed left out is allowed."""
    session, url = api
    policy = _policy(
        policyItems=[
            _item(accesses=[], delegateAdmin=True),
            _item(users=[" bob", "bob"], accesses=[{"type": "select"}, {"type": "select"}]),
        ],
        resources={
            "database": {"values": ["db1", " "]},
            "table": {"values": ["t"]},
            "column": {"values": ["*"]},
        },
        validitySchedules=[{"startTime": "2026/01/01 00:00:00", "timeZone": "UTC"}],
    )
    answer = session.post(f"{url}/policy", json=policy)
    assert answer.status_code == 200, answer.text
    stored = answer.json()
    assert stored["policyItems"][1]["users"] == ["bob"]
    assert stored["policyItems"][1]["accesses"] == [{"type": "select"}]
    assert stored["resources"]["database"]["values"] == ["db1"]


def test_an_update_may_not_move_retype_or_rezone_a_policy(
    api: tuple[requests.Session, str], ranger_standin: Standin
) -> None:
    session, url = api
    created = session.post(f"{url}/policy", json=_policy()).json()
    pid = created["id"]
    moved = {**created, "service": "hdfsdev", "serviceType": None, "resources": {"path": {"values": ["/a"]}}}
    assert _code(session.put(f"{url}/policy/{pid}", json=moved)) == "3027"
    masked = {**created, "policyType": 1, "dataMaskPolicyItems": []}
    assert _code(session.put(f"{url}/policy/{pid}", json=masked)) == "3028"
    zone = {"name": "z", "services": {"hivedev": {"resources": [{"database": ["db9"]}]}}}
    assert session.post(f"{url}/zones", json=zone).status_code == 200
    assert _code(session.put(f"{url}/policy/{pid}", json={**created, "zoneName": "z"})) == "3032"
    outside = {"name": "y", "services": {"hdfsdev": {"resources": [{"path": ["/y"]}]}}}
    assert session.post(f"{url}/zones", json=outside).status_code == 200
    assert _code(session.post(f"{url}/policy", json=_policy(name="q", zoneName="y"))) == "3048"
    assert session.put(f"{url}/policy/{pid}", json={**created, "description": "kept"}).status_code == 200


def test_a_policy_stored_before_is_kept_and_evaluated(ranger_standin: Standin) -> None:
    """A policy an older Ranger stored (``checked=False``, never through the REST API) keeps
    the items today's validator refuses; they decide as Ranger's engine decides them."""
    ranger_standin.create_service("hivedev", "hive")
    store = ranger_standin.store
    created = store.create_policy(_policy())
    old = [
        _item(users=["bob"], accesses=[{"type": "select", "isAllowed": False}]),
        _item(users=["carol"], accesses=[]),
    ]
    store.update_policy(
        created["id"], {**created, "policyItems": [*created["policyItems"], *old]}, checked=False
    )
    with pytest.raises(Exception, match=r"error code\[3023\]"):
        store.update_policy(created["id"], store.policy(created["id"]))
    where = {"database": "db1", "table": "t1", "column": "c"}
    assert ranger_standin.is_access_allowed("hivedev", where, "select", user="alice")
    assert not ranger_standin.is_access_allowed("hivedev", where, "select", user="bob")
    assert not ranger_standin.is_access_allowed("hivedev", where, "select", user="carol")


def _judge_service(policy: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    name = str(policy.get("service"))
    kind = "hdfs" if name == "hdfsdev" else "hive"
    sdef = json.loads(
        (files("pushdown_lab.ranger_standin") / "data" / f"ranger-servicedef-{kind}.json").read_text()
    )
    sdef.setdefault("id", 1)
    return sdef, {"id": 1, "name": name, "type": kind}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rangers_own_validator_refuses_each_with_the_same_code(ranger_judge: Any, case: str) -> None:
    """Ranger 2.9's RangerPolicyValidator, run by the judge over an in-memory store, refuses
    each policy the stand-in refuses, and names the stand-in's error code among its reasons;
    the acceptable policy passes it."""
    policy, code = REFUSED[case]
    sdef, service = _judge_service(policy)
    message = ranger_judge.validate(copy.deepcopy(policy), sdef, service)
    assert message is not None and f"error code[{code}]" in message, message
    assert ranger_judge.validate(_policy(name="ok"), *_judge_service(_policy())) is None


def test_rangers_own_validator_refuses_the_same_updates(ranger_judge: Any) -> None:
    """The update rules (3027, 3028, 3032) and a zone not naming the service (3048), judged."""
    stored = {**_policy(), "id": 5, "isEnabled": True}
    sdef, service = _judge_service(stored)
    zones = [{"id": 7, "name": "z", "services": {"other": {"resources": []}}, "tagServices": []}]

    def judged(policy: dict[str, Any], update: bool = True) -> str:
        message = ranger_judge.validate(policy, sdef, service, policies=[stored], zones=zones, update=update)
        return str(message)

    assert "error code[3027]" in judged({**stored, "service": "elsewhere"})
    assert "error code[3028]" in judged({**stored, "policyType": 1, "dataMaskPolicyItems": []})
    assert "error code[3032]" in judged({**stored, "zoneName": "z"})
    assert "error code[3048]" in judged({**stored, "id": None, "name": "q", "zoneName": "z"}, update=False)
    assert (
        ranger_judge.validate(
            {**stored, "description": "kept"}, sdef, service, policies=[stored], update=True
        )
        is None
    )
