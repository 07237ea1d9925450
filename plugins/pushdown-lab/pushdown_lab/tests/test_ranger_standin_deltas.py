"""The stand-in's engine moved by policy and role deltas decides as one built afresh.

Random write histories through the stand-in's store (policies created, updated, disabled and
deleted, of every type, with deny items, exceptions, overrides and validity schedules;
roles created, changed and deleted, nested; the service definition's deny option turned
off and on; a security zone made and dropped): after every write the engine the stand-in
serves (moved by the changes since the last one) is compared with an engine built from the
store's current policies and roles, on every request of a grid (the whole answer: allowed,
determined, audited, the deciding policy; or the same refusal) and on the evaluation order.
Each broken delta step below makes the comparison fail.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from pushdown_lab.ranger_standin import RangerError, Standin
from pushdown_lab.ranger_standin import deltas as deltas_module
from pushdown_lab.ranger_standin.options import Unsupported
from pushdown_lab.ranger_standin.policy_evaluation import AccessRequest, ServicePolicies
from pushdown_lab.ranger_standin.policyitems import RoleBook

pytestmark = pytest.mark.ranger

DATABASES = ["d1", "d2"]
TABLES = ["t1", "t2", "*"]
USERS = ["u1", "u2", "u3"]
GROUPS = ["g1", "public"]
ROLES = ["r1", "r2", "r3"]
ACCESSES = ["select", "update", "alter", "all"]
SCHEDULE = {"startTime": "2020/01/01 00:00:00", "endTime": "2099/01/01 00:00:00", "timeZone": "UTC"}


def _item(rng: random.Random, masking: int = 0) -> dict[str, Any]:
    item: dict[str, Any] = {
        "accesses": [{"type": a, "isAllowed": True} for a in rng.sample(ACCESSES, rng.randint(1, 2))],
        "users": rng.sample([*USERS, "{OWNER}"], rng.randint(0, 1)),
        "groups": rng.sample(GROUPS, rng.randint(0, 1)),
        "roles": rng.sample(ROLES, rng.randint(0, 1)),
        "delegateAdmin": rng.random() < 0.2,
    }
    if not (item["users"] or item["groups"] or item["roles"]):
        item["users"] = [rng.choice(USERS)]
    if masking == 1:
        item["accesses"] = [{"type": "select", "isAllowed": True}]
        item["dataMaskInfo"] = {"dataMaskType": "MASK_NONE"}
    elif masking == 2:
        item["accesses"] = [{"type": "select", "isAllowed": True}]
        item["rowFilterInfo"] = {"filterExpr": "1=1"}
    return item


def _policy(rng: random.Random, name: str) -> dict[str, Any]:
    kind = rng.choice([0, 0, 0, 1, 2])
    resources: dict[str, Any] = {
        "database": {"values": [rng.choice([*DATABASES, "d*"])]},
        "table": {"values": [rng.choice(TABLES)], "isExcludes": rng.random() < 0.1},
    }
    if kind != 2 and rng.random() < 0.6:
        resources["column"] = {"values": [rng.choice(["*", "c1"])]}
    policy: dict[str, Any] = {
        "service": "hive",
        "name": name,
        "policyType": kind,
        "resources": resources,
        "isEnabled": rng.random() < 0.85,
        "isAuditEnabled": rng.random() < 0.8,
    }
    if kind == 0:
        policy["policyItems"] = [_item(rng) for _ in range(rng.randint(0, 2))]
        policy["denyPolicyItems"] = [_item(rng) for _ in range(rng.randint(0, 1))]
        policy["allowExceptions"] = [
            _item(rng) for _ in range(rng.randint(0, 1) if rng.random() < 0.3 else 0)
        ]
        policy["denyExceptions"] = [_item(rng) for _ in range(rng.randint(0, 1) if rng.random() < 0.3 else 0)]
        policy["policyPriority"] = rng.choice([0, 0, 1])
        policy["isDenyAllElse"] = rng.random() < 0.1
        if rng.random() < 0.05:
            policy["validitySchedules"] = [SCHEDULE]
    elif kind == 1:
        policy["dataMaskPolicyItems"] = [_item(rng, 1)]
    else:
        policy["rowFilterPolicyItems"] = [_item(rng, 2)]
    return policy


def _role(rng: random.Random, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "users": [{"name": u} for u in rng.sample(USERS, rng.randint(0, 2))],
        "groups": [{"name": g} for g in rng.sample(GROUPS, rng.randint(0, 1) if rng.random() < 0.3 else 0)],
        "roles": [{"name": r} for r in rng.sample(ROLES, rng.randint(0, 1)) if r != name],
    }


def _write(rng: random.Random, ranger: Standin) -> None:
    """One random write (refused ones change nothing, as in Ranger)."""
    store = ranger.store
    mine = [p for p in store.list_policies({"serviceName": "hive"}) if not p.get("zoneName")]
    roll = rng.random()
    if roll < 0.35 or not mine:
        store.create_policy(_policy(rng, f"p{rng.randint(0, 10**6)}"), create_missing=True)
    elif roll < 0.6:
        old = rng.choice(mine)
        store.update_policy(int(old["id"]), _policy(rng, str(old["name"])), create_missing=True)
    elif roll < 0.7:
        store.delete_policy(int(rng.choice(mine)["id"]))
    elif roll < 0.9:
        name = rng.choice(ROLES)
        roles = store.list_roles({"roleName": name})
        if roles and rng.random() < 0.3:
            store.delete_role(int(roles[0]["id"]))
        elif roles:
            store.update_role(int(roles[0]["id"]), _role(rng, name), create_missing=True)
        else:
            store.create_role(_role(rng, name), create_missing=True)
    elif roll < 0.95:
        sdef = store.service_def("hive")
        options = dict(sdef.get("options") or {})
        on = options.get("enableDenyAndExceptionsInPolicies", "true") != "false"
        options["enableDenyAndExceptionsInPolicies"] = "false" if on else "true"
        store.update_service_def("hive", {**sdef, "options": options})
    else:
        zones = store.list_zones({})
        if zones:
            store.delete_zone(int(zones[0]["id"]))
        else:
            store.create_zone({"name": "z", "services": {"hive": {"resources": [{"database": ["zdb"]}]}}})


def _fresh(ranger: Standin) -> ServicePolicies:
    store = ranger.store
    with store.lock:
        return ServicePolicies(
            store.service_def("hive"),
            store.list_policies({"serviceName": "hive", "zoneName": ""}, copied=False),
            [role for _, role in sorted(store.roles.items())],
        )


REQUESTS = [
    AccessRequest(dict(resource), access, user, groups, owner)
    for resource in [
        {"database": db, "table": table, **column}
        for db in DATABASES
        for table in ("t1", "t2")
        for column in ({}, {"column": "c1"}, {"column": "*"})
    ]
    + [{"database": "d1"}]
    for access in ("select", "update", "", "_admin")
    for user in USERS
    for groups in ([], ["g1"])
    for owner in (None, "u2")
]


def _answer(engine: ServicePolicies, request: AccessRequest) -> object:
    try:
        return engine.evaluate(request)
    except Unsupported as exc:
        return ("unsupported", str(exc))


def _differences(seed: int, steps: int = 25) -> list[str]:
    """Where the stand-in's engine and a fresh one differ over one random history."""
    rng = random.Random(seed)
    found: list[str] = []
    with Standin() as ranger:
        ranger.create_service("hive", "hive")
        ranger.service_policies("hive")
        for step in range(steps):
            try:
                _write(rng, ranger)
            except RangerError:
                continue
            served, fresh = ranger.service_policies("hive"), _fresh(ranger)
            if [e.id for e in served.evaluators] != [e.id for e in fresh.evaluators]:
                found.append(f"seed {seed} step {step}: evaluation order")
            for user in USERS:
                for groups in ([], ["g1"]):
                    if served.role_book.roles_of(user, groups) != fresh.role_book.roles_of(user, groups):
                        found.append(f"seed {seed} step {step}: roles of {user} {groups}")
            for request in REQUESTS:
                if _answer(served, request) != _answer(fresh, request):
                    found.append(f"seed {seed} step {step}: {request}")
                    break
    return found


HISTORIES = 40


def test_the_engine_moved_by_deltas_decides_as_one_built_afresh() -> None:
    moves = 0
    original = deltas_module.moved

    def counted(*args: Any) -> ServicePolicies | None:
        nonlocal moves
        engine = original(*args)
        moves += engine is not None
        return engine

    deltas_module_moved = pytest.MonkeyPatch()
    deltas_module_moved.setattr("pushdown_lab.ranger_standin.policy_evaluation.moved", counted)
    try:
        found = [d for seed in range(HISTORIES) for d in _differences(seed)]
    finally:
        deltas_module_moved.undo()
    assert found == []
    assert moves > HISTORIES * 10  # most writes moved the engine rather than built it afresh


def _hold_nothing(self: Any, pid: int, policy: dict[str, Any]) -> None:
    return None


BROKEN = {
    "the changed roles left out of the role book": (RoleBook, "moved", lambda self, gone, added: self),
    "a disabled policy still evaluated": (
        deltas_module,
        "is_chosen",
        lambda policy: int(policy.get("policyType") or 0) == 0,
    ),
    "the policies holding a matcher not built again when its first builder changed": (
        deltas_module.DeltaState,
        "hold",
        _hold_nothing,
    ),
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_each_broken_delta_step_is_caught(broken: str, monkeypatch: pytest.MonkeyPatch) -> None:
    owner, name, replacement = BROKEN[broken]
    monkeypatch.setattr(owner, name, replacement)
    assert any(_differences(seed) for seed in range(HISTORIES)), broken


def test_a_grant_moves_one_evaluator_and_keeps_the_role_book() -> None:
    """After a policy update only that policy's evaluator is new and nothing is listed again;
    after a role change the book is moved, every evaluator kept."""
    with Standin() as ranger:
        ranger.create_service("hive", "hive")
        store = ranger.store
        store.create_role({"name": "r1", "users": [{"name": "u1"}]})
        policies = [
            store.create_policy(
                {
                    "service": "hive",
                    "name": f"p{k}",
                    "resources": {"database": {"values": [f"d{k}"]}, "table": {"values": ["*"]}},
                    "policyItems": [{"roles": ["r1"], "accesses": [{"type": "select", "isAllowed": True}]}],
                }
            )
            for k in range(20)
        ]
        before = ranger.service_policies("hive")
        kept = {e.id: e for e in before.evaluators}
        store.update_policy(
            int(policies[3]["id"]),
            {**policies[3], "policyItems": [{"roles": ["r1"], "accesses": [{"type": "update"}]}]},
        )
        listed = []
        original = store.list_policies

        def listing(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
            listed.append(args)
            return original(*args, **kwargs)

        store.list_policies = listing  # type: ignore[method-assign]
        after = ranger.service_policies("hive")
        assert listed == []  # moved, not built from every policy
        assert [e.id for e in after.evaluators] == [e.id for e in before.evaluators]
        new = [e.id for e in after.evaluators if kept[e.id] is not e]
        assert new == [policies[3]["id"]]
        assert after.role_book is before.role_book
        assert ranger.is_access_allowed("hive", {"database": "d3", "table": "t"}, "update", "u1")
        assert not ranger.is_access_allowed("hive", {"database": "d3", "table": "t"}, "update", "u2")
        role = store.list_roles({"roleName": "r1"})[0]
        store.update_role(int(role["id"]), {**role, "users": [{"name": "u2"}]})
        again = ranger.service_policies("hive")
        assert listed == []
        assert all(e is f for e, f in zip(again.evaluators, after.evaluators, strict=True))
        assert ranger.is_access_allowed("hive", {"database": "d3", "table": "t"}, "update", "u2")
        assert not ranger.is_access_allowed("hive", {"database": "d3", "table": "t"}, "update", "u1")
