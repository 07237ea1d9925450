"""A policy Ranger refuses to write (a principal named null in a deny item, stored by an
older Ranger) never holds back pushdown's narrowing of it: the narrowing is written in an
override-priority deny policy beside it (:mod:`pushdown_ranger.companion`), judged by Ranger
2.9's own engine and validator, and removed once it is no longer needed."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from importlib.resources import files
from typing import Any

import pytest
from pushdown_lab.ranger_ground_truth import judged
from pushdown_lab.ranger_standin import Standin
from pushdown_lab.ranger_standin.errors import validation_failure

from pushdown.errors import PermanentBackendError
from pushdown.model.privileges import Condition
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import RangerBackend
from pushdown_ranger.companion import (
    DENIES,
    MOST_SPARES,
    NARROWS,
    as_written,
    drop_allowed,
    folded,
    is_narrowing,
    narrowed_key,
    narrowed_keys,
    narrowing_findings,
    narrowing_policy,
    narrows,
    needed,
    spare_form,
    spare_forms,
    with_denies,
    with_narrows,
)
from pushdown_ranger.facts import PolicyFact
from pushdown_ranger.readback import policy_fact, resource_key
from tests.builders import Builder

from .test_ranger_review import hand_policy, revoke_all, wider, world
from .world import backend_for

pytestmark = pytest.mark.ranger
ALL = Scope.everything()
EVERY_TABLE = {"database": {"values": ["crm"]}, "table": {"values": ["?*"]}, "column": {"values": ["*"]}}
LEADS = {"database": "crm", "table": "leads", "column": "c"}
#: a deny item today's Ranger refuses (error 3053): taking null out would widen
NULL_DENY = {"users": ["null"], "accesses": [{"type": "select"}, {"type": "update"}]}


def _stored_with_null(standin: Standin) -> dict[str, Any]:
    """A hand-made policy on crm's every-table set (zed's allow), into which the first sync
    merges reader's allow (:func:`_add_null_deny` then gives it a deny item for null)."""
    return hand_policy(standin, EVERY_TABLE)


def _add_null_deny(standin: Standin, pid: int, field: str = "denyPolicyItems") -> None:
    """A deny item (or an allow exception) for a user named null, behind the validator."""
    store = standin.store
    policy = store.policy(pid)
    edit = {**policy, field: [*(policy.get(field) or []), NULL_DENY]}
    store.update_policy(pid, edit, checked=False)


def _unwritable(
    standin: Standin, field: str = "denyPolicyItems", *, override: bool = False
) -> tuple[Builder, RangerBackend, dict[str, Any]]:
    """The world synced (reader's allow merged into :func:`_stored_with_null`'s policy), then
    the null item put in that policy by :func:`_add_null_deny` (and, with ``override``,
    override priority, behind the validator too): (the builder, the backend, the policy)."""
    b = world()
    backend = backend_for(standin)
    created = _stored_with_null(standin)
    reconcile(backend, b.model, ALL)
    _add_null_deny(standin, created["id"], field)
    if override:
        store = standin.store
        store.update_policy(
            created["id"], {**store.policy(created["id"]), "policyPriority": 1}, checked=False
        )
    return b, backend, created


def _validated(judge: Any, policy: dict[str, Any], held: list[dict[str, Any]], **changes: Any) -> Any:
    """Ranger 2.9's RangerPolicyValidator's refusal (``None``: accepted) of ``policy`` made
    anew (its id, guid and version left out, ``changes`` made) beside the policies ``held``."""
    sdef, service = _hive_service()
    new = {k: v for k, v in copy.deepcopy(policy).items() if k not in ("id", "guid", "version")}
    return judge.validate({**new, **changes}, sdef, service, policies=held)


def _hive_service() -> tuple[dict[str, Any], dict[str, Any]]:
    """Ranger's hive service definition (as the stand-in holds it) and a hive service."""
    sdef = json.loads(
        (files("pushdown_lab.ranger_standin") / "data" / "ranger-servicedef-hive.json").read_text()
    )
    sdef.setdefault("id", 1)
    return sdef, {"id": 1, "name": "hive", "type": "hive"}


def _narrowings(standin: Standin) -> list[dict[str, Any]]:
    return [p for p in standin.store.list_policies({"serviceName": "hive"}) if is_narrowing(p, "pushdown")]


def _allowed(standin: Standin, *who: tuple[str, str]) -> list[bool]:
    """Ranger 2.9's engine's answers on crm.leads (the stand-in's held equal to them)."""
    asks = [("hive", LEADS, access, user, []) for user, access in who]
    return [a.allowed for a in judged(standin, asks)]


WHO = (("bob", "select"), ("null", "select"), ("null", "update"), ("zed", "select"))


@pytest.mark.parametrize("field", ["denyPolicyItems", "allowExceptions"])
def test_a_null_deny_never_holds_back_the_narrowing(ranger_standin: Standin, field: str) -> None:
    """The model revokes reader's grants: Ranger refuses any rewrite of the policy (its null
    deny is kept), so the narrowing goes into a narrowing policy beside it: bob is denied by
    Ranger's engine, the null deny still holds, zed keeps his allow, a finding names the
    policy and its null. Granted again, the narrowing policy goes and bob is allowed."""
    b, backend, created = _unwritable(ranger_standin, field)
    assert _allowed(ranger_standin, *WHO) == [True, False, False, True]
    store = ranger_standin.store
    with pytest.raises(Exception, match=r"error code\[305"):
        store.update_policy(created["id"], store.policy(created["id"]))  # as Ranger 2.9 refuses it

    revoke_all(b)
    plan, _ = reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert wider(ranger_standin, b) == []
    kept = store.policy(created["id"])
    assert NULL_DENY in kept[field]  # the null deny is never dropped
    assert any("pd_reader" in (i.get("roles") or ()) for i in kept["policyItems"])  # unwritable
    (narrowing,) = _narrowings(ranger_standin)
    assert narrowing["policyPriority"] == 1 and narrowing["resources"] == kept["resources"]
    assert not narrowing["policyItems"] and all(
        set(i["roles"]) == {"pd_reader"} and not i["users"] for i in narrowing["denyPolicyItems"]
    )
    assert any(str(created["name"]) in f and "null is kept" in f for f in plan.findings)
    again, _ = reconcile(backend, b.model, ALL)
    assert again.empty, again.ops  # the narrowing policy is read as the narrowing it holds
    found = [f for f in again.findings if str(narrowing["name"]) in f]
    assert found and all(str(created["name"]) in f and "null" in f for f in found), again.findings

    b.allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    reconcile(backend, b.model, ALL)
    assert _narrowings(ranger_standin) == []
    assert _allowed(ranger_standin, *WHO) == [True, False, False, True]
    assert NULL_DENY in store.policy(created["id"])[field]
    assert wider(ranger_standin, b) == []
    last, _ = reconcile(backend, b.model, ALL)
    assert last.empty, last.ops


@pytest.mark.parametrize("how", ["fixed", "deleted"])
def test_the_narrowing_policy_goes_once_the_policy_is_writable_or_gone(
    ranger_standin: Standin, how: str
) -> None:
    """The policy somebody fixes by hand (the null deny taken out) is narrowed in place, then
    the narrowing policy goes (a widening write); one somebody deletes leaves the narrowing
    policy to go at the next sync. Never wider on the way."""
    b, backend, created = _unwritable(ranger_standin)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    assert len(_narrowings(ranger_standin)) == 1
    store = ranger_standin.store
    if how == "fixed":
        policy = store.policy(created["id"])
        store.update_policy(
            created["id"],
            {**policy, "denyPolicyItems": [i for i in policy["denyPolicyItems"] if i != NULL_DENY]},
            checked=False,
        )
    else:
        store.delete_policy(created["id"])
    plan, _ = reconcile(backend, b.model, ALL)
    assert _narrowings(ranger_standin) == [], plan.failures
    assert wider(ranger_standin, b) == []
    assert _allowed(ranger_standin, ("bob", "select"))[0] is False
    if how == "fixed":
        assert not any(
            "pd_reader" in (i.get("roles") or ()) for i in store.policy(created["id"])["policyItems"]
        )
        assert _allowed(ranger_standin, ("zed", "select"))[0] is True
    again, _ = reconcile(backend, b.model, ALL)
    assert again.empty, again.ops


def test_a_narrowing_policy_disabled_by_hand_is_put_back_in_force(ranger_standin: Standin) -> None:
    """Somebody disables the narrowing policy: it is not read as the narrowing done, and the
    next sync puts it back in force. (Given normal priority it would be refused: 3010.)"""
    b, backend, _ = _unwritable(ranger_standin)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    (narrowing,) = _narrowings(ranger_standin)
    with pytest.raises(Exception, match=r"error code\[3010\]"):
        ranger_standin.store.update_policy(narrowing["id"], {**narrowing, "policyPriority": 0})
    ranger_standin.store.update_policy(narrowing["id"], {**narrowing, "isEnabled": False})
    assert _allowed(ranger_standin, ("bob", "select")) == [True]  # wider until the sync
    plan, _ = reconcile(backend, b.model, ALL)
    assert not plan.empty
    (again,) = _narrowings(ranger_standin)
    assert again["isEnabled"] is not False and again["policyPriority"] == 1
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert wider(ranger_standin, b) == []


def _refusing(standin: Standin, monkeypatch: pytest.MonkeyPatch, *writes: str) -> list[str]:
    """The stand-in refuses ``writes`` ("create", "update", "delete") of a narrowing policy
    (as a Ranger would that refused it); the refusals made, in order."""
    store, refused = standin.store, []
    for write in writes:
        real = getattr(store, f"{write}_policy")

        def refuse(*args: Any, _real: Any = real, _write: str = write, **kw: Any) -> Any:
            target = args[0] if _write == "create" else store.policy(args[0])
            if is_narrowing(target, "pushdown"):
                refused.append(_write)
                raise validation_failure(3010, "refused for the test", "resources")
            return _real(*args, **kw)

        monkeypatch.setattr(store, f"{write}_policy", refuse)
    return refused


def test_a_refused_narrowing_policy_leaves_nothing_wider(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranger refuses the narrowing policy's create on every form of its resources (3010 each
    time: one refusal per spare form tried, :data:`MOST_SPARES`): the sync fails that write
    (reported), nothing is wider than before it; refused its delete once the model grants
    again, the narrowing stays (narrower, reported) and nothing is wider than the model."""
    b, backend, _ = _unwritable(ranger_standin)
    before = _allowed(ranger_standin, *WHO)
    with monkeypatch.context() as m:
        refused = _refusing(ranger_standin, m, "create")
        revoke_all(b)
        with pytest.raises(PermanentBackendError, match=r"error code\[305.*could not be written beside"):
            reconcile(backend, b.model, ALL)
        # a 3010 refusal makes the writer try the next spare form of the resources (another
        # signature): the stand-in here refuses them all, each form once, then the write fails
        assert refused == ["create"] * (MOST_SPARES + 1)
        assert _narrowings(ranger_standin) == []
        assert _allowed(ranger_standin, *WHO) == before  # held back, never wider
    reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    with monkeypatch.context() as m:
        refused = _refusing(ranger_standin, m, "delete", "update")
        b.allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
        with pytest.raises(PermanentBackendError, match="could not be written beside"):
            reconcile(backend, b.model, ALL)
        assert refused
        assert len(_narrowings(ranger_standin)) == 1
        assert _allowed(ranger_standin, *WHO) == [False, False, False, True]  # narrower only
        assert wider(ranger_standin, b) == []
    reconcile(backend, b.model, ALL)
    assert _narrowings(ranger_standin) == []
    assert _allowed(ranger_standin, *WHO) == [True, False, False, True]


def test_rangers_own_validator_accepts_the_narrowing_policy(
    ranger_standin: Standin, ranger_judge: Any
) -> None:
    """Ranger 2.9's RangerPolicyValidator, over a store holding the refused policy, accepts
    the narrowing policy pushdown created beside it (override priority: another resource
    signature), refuses the refused policy's rewrite, and refuses the narrowing policy at
    normal priority (error 3010: the same resources)."""
    b, backend, created = _unwritable(ranger_standin)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    stored = ranger_standin.store.policy(created["id"])
    (narrowing,) = _narrowings(ranger_standin)
    assert _validated(ranger_judge, narrowing, [stored]) is None
    assert "error code[3010]" in str(_validated(ranger_judge, narrowing, [stored], policyPriority=0))
    sdef, service = _hive_service()
    message = ranger_judge.validate(stored, sdef, service, policies=[stored], update=True)
    assert message is not None and "error code[305" in message


def test_an_allow_the_unwritable_policy_cannot_take_is_reported_never_wider(ranger_standin: Standin) -> None:
    """In one sync the model revokes reader's grants and gives a new role (carol's) the same
    access there: the narrowing is written beside the policy; the new allow cannot go into it
    (Ranger refuses its writes), so the sync fails that write, naming it (narrower)."""
    b, backend, _ = _unwritable(ranger_standin)
    revoke_all(b)
    b.role("auditor", users=["carol"]).allow(
        "auditor", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"
    )
    with pytest.raises(PermanentBackendError, match="written in a narrowing policy beside it, but allow"):
        reconcile(backend, b.model, ALL)
    assert _allowed(ranger_standin, *WHO, ("carol", "select")) == [False, False, False, True, False]
    assert wider(ranger_standin, b) == []
    assert len(_narrowings(ranger_standin)) == 1


def _ours(role: str) -> bool:
    return role.startswith("pd_")


def _stored(**items: Any) -> dict[str, Any]:
    return {
        "service": "hive",
        "name": "old",
        "resources": {"database": {"values": ["d"]}, "table": {"values": ["t"], "isExcludes": True}},
        "denyPolicyItems": [NULL_DENY],
        **items,
    }


def test_what_the_narrowing_policy_must_deny_and_cannot_bring() -> None:
    """Removed allows (a hand-marked one by its access type) and added denies are denied;
    an allow the model adds, a deny it drops and delegated admin alone cannot be brought."""
    stored = _stored(
        policyItems=[
            {"roles": ["pd_a"], "accesses": [{"type": "select"}, {"type": "update"}]},
            {
                "roles": ["pd_b"],
                "accesses": [{"type": "select"}],
                "conditions": [{"type": "ip", "values": ["x"]}],
            },
            {"roles": ["pd_c"], "accesses": [], "delegateAdmin": True},
        ],
        denyPolicyItems=[NULL_DENY, {"roles": ["pd_d"], "accesses": [{"type": "drop"}]}],
    )
    after = PolicyFact(
        "hive", resource_key(stored), frozenset({("pd_a", "select")}), frozenset({("pd_e", "drop")})
    )
    pairs, short = needed(stored, after, _ours)
    assert pairs == {("pd_a", "update"), ("pd_b", "select"), ("pd_e", "drop")}
    assert short and "pd_d" in short[0] and "delegated admin" in short[1] and len(short) == 2
    pairs, short = needed(stored, replace(after, allow=frozenset({("pd_b", "select")})), _ours)
    assert ("pd_b", "select") not in pairs and any("not added" in s for s in short)
    policy = narrowing_policy(stored, pairs, "pushdown")
    assert policy["resources"] == stored["resources"] and policy["policyPriority"] == 1
    assert is_narrowing(policy, "pushdown") and not is_narrowing(stored, "pushdown")
    assert resource_key(policy) == resource_key(stored)


def test_a_narrowing_policy_is_folded_into_the_fact_it_narrows() -> None:
    """Unwritable: the allow pairs it denies are not held, its other pairs are held denies.
    Writable, gone, or deny items off: every pair it denies is a held deny (the model then
    removes it, a widening write); disabled by hand it denies nothing."""
    stored = _stored(policyItems=[{"roles": ["pd_a"], "accesses": [{"type": "select"}, {"type": "update"}]}])
    key = ("hive", resource_key(stored))
    fact = policy_fact(stored, _ours)
    narrowing = narrowing_policy(stored, frozenset({("pd_a", "select"), ("pd_e", "drop")}), "pushdown")
    got = folded(fact, key, stored, narrowing, _ours, True)
    assert got is not None and got.allow == {("pd_a", "update")} and got.deny == {("pd_e", "drop")}
    fixed = {**stored, "denyPolicyItems": []}
    for original, on in ((fixed, True), (None, True), (stored, False)):
        got = folded(policy_fact(original, _ours) if original else None, key, original, narrowing, _ours, on)
        assert got is not None and got.deny == {("pd_a", "select"), ("pd_e", "drop")}
    off = folded(fact, key, stored, {**narrowing, "isEnabled": False}, _ours, True)
    assert off == fact
    assert drop_allowed(got, replace(got, deny=frozenset()), narrowing, _ours)
    assert not drop_allowed(replace(got, deny=frozenset()), replace(got, deny=frozenset()), narrowing, _ours)


def test_the_narrowing_policy_is_removed_only_with_the_widening_writes(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model grants reader's access again and, in the same sync, denies reader crm.leads;
    Ranger refuses that deny's policy: the narrowing policy (whose removal widens) stays, and
    bob is denied crm.leads; the next sync, with the deny accepted, removes it."""
    b, backend, _ = _unwritable(ranger_standin)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    store, real = ranger_standin.store, ranger_standin.store.create_policy

    def refuse(policy: Any, *args: Any, **kw: Any) -> Any:
        if (policy.get("resources") or {}).get("table", {}).get("values") == ["leads"]:
            raise validation_failure(3010, "refused for the test", "resources")
        return real(policy, *args, **kw)

    b.allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    b.deny("reader", "table sales.crm.leads", "SELECT_TABLE")
    with monkeypatch.context() as m:
        m.setattr(store, "create_policy", refuse)
        with pytest.raises(PermanentBackendError, match="refused for the test"):
            reconcile(backend, b.model, ALL)
        assert len(_narrowings(ranger_standin)) == 1
        assert _allowed(ranger_standin, ("bob", "select"), ("zed", "select")) == [False, True]
        assert wider(ranger_standin, b) == []
    reconcile(backend, b.model, ALL)
    assert _narrowings(ranger_standin) == []
    assert _allowed(ranger_standin, ("bob", "select"), ("zed", "select")) == [False, True]
    orders = {"database": "crm", "table": "orders", "column": "c"}
    assert [a.allowed for a in judged(ranger_standin, [("hive", orders, "select", "bob", [])])] == [False]
    assert wider(ranger_standin, b) == []


def test_an_override_policy_is_narrowed_on_the_spare_form_of_its_resources(
    ranger_standin: Standin, ranger_judge: Any
) -> None:
    """The unwritable policy has override priority itself: the narrowing policy on the same
    resources would have its resource signature (Ranger 2.9's validator refuses it, 3010), so
    it goes on their spare form (one more ``*`` beside the column's ``*``: the same resources,
    another signature), which the validator accepts. Ranger's engine denies bob, the sync
    settles, and the narrowing policy is read as the narrowing of that policy."""
    b, backend, created = _unwritable(ranger_standin, override=True)
    store = ranger_standin.store
    revoke_all(b)
    reconcile(backend, b.model, ALL)  # the rewrite is refused: its narrowing written beside it
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert wider(ranger_standin, b) == []
    stored = store.policy(created["id"])
    (narrowing,) = _narrowings(ranger_standin)
    assert narrowing["resources"]["column"]["values"] == ["*", "**"]
    assert {k: v for k, v in narrowing["resources"].items() if k != "column"} == {
        k: v for k, v in stored["resources"].items() if k != "column"
    }
    assert _validated(ranger_judge, narrowing, [stored]) is None
    same = _validated(ranger_judge, narrowing, [stored], resources=stored["resources"])
    assert "error code[3010]" in str(same)
    plan, _ = reconcile(backend, b.model, ALL)
    assert plan.empty, plan.ops  # read as the narrowing of that policy: settled
    assert any(str(narrowing["name"]) in f and str(created["name"]) in f for f in plan.findings)
    assert not any("no longer needed" in f for f in plan.findings), plan.findings


def test_the_spare_form_of_resources_and_the_key_it_narrows() -> None:
    """A value of only ``*`` gets one more ``*`` (the same resources); else a case-swapped twin,
    else a value with ``*`` appended (narrower, never wider: reported). Read back, the narrowing
    policy is found at the key of the policy it narrows."""
    every = {"database": {"values": ["d"]}, "table": {"values": ["?*"]}, "column": {"values": ["*"]}}
    assert spare_form(every) == (
        {**every, "column": {"values": ["*", "**"]}},
        True,
    )
    assert spare_form({"database": {"values": ["crm"]}}) == ({"database": {"values": ["crm", "CRM"]}}, False)
    assert spare_form({"path": {"values": ["/", "/*"]}}) == ({"path": {"values": ["/", "/*", "/**"]}}, False)
    stored = {"service": "hive", "resources": every}
    policy = narrowing_policy(stored, frozenset({("pd_a", "select")}), "pushdown", spare=True)
    assert resource_key(stored) in narrowed_keys(policy) and resource_key(policy) != resource_key(stored)
    assert "**" not in every["column"]["values"]  # the original's resources are not touched


def test_only_what_pushdown_writes_is_read_as_a_narrowing_policy() -> None:
    """Plain deny items naming pushdown's roles: a narrowing policy (disabled or given a deny
    exception too: put back in force by the sync). An allow item, an allow exception, a user
    or group, conditions or delegated admin in a deny item, isDenyAllElse: read as hand-made."""
    deny = {"roles": ["pd_a"], "accesses": [{"type": "select", "isAllowed": True}]}
    good = {"policyLabels": ["pushdown", "pushdown-narrowing"], "denyPolicyItems": [deny]}
    assert as_written(good, _ours)
    assert as_written({**good, "isEnabled": False, "denyExceptions": [deny]}, _ours)
    for bad in (
        {"policyItems": [deny]},
        {"allowExceptions": [deny]},
        {"isDenyAllElse": True},
        {"denyPolicyItems": [{**deny, "users": ["zed"]}]},
        {"denyPolicyItems": [{**deny, "groups": ["etl"]}]},
        {"denyPolicyItems": [{**deny, "roles": ["other"]}]},
        {"denyPolicyItems": [{**deny, "conditions": [{"type": "ip", "values": ["x"]}]}]},
        {"denyPolicyItems": [{**deny, "delegateAdmin": True}]},
        {"denyPolicyItems": [{**deny, "accesses": [{"type": "select", "isAllowed": False}]}]},
    ):
        assert not as_written({**good, **bad}, _ours), bad


def test_the_models_deny_in_the_narrowing_policy_is_read_as_held(
    ranger_standin: Standin, ranger_judge: Any
) -> None:
    """The model denies reader select on all of crm where the unwritable policy allows
    pd_reader select: the narrowing policy denies it and names it as the model's deny (an
    option Ranger 2.9's validator accepts), so the read holds the deny and the sync settles.
    The option taken out by hand, or claimed by hand for an allow the narrowing only takes
    away, is put right by the next sync, never wider on the way."""
    b, backend, created = _unwritable(ranger_standin)
    b.deny("reader", "schema sales.crm", "SELECT_TABLE")
    reconcile(backend, b.model, ALL)
    (narrowing,) = _narrowings(ranger_standin)
    assert narrowing["options"][DENIES] == [["pd_reader", "select"]]
    stored = ranger_standin.store.policy(created["id"])
    assert _validated(ranger_judge, narrowing, [stored]) is None
    store = ranger_standin.store
    store.update_policy(narrowing["id"], {**narrowing, "options": {}})
    reconcile(backend, b.model, ALL)
    assert store.policy(narrowing["id"])["options"][DENIES] == [["pd_reader", "select"]]
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    again, _ = reconcile(backend, b.model, ALL)
    assert again.empty, again.ops

    revoke_all(b)  # the model's deny goes, and reader's allow: the narrowing only takes it away
    b.revoke("reader", "schema sales.crm", ["SELECT_TABLE"], Condition.DENY)
    reconcile(backend, b.model, ALL)
    (narrowing,) = _narrowings(ranger_standin)
    assert DENIES not in (narrowing.get("options") or {})
    store.update_policy(narrowing["id"], {**narrowing, "options": {DENIES: [["pd_reader", "select"]]}})
    reconcile(backend, b.model, ALL)
    assert DENIES not in (store.policy(narrowing["id"]).get("options") or {})
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert wider(ranger_standin, b) == []
    last, _ = reconcile(backend, b.model, ALL)
    assert last.empty, last.ops


def test_a_pair_named_as_the_models_deny_is_folded_as_held() -> None:
    """A pair the narrowing policy denies where the unwritable policy allows it: only the
    allow taken away, unless the policy names it as the model's deny (then a held deny too);
    a name for a pair it does not deny is ignored."""
    stored = _stored(policyItems=[{"roles": ["pd_a"], "accesses": [{"type": "select"}]}])
    key = ("hive", resource_key(stored))
    fact = policy_fact(stored, _ours)
    pair = frozenset({("pd_a", "select")})
    plain = narrowing_policy(stored, pair, "pushdown")
    assert folded(fact, key, stored, plain, _ours, True) is None
    marked = narrowing_policy(stored, pair, "pushdown", denies=pair)
    assert folded(fact, key, stored, marked, _ours, True) == PolicyFact("hive", key[1], frozenset(), pair)
    claim = with_denies(plain, frozenset({("pd_b", "drop")}))
    assert folded(fact, key, stored, claim, _ours, True) is None
    assert folded(fact, key, stored, {**marked, "options": {DENIES: "x"}}, _ours, True) is None


def test_a_spare_form_that_denies_more_is_reported() -> None:
    """On the spare form of a database-only resource set (a case-swapped twin: Hive matches it
    the same, another matcher may not), the finding says what more it may deny; on one more
    ``*`` beside ``*`` it says nothing more (the same resources)."""
    for resources, more in (
        ({"database": {"values": ["crm"]}}, "database value 'CRM'"),
        ({"database": {"values": ["crm"]}, "table": {"values": ["*"]}}, None),
    ):
        stored = {**_stored(), "resources": resources, "policyPriority": 1}
        policy = narrowing_policy(stored, frozenset({("pd_a", "select")}), "pushdown", spare=True)
        key = ("hive", resource_key(stored))
        (found,) = narrowing_findings({key: policy}, {key: stored}, _ours)
        assert "another resource signature" in found
        assert (more is not None and more in found and "never wider" in found) or (
            more is None and "also denies" not in found
        ), found


def test_a_narrowing_policy_on_a_later_spare_form_is_read_as_the_one_it_narrows() -> None:
    """A narrowing policy on the second spare form of an override policy's resources (the first
    held by a hand-made policy: 3010) is read as the narrowing of the policy Ranger refuses to
    write, never of the hand-made one whose spare form it also is; one whose resources are no
    spare form of a policy read is never matched past one value less."""
    every = {"database": {"values": ["d"]}, "table": {"values": ["?*"]}, "column": {"values": ["*"]}}
    assert spare_forms(every, 2) == ({**every, "column": {"values": ["*", "**", "***"]}}, True)
    stored = {"service": "hive", "resources": every, "policyPriority": 1, "denyPolicyItems": [NULL_DENY]}
    hand = {
        "service": "hive",
        "resources": spare_form(every)[0],
        "policyPriority": 1,
        "policyItems": [{"users": ["carol"], "accesses": [{"type": "select"}]}],
    }
    policies = {("hive", resource_key(p)): p for p in (stored, hand)}
    policy = narrowing_policy(stored, frozenset({("pd_a", "select")}), "pushdown", spare=2)
    assert policy["resources"]["column"]["values"] == ["*", "**", "***"]
    assert narrowed_key(policy, "hive", policies) == ("hive", resource_key(stored))
    other = {**policy, "resources": {**every, "column": {"values": ["*", "x", "y"]}}}
    assert narrowed_key(other, "hive", policies) == ("hive", resource_key(other))
    assert narrowed_key(policy, "hive", {}) == ("hive", resource_key(policy))


def test_the_narrowed_policys_id_only_breaks_a_tie_among_the_policies_covered() -> None:
    """Two unwritable override policies, ``stored`` and ``hand`` (on its spare form): the
    narrowing policy on the second spare form of ``stored``'s resources is the spare form of
    both. Written, it names ``stored``'s id (:data:`NARROWS`) and is read as its narrowing;
    an older one without the option, or one naming anything else (a policy it does not cover,
    a value that is no id), falls back to the fewest spare forms: ``hand``."""
    every = {"database": {"values": ["d"]}, "table": {"values": ["?*"]}, "column": {"values": ["*"]}}
    stored = {
        "id": 7,
        "service": "hive",
        "resources": every,
        "policyPriority": 1,
        "denyPolicyItems": [NULL_DENY],
    }
    hand = {**stored, "id": 9, "resources": spare_form(every)[0]}
    elsewhere = {**stored, "id": 11, "resources": {**every, "table": {"values": ["other"]}}}
    policies = {("hive", resource_key(p)): p for p in (stored, hand, elsewhere)}
    policy = narrowing_policy(stored, frozenset({("pd_a", "select")}), "pushdown", spare=2)
    assert narrows(policy) == 7
    assert narrowed_key(policy, "hive", policies) == ("hive", resource_key(stored))
    assert narrowed_key(with_narrows(policy, hand), "hive", policies) == ("hive", resource_key(hand))
    old = {**policy, "options": {}}
    assert narrowed_key(old, "hive", policies) == ("hive", resource_key(hand))
    for value in (11, "11", 12, True, 0, -7, "-7", " 7", "7.0", "٧", [7], {"id": 7}, None):
        forged = {**policy, "options": {NARROWS: value}}
        assert narrowed_key(forged, "hive", policies) == ("hive", resource_key(hand)), value
    assert narrows({**policy, "options": {NARROWS: "7"}}) == 7
    assert narrows({**policy, "options": [NARROWS, 7]}) is None


def test_a_narrowing_policy_put_back_to_override_on_a_held_signature_goes_on_a_spare_form(
    ranger_standin: Standin,
) -> None:
    """The unwritable policy has override priority, so its narrowing policy is on the spare
    form of its resources. Somebody gives the narrowing policy normal priority, then makes an
    override-priority policy on its very resources allowing bob: putting the narrowing policy
    back to override priority is refused (3010: that signature is held). The update is written
    again on the next spare form (the same policy: it never stops denying), so Ranger's engine
    denies bob, the hand-made allow is reported, and the next sync settles."""
    b, backend, _ = _unwritable(ranger_standin, override=True)
    revoke_all(b)
    reconcile(backend, b.model, ALL)
    (narrowing,) = _narrowings(ranger_standin)
    store = ranger_standin.store
    store.update_policy(narrowing["id"], {**narrowing, "policyPriority": 0})
    bob = [{"users": ["bob"], "accesses": [{"type": "select", "isAllowed": True}]}]
    hand = store.create_policy(
        {
            "service": "hive",
            "name": "hand override allow",
            "resources": narrowing["resources"],
            "policyPriority": 1,
            "policyItems": bob,
        }
    )
    assert _allowed(ranger_standin, ("bob", "select")) == [True]  # wider until the sync
    plan, _ = reconcile(backend, b.model, ALL)
    (again,) = _narrowings(ranger_standin)
    assert again["id"] == narrowing["id"] and again["policyPriority"] == 1
    assert again["resources"] == spare_form(narrowing["resources"])[0]
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
    assert any(str(hand["name"]) in f for f in plan.findings), plan.findings
    settled, _ = reconcile(backend, b.model, ALL)
    assert settled.empty, settled.ops
    assert _allowed(ranger_standin, *WHO) == [False, False, False, True]
