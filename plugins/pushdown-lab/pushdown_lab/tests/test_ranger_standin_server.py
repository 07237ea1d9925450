"""The stand-in's REST API through the apache-ranger client: answers, refusals, paging, faults."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests
from apache_ranger.client.ranger_client import RangerClient
from apache_ranger.exceptions import RangerServiceException

from pushdown_lab.ranger_standin import Standin
from pushdown_lab.ranger_standin.errors import RangerError

pytestmark = pytest.mark.ranger


def _policy(name: str, table: str, **extra: Any) -> dict[str, Any]:
    return {
        "service": "hivedev",
        "name": name,
        "resources": {
            "database": {"values": ["db1"]},
            "table": {"values": [table]},
            "column": {"values": ["*"]},
        },
        "policyItems": [{"accesses": [{"type": "select", "isAllowed": True}], "users": ["alice"]}],
        **extra,
    }


@pytest.fixture
def client(ranger_standin: Standin) -> RangerClient:
    ranger_standin.create_service("hivedev", "hive")
    return RangerClient(ranger_standin.url, ranger_standin.auth)


def _refusal(call: Any, *args: Any) -> RangerServiceException:
    with pytest.raises(RangerServiceException) as caught:
        call(*args)
    return caught.value


def test_service_defs_and_services(ranger_standin: Standin) -> None:
    client = RangerClient(ranger_standin.url, ranger_standin.auth)
    assert {client.get_service_def(n).name for n in ("hdfs", "hive", "kafka")} == {"hdfs", "hive", "kafka"}
    created = client.create_service({"name": "kafkadev", "type": "kafka"})
    assert client.get_service("kafkadev").id == created.id
    assert [s.name for s in client.find_services({"serviceType": "kafka"})] == ["kafkadev"]
    refused = _refusal(client.create_service, {"name": "kafkadev", "type": "kafka"})
    assert refused.statusCode == 400 and "error code[1008]" in refused.msgDesc
    refused = _refusal(client.create_service, {"name": "x", "type": "nosuchdef"})
    assert "error code[1010]" in refused.msgDesc
    client.delete_service("kafkadev")
    assert client.get_service("kafkadev") is None  # the client turns 404 into None


def test_a_service_is_answered_as_rangers_with_no_role_version(ranger_standin: Standin) -> None:
    """Ranger's ``RangerService`` carries the policy version, not the role version (asked of
    ``roles/download``): the stand-in's answers hold what Ranger's do."""
    client = RangerClient(ranger_standin.url, ranger_standin.auth)
    client.create_service({"name": "hivedev", "type": "hive"})
    api = f"{ranger_standin.url}/service/public/v2/api/service"
    for answer in (
        requests.get(api, auth=ranger_standin.auth, timeout=5).json()[0],
        requests.get(f"{api}/name/hivedev", auth=ranger_standin.auth, timeout=5).json(),
    ):
        assert answer["name"] == "hivedev" and isinstance(answer["policyVersion"], int)
        assert "roleVersion" not in answer, answer
    download = f"{ranger_standin.url}/service/roles/secure/download/hivedev"
    assert isinstance(requests.get(download, auth=ranger_standin.auth, timeout=5).json()["roleVersion"], int)


def test_a_service_definition_updated_moves_its_services_policy_versions(ranger_standin: Standin) -> None:
    """As Ranger's ``ServiceDBStore.updateServicesForServiceDefUpdate``: every service of an
    updated definition gets a new policy version (its plugins download the definition with
    the policies); the services of other definitions do not."""
    client = RangerClient(ranger_standin.url, ranger_standin.auth)
    for name, kind in (("hivedev", "hive"), ("hiveprod", "hive"), ("kafkadev", "kafka")):
        client.create_service({"name": name, "type": kind})

    def versions() -> dict[str, int]:
        return {s.name: s.policyVersion for s in client.find_services()}

    before = versions()
    sdef = client.get_service_def("hive")
    sdef.options = {**(sdef.options or {}), "enableDenyAndExceptionsInPolicies": "false"}
    client.update_service_def("hive", sdef)
    after = versions()
    assert after == {**before, "hivedev": before["hivedev"] + 1, "hiveprod": before["hiveprod"] + 1}
    ranger_standin.store.update_service_def("kafka", ranger_standin.store.service_def("kafka"))
    assert versions() == {**after, "kafkadev": after["kafkadev"] + 1}


def test_policy_create_get_update_delete(client: RangerClient) -> None:
    created = client.create_policy(_policy("p1", "t1"))
    assert created.id and created.version == 1 and created.service == "hivedev"
    assert client.get_policy("hivedev", "p1").id == created.id
    created.policyItems[0]["users"] = ["alice", "bob"]
    updated = client.update_policy_by_id(created.id, created)
    assert updated.version == 2 and updated.policyItems[0]["users"] == ["alice", "bob"]
    client.delete_policy_by_id(created.id)
    assert client.get_policy_by_id(created.id) is None


def test_policy_refusals_are_rangers(client: RangerClient) -> None:
    client.create_policy(_policy("p1", "t1"))
    refused = _refusal(client.create_policy, _policy("p1", "t2"))
    assert refused.statusCode == 400 and "error code[3006]" in refused.msgDesc
    refused = _refusal(client.create_policy, _policy("p2", "t1"))
    assert "error code[3010]" in refused.msgDesc
    assert "Another policy already exists for matching resource: policy-name=[p1]" in refused.msgDesc
    refused = _refusal(client.create_policy, {**_policy("p3", "t3"), "service": "nosuch"})
    assert "error code[3007]" in refused.msgDesc
    bad_resources = {
        **_policy("p4", "t4"),
        "resources": {"database": {"values": ["d"]}, "topic": {"values": ["x"]}},
    }
    assert "error code[3011]" in _refusal(client.create_policy, bad_resources).msgDesc
    bad_access = _policy("p5", "t5", policyItems=[{"accesses": [{"type": "fly"}], "users": ["a"]}])
    assert "error code[3022]" in _refusal(client.create_policy, bad_access).msgDesc
    second = client.create_policy(_policy("p6", "t6"))
    second.resources["table"]["values"] = ["t1"]
    assert "error code[3010]" in _refusal(client.update_policy_by_id, second.id, second).msgDesc
    # no allow or deny item and audit off (exceptions are not counted): refused; with audit, kept
    exception = [{"accesses": [{"type": "select"}], "users": ["bob"]}]
    silent = _policy("p7", "t7", policyItems=[], isAuditEnabled=False, allowExceptions=exception)
    assert "error code[3008]" in _refusal(client.create_policy, silent).msgDesc
    assert client.create_policy({**silent, "isAuditEnabled": True}).id
    assert len(client.find_policies({"serviceName": "hivedev"})) == 3


def test_roles_are_found_by_name_through_renames_and_deletes(ranger_standin: Standin) -> None:
    """The stand-in looks a role up by its name in an index (Ranger, in its database), kept by
    every create, rename and delete: the same answers as a look at every role."""
    store = ranger_standin.store
    ids = [store.create_role({"name": f"r{i}"})["id"] for i in range(6)]
    store.update_role(ids[1], {**store.role(ids[1]), "name": "renamed"})
    store.delete_role(ids[2])
    store.create_role({"name": "r1"})  # the old name is free again
    with pytest.raises(RangerError):
        store.create_role({"name": "renamed"})  # 4005: the new one is taken
    with pytest.raises(RangerError):
        store.role_by_name("r2")
    assert store.role_by_name("renamed")["id"] == ids[1]
    policy = {
        **_policy("p", "t"),
        "policyItems": [{"accesses": [{"type": "select"}], "roles": ["r2"]}],
    }
    ranger_standin.create_service("hivedev", "hive")
    with pytest.raises(RangerError, match="r2"):
        store.create_policy(policy)  # the deleted role is unknown to a policy too
    assert store._role_ids == {r["name"]: rid for rid, r in store.roles.items()}


def test_roles_grant_revoke_and_in_use(client: RangerClient) -> None:
    role = client.create_role("hivedev", {"name": "analysts", "users": [{"name": "bob"}]})
    assert client.get_role("analysts", "admin", "hivedev").id == role.id
    assert "error code[4005]" in _refusal(client.create_role, "hivedev", {"name": "analysts"}).msgDesc
    with pytest.raises(TypeError):  # the client's known trap: it cannot read Ranger's JSON reply
        client.grant_role("hivedev", {"targetRoles": ["analysts"], "users": ["carol"], "groups": ["g"]})
    members = client.get_role("analysts", "admin", "hivedev")
    assert [u["name"] for u in members.users] == ["bob", "carol"] and members.groups[0]["name"] == "g"
    with pytest.raises(TypeError):
        client.revoke_role("hivedev", {"targetRoles": ["analysts"], "users": ["bob"]})
    assert [u["name"] for u in client.get_role_by_id(role.id).users] == ["carol"]
    client.create_policy(
        _policy("p1", "t1", policyItems=[{"accesses": [{"type": "select"}], "roles": ["analysts"]}])
    )
    refused = _refusal(client.delete_role, "analysts", "admin", "hivedev")
    assert refused.msgDesc == "Role 'analysts' can not be deleted as it is referenced in one or more policies"
    client.delete_policy("hivedev", "p1")
    client.delete_role("analysts", "admin", "hivedev")
    assert client.find_roles() == []
    gone = _refusal(client.get_role_by_id, role.id)  # Ranger answers 400 here, not 404
    assert gone.statusCode == 400 and gone.msgDesc == "Data Not Found for given Id"
    assert _refusal(client.get_role, "analysts", "admin", "hivedev").msgDesc == (
        "Role with name: analysts does not exist."
    )


def test_paging_and_default_page_size(client: RangerClient, ranger_standin: Standin) -> None:
    for i in range(205):
        ranger_standin.store.create_policy(_policy(f"p{i}", f"t{i}"))
    assert len(client.find_policies({"serviceName": "hivedev"})) == 200  # Ranger's default rows
    page = client.find_policies({"serviceName": "hivedev", "startIndex": 200, "pageSize": 100})
    assert [p.name for p in page] == [f"p{i}" for i in range(200, 205)]
    listed = client.session.get(
        f"{ranger_standin.url}/service/plugins/policies",
        params={"serviceName": "hivedev", "pageSize": 10, "startIndex": 5},
    ).json()
    assert (
        listed["totalCount"] == 205 and listed["resultSize"] == 10 and listed["policies"][0]["name"] == "p5"
    )


def test_download_answers_304_when_nothing_changed(client: RangerClient, ranger_standin: Standin) -> None:
    url = f"{ranger_standin.url}/service/plugins/policies/download/hivedev"
    first = client.session.get(url, params={"lastKnownVersion": -1})
    version = first.json()["policyVersion"]
    assert client.session.get(url, params={"lastKnownVersion": version}).status_code == 304
    client.create_policy(_policy("p1", "t1"))
    changed = client.session.get(url, params={"lastKnownVersion": version})
    assert changed.status_code == 200 and changed.json()["policyVersion"] == version + 1
    assert [p["name"] for p in changed.json()["policies"]] == ["p1"]


def test_auth_is_checked(ranger_standin: Standin) -> None:
    answer = requests.get(
        f"{ranger_standin.url}/service/public/v2/api/roles", auth=("admin", "wrong"), timeout=5
    )
    assert answer.status_code == 401


def test_faults_503_delay_and_death(client: RangerClient, ranger_standin: Standin) -> None:
    ranger_standin.faults.fail_next(2)
    assert client.get_service("hivedev") is None  # the client turns 503 into None
    assert client.create_policy(_policy("p1", "t1")) is None
    assert client.find_policies({"serviceName": "hivedev"}) == []  # the refused write changed nothing
    ranger_standin.faults.delay_next(1, 0.3)
    started = time.monotonic()
    client.get_service("hivedev")
    assert time.monotonic() - started >= 0.3
    ranger_standin.faults.die_after_writes(1, reply=False)
    with pytest.raises(requests.ConnectionError):
        client.create_policy(_policy("p2", "t2"))
    with pytest.raises(requests.ConnectionError):
        client.find_policies()
    ranger_standin.restart()
    assert [p.name for p in client.find_policies()] == ["p2"]  # applied, never answered
    statuses = [status for _, _, status in ranger_standin.request_log]
    assert statuses.count(503) == 2


def test_unknown_roles_users_and_groups_are_refused_as_ranger_does(client: RangerClient) -> None:
    with_role = _policy("p1", "t1", policyItems=[{"accesses": [{"type": "select"}], "roles": ["ghost"]}])
    refused = _refusal(client.create_policy, with_role)
    assert refused.msgDesc == (
        "Operation denied. Role name: ghost specified in policy does not exist in ranger admin."
    )
    created = client.create_policy(with_role, {"createPrincipalsIfAbsent": "true"})
    assert created.id and client.get_role("ghost", "admin", "hivedev").name == "ghost"
    refused = _refusal(client.create_role, "hivedev", {"name": "r", "roles": [{"name": "nobody"}]})
    assert refused.msgDesc.startswith("Role with name: nobody does not exist")


def test_strict_principals_need_known_users_and_groups() -> None:
    with Standin(strict_principals=True) as strict:
        strict.create_service("hivedev", "hive")
        client = RangerClient(strict.url, strict.auth)
        refused = _refusal(client.create_role, "hivedev", {"name": "r", "users": [{"name": "ann"}]})
        assert refused.msgDesc.startswith("user with name: ann does not exist")
        assert (
            client.create_role(
                "hivedev", {"name": "r", "users": [{"name": "ann"}]}, {"createNonExistUserGroup": "true"}
            ).name
            == "r"
        )
        for_group = _policy("p1", "t1", policyItems=[{"accesses": [{"type": "select"}], "groups": ["bi"]}])
        assert "Group name: bi specified in policy" in _refusal(client.create_policy, for_group).msgDesc
        strict.add_principals(groups=["bi"])
        assert client.create_policy(for_group).id


def test_malformed_input_is_refused_with_a_reason(client: RangerClient, ranger_standin: Standin) -> None:
    session, api = client.session, f"{ranger_standin.url}/service/public/v2/api"
    bad_values = {**_policy("p1", "t1"), "resources": {"database": {"values": "db1"}}}
    answer = session.post(f"{api}/policy", json=bad_values)
    assert answer.status_code == 400 and "error code[3018]" in answer.json()["msgDesc"]
    answer = session.post(f"{api}/policy", json={**_policy("p1", "t1"), "policyItems": 5})
    assert answer.status_code == 400 and answer.json()["msgDesc"].startswith("Invalid input data")
    answer = session.post(f"{api}/policy", data="{not json", headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    created = client.create_policy(_policy("p2", "t2"))
    answer = session.put(f"{api}/policy/{created.id}", json={**created, "id": created.id + 1})
    assert answer.status_code == 400 and answer.json()["msgDesc"] == "policyID mismatch"
    assert session.get(f"{api}/nosuch").status_code == 404


def test_a_write_the_client_timed_out_on_is_still_applied(
    client: RangerClient, ranger_standin: Standin
) -> None:
    ranger_standin.faults.delay_next(1, 0.6)
    api = f"{ranger_standin.url}/service/public/v2/api/policy"
    with pytest.raises(requests.Timeout):
        client.session.post(api, json=_policy("late", "t1"), timeout=0.2)
    # the server finishes the write after the client gave up, as Ranger would
    deadline = time.monotonic() + 10
    while not (names := [p.name for p in client.find_policies({"serviceName": "hivedev"})]):
        assert time.monotonic() < deadline, "the write was never applied"
        time.sleep(0.1)
    assert names == ["late"]
