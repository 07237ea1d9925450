"""The read-back's hand-made policy sets follow the writes (issue 30): after a sync's writes,
the Hive databases hand-made policies void, the policies voiding deny items elsewhere and
the override-priority policies are those of the read joined with those of the policies the
writes answered (``reading._handmade_moved``), not a pass over every policy (a sort of every
one, for the reason given per database). Over random histories of model changes and hand
edits that void or override (override priority or a validity schedule on pushdown's own
policy, a hand-made override policy in Hive and in Kafka), each synced over its scope (a
database's every-table policy written while a hand edit voids it among them), the sets
equal those the pass over every policy gave, joined with the read's as the read-back joins
them: the same databases, the same reasons."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger import reading
from pushdown_ranger.handmade import voided_databases, voiding
from pushdown_ranger.overrides import overriding_policies
from tests.adversary import histories

from .test_ranger_findings_moved import TABLES, world
from .world import backend_for

pytestmark = pytest.mark.ranger
EDITS = ("override", "schedule", "hive override", "kafka override", "plain")
ANY = {"values": ["*"], "isExcludes": False, "isRecursive": False}


def hand_edit(standin: Standin, edit: str, database: str) -> None:
    """``edit`` by hand: on pushdown's first Hive policy of ``database`` (override priority, a
    validity schedule, or back to plain), or a hand-made override policy of its own."""
    store = standin.store
    if edit in ("hive override", "kafka override"):
        service = edit.split()[0]
        name = f"hand {service} {database}"
        if store.list_policies({"policyName": name}):
            return
        resources = (
            {"database": {"values": [f"{database}*"]}, "table": ANY, "column": ANY}
            if service == "hive"
            else {"topic": {"values": [database]}}
        )
        item = {"users": ["carol"], "accesses": [{"type": "select" if service == "hive" else "consume"}]}
        body = {"service": service, "name": name, "policyPriority": 1, "resources": resources}
        store.create_policy({**body, "policyItems": [item]}, create_missing=True)
        return
    ours = [
        p
        for p in store.list_policies({"serviceName": "hive"})
        if p["resources"].get("database", {}).get("values") == [database] and "pushdown" in p["name"]
    ]
    if not ours:
        return
    policy = dict(sorted(ours, key=lambda p: p["id"])[0])
    policy["policyPriority"] = 1 if edit == "override" else 0
    schedule = [{"startTime": "2020/01/01 00:00:00", "endTime": "2099/01/01 00:00:00"}]
    policy["validitySchedules"] = schedule if edit == "schedule" else []
    store.update_policy(policy["id"], policy)


steps = st.one_of(
    st.tuples(st.just("grant"), st.sampled_from(("reader", "writer")), st.sampled_from(TABLES)),
    st.tuples(st.just("member"), st.sampled_from(("reader", "writer")), st.sampled_from(("alice", "carol"))),
    st.tuples(st.just("hand"), st.sampled_from(EDITS), st.sampled_from(("crm", "ops"))),
    st.tuples(st.just("schema"), st.sampled_from(("reader", "writer")), st.sampled_from(("crm", "ops"))),
)


def test_the_read_backs_hand_made_sets_over_random_histories_equal_a_pass_over_every_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    moved = reading._handmade_moved
    held: list[bool] = []  # per read-back: whether the read held hand-made sets to carry

    def checked(base: Any, policies: Any, keys: Any, hive: str) -> Any:
        """The sets as moved, compared (as the read-back joins them with the read's) with those
        of a pass over every policy."""
        out = moved(base, policies, keys, hive)
        if out is not None:
            held.append(bool(base.voided or base.overriding))
            every = (
                voided_databases(policies, hive),
                frozenset(k for k, p in policies.items() if k[0] != hive and voiding(p)),
                overriding_policies(policies, hive),
            )
            assert {**base.voided, **out[0]} == {**base.voided, **every[0]}
            assert base.voiding | out[1] == base.voiding | every[1]
            assert base.overriding | out[2] == base.overriding | every[2]
        return out

    monkeypatch.setattr(reading, "_handmade_moved", checked)

    @settings(max_examples=histories(25), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(steps, min_size=1, max_size=7))
    # pushdown's crm policy made to override by hand, then a grant there: carried
    @example(history=[("hand", "override", "crm"), ("grant", "reader", "table sales.crm.leads")])
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as standin:
            play(standin, history)

    run()
    assert any(held), held  # some read-backs carried voided databases or overrides


def play(standin: Standin, history: list[tuple[Any, ...]]) -> None:
    b = world()
    model = b.model
    backend = backend_for(standin)
    reconcile(backend, model, Scope.everything())
    for kind, *args in history:
        if kind == "hand":
            hand_edit(standin, args[0], args[1])
            continue
        if kind == "grant":
            events = ch.grant_privileges(model, args[0], ObjectRef.parse(args[1]), ["MODIFY_TABLE"])
        elif kind == "schema":  # the database's every-table policy written (granted or revoked)
            schema = ObjectRef.parse(f"schema sales.{args[1]}")
            held = any(g.object == schema for g in model.roles[args[0]])
            change = ch.revoke_privileges if held else ch.grant_privileges
            events = change(model, args[0], schema, ["MODIFY_TABLE"])
        elif args[1] in model.holders_of(args[0]):
            events = ch.revoke_role(model, args[0], Principal.user(args[1]))
        else:
            events = ch.grant_role(model, args[0], Principal.user(args[1]))
        for event in events:
            model.apply(event)
        reconcile(backend, model, Scope.union(scope_of(e) for e in events))


def test_a_written_policy_that_voids_has_the_sets_made_from_every_policy() -> None:
    """pushdown's crm policy given override priority by hand, then written by a sync of crm:
    its reason is picked among every policy's (the sets made afresh), and a sync of ops
    after it keeps crm voided."""
    with Standin() as standin:
        b = world()
        backend = backend_for(standin)
        reconcile(backend, b.model, Scope.everything())
        hand_edit(standin, "override", "crm")
        for table in ("table sales.crm.orders", "table sales.ops.runs"):
            events = ch.grant_privileges(b.model, "writer", ObjectRef.parse(table), ["MODIFY_TABLE"])
            for event in events:
                b.model.apply(event)
            reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
            assert backend.last is not None and "crm" in backend.last.voided, backend.last.voided
