"""The read-back's findings follow the writes (issue 30): after a sync's writes, the findings
of the policies and roles they answered are looked at again, the others kept from the read
(``Reporting._each``), not a pass over every policy and role. Counted in
``test_ranger_cost.py`` (policies and roles looked at, equal in an estate ten times larger);
here, over random histories of model changes and hand edits of pushdown's policies (an
item for a model user, one naming pushdown's role with delegated admin, the policy
disabled, allow exceptions), each synced over its scope, the findings the read-back gives
equal those of a fresh backend's read of the same Ranger: none lost, none stale."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import NotConverged
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import RangerBackend
from pushdown_ranger.facts import RoleFact
from pushdown_ranger.snapshot import RangerSnapshot
from tests.adversary import histories
from tests.builders import Builder

from .world import backend_for, sales

pytestmark = pytest.mark.ranger
TABLES = ("table sales.crm.orders", "table sales.crm.leads", "table sales.ops.runs")
EDITS = ("bypass", "modifier", "disable", "exception")


def world() -> Builder:
    return sales().schema("sales.ops").table("sales.ops.runs").role("writer", users=["carol"])


def findings_now(standin: Standin, model: Model) -> tuple[str, ...]:
    fresh = backend_for(standin)
    snap = fresh._read(fresh.versions(), fresh.defs_now()[0])
    return fresh.with_findings(snap, model).findings


def capture(backend: RangerBackend) -> list[tuple[str, ...]]:
    """The findings of every snapshot the backend reports (the read-back's the last)."""
    seen: list[tuple[str, ...]] = []
    with_findings = backend.with_findings

    def kept(snap: RangerSnapshot, model: Model) -> RangerSnapshot:
        out = with_findings(snap, model)
        seen.append(out.findings)
        return out

    backend.with_findings = kept  # type: ignore[method-assign]
    return seen


def hand_edit(standin: Standin, edit: str, database: str) -> None:
    """``edit`` by hand on one of pushdown's Hive policies of ``database`` (if it has one)."""
    ours = [
        p
        for p in standin.store.list_policies({})
        if p.get("service") == "hive" and p["resources"].get("database", {}).get("values") == [database]
    ]
    if not ours:
        return
    policy = dict(sorted(ours, key=lambda p: p["id"])[0])
    if edit == "bypass":
        item = {"users": ["carol"], "accesses": [{"type": "select", "isAllowed": True}]}
        policy["policyItems"] = [*(policy.get("policyItems") or []), item]
    elif edit == "modifier":
        item = {
            "roles": ["pd_reader"],
            "accesses": [{"type": "drop", "isAllowed": True}],
            "delegateAdmin": True,
        }
        policy["policyItems"] = [*(policy.get("policyItems") or []), item]
    elif edit == "disable":
        policy["isEnabled"] = False
    else:
        policy["allowExceptions"] = [{"users": ["bob"], "accesses": [{"type": "select", "isAllowed": True}]}]
    standin.store.update_policy(policy["id"], policy)


steps = st.one_of(
    st.tuples(st.just("grant"), st.sampled_from(("reader", "writer")), st.sampled_from(TABLES)),
    st.tuples(st.just("member"), st.sampled_from(("reader", "writer")), st.sampled_from(("alice", "carol"))),
    st.tuples(st.just("hand"), st.sampled_from(EDITS), st.sampled_from(("crm", "ops"))),
)


def test_the_read_backs_findings_over_random_histories_equal_a_fresh_reads() -> None:
    @settings(max_examples=histories(25), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(steps, min_size=1, max_size=6))
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as standin:
            play(standin, history)

    run()


def play(standin: Standin, history: list[tuple[Any, ...]]) -> list[tuple[str, ...]]:
    """``history`` played on ``standin``: the read-back's findings after each sync."""
    b = world()
    model = b.model
    backend = backend_for(standin)
    reconcile(backend, model, Scope.everything())
    seen = capture(backend)
    found: list[tuple[str, ...]] = []
    for kind, *args in history:
        if kind == "hand":
            hand_edit(standin, args[0], args[1])
            continue
        if kind == "grant":
            events = ch.grant_privileges(model, args[0], ObjectRef.parse(args[1]), ["MODIFY_TABLE"])
        elif args[1] in model.holders_of(args[0]):
            events = ch.revoke_role(model, args[0], Principal.user(args[1]))
        else:
            events = ch.grant_role(model, args[0], Principal.user(args[1]))
        for event in events:
            model.apply(event)
        seen.clear()
        reconcile(backend, model, Scope.union(scope_of(e) for e in events))
        if seen:
            assert seen[-1] == findings_now(standin, model), history
            found.append(seen[-1])
    return found


def test_a_hand_edit_is_found_by_the_next_sync_and_kept_or_gone_as_the_writes_leave_it() -> None:
    """An item for a model user added by hand to crm's policy is found by a sync scoped to
    ops and stays found after its writes (none lost); one naming pushdown's role with
    delegated admin is taken out by a sync of crm, and its finding goes with it; allow
    exceptions added by hand to crm's policy are found by a sync scoped to ops."""
    with Standin() as standin:
        found = play(
            standin,
            [
                ("hand", "bypass", "crm"),
                ("grant", "writer", "table sales.ops.runs"),
                ("hand", "modifier", "crm"),
                ("grant", "writer", "table sales.ops.runs"),
                ("grant", "reader", "table sales.crm.orders"),
                ("hand", "exception", "crm"),
                ("grant", "writer", "table sales.ops.runs"),
            ],
        )
    assert len(found) == 4
    assert any("carol, outside pushdown" in text for text in found[0]), found[0]
    assert any("delegated" in text or "names pushdown's role" in text for text in found[1]), found[1]
    assert not any("names pushdown's role" in text for text in found[2]), found[2]
    assert any("carol, outside pushdown" in text for text in found[2]), found[2]
    assert any("has allow exceptions" in text for text in found[3]), found[3]


@pytest.mark.parametrize("stable", [False, True])
def test_a_user_removed_and_another_added_the_newcomers_hand_made_item_is_found(stable: bool) -> None:
    """The principals seen are copied for the read's findings once per count of them: they
    only grow (a user removed stays seen: a hand-made item for him still works), so a user
    removed and another added (the model's count the same) moves the count, and the hand-made
    item for the newcomer, there before he joined, is found by the read-back of the sync that
    adds him and by the next read, as a fresh backend's read finds it."""
    with Standin() as standin:
        model = world().model
        backend = backend_for(standin, mapping_stable=stable)
        reconcile(backend, model, Scope.everything())
        policy = dict(
            next(
                p
                for p in standin.store.list_policies({})
                if p.get("service") == "hive" and p["resources"].get("database", {}).get("values") == ["crm"]
            )
        )
        item = {"users": ["dave"], "accesses": [{"type": "select", "isAllowed": True}]}
        policy["policyItems"] = [*(policy.get("policyItems") or []), item]
        standin.store.update_policy(policy["id"], policy)
        seen = capture(backend)
        reconcile(backend, model, Scope.everything())
        assert not any("dave" in text for text in seen[-1])
        count = len(model.users)
        events = [*ch.remove_user(model, "carol")]
        for event in events:
            model.apply(event)
        more = ch.add_user(model, "dave")
        for event in more:
            model.apply(event)
        assert len(model.users) == count
        seen.clear()
        reconcile(backend, model, Scope.union(scope_of(e) for e in [*events, *more]))
        assert any("dave, outside pushdown" in text for text in seen[-1]), seen[-1]
        assert set(findings_now(standin, model)) <= set(seen[-1])  # carol stays seen here
        seen.clear()
        events = ch.grant_privileges(
            model, "writer", ObjectRef.parse("table sales.ops.runs"), ["MODIFY_TABLE"]
        )
        for event in events:
            model.apply(event)
        reconcile(backend, model, Scope.union(scope_of(e) for e in events))
        assert seen and all(any("dave, outside pushdown" in text for text in found) for found in seen), seen


def test_a_role_edited_by_hand_during_a_sync_that_writes_no_role_is_read_and_taken_back() -> None:
    """The read-back of a sync that wrote no role keeps the read's roles, not copied: only
    while the role version is the one the sync's writes leave. A member added by hand to
    pushdown's role between the sync's read and its writes moves it: the read-back reads
    everything again (the hand-made member is in what it holds: the sync reports it has not
    converged), and the next sync takes the member out."""
    with Standin() as standin:
        model = world().model
        backend = backend_for(standin)
        reconcile(backend, model, Scope.everything())
        apply = backend.apply

        def edited_first(*args: Any, **kwargs: Any) -> Any:
            role = next(r for r in standin.store.list_roles({}) if r["name"] == "pd_reader")
            role = {**role, "users": [*role["users"], {"name": "mallory", "isAdmin": False}]}
            standin.store.update_role(role["id"], role)
            return apply(*args, **kwargs)

        backend.apply = edited_first  # type: ignore[method-assign]
        plans: list[Any] = []

        def started(plan: Any) -> Any:
            plans.append(plan)
            return lambda *_: None

        catalog = ObjectRef.parse("catalog sales")
        events = ch.grant_privileges(model, "writer", catalog, ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
        for event in events:
            model.apply(event)
        try:
            with pytest.raises(NotConverged, match=r"pd_reader.*mallory"):  # the read-back saw it
                reconcile(backend, model, Scope.union(scope_of(e) for e in events), start=started)
        finally:
            backend.apply = apply  # type: ignore[method-assign]
        assert plans and plans[0].ops and not any(isinstance(op.fact, RoleFact) for op in plans[0].ops)
        assert backend.last is not None
        held = {str(m.get("name")) for m in backend.last.roles["pd_reader"].get("users") or ()}
        assert "mallory" in held, held
        reconcile(backend, model, Scope.everything())
        members = {
            m["name"] for r in standin.store.list_roles({}) if r["name"] == "pd_reader" for m in r["users"]
        }
        assert "mallory" not in members, members
