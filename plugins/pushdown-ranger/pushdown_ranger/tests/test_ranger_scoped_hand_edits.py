"""Scoped syncs over hand edits that move what the diff keeps apart by Hive database (the
last answer's parts, ``factsets.Apart``) and what the implied-grants check keeps for the
policies a focused compile leaves out (``compile._Implying``): pushdown's policy of a
database moved to another by hand, made unshaped (a second database), renamed to a
database differing in case only, deleted; a role's members changed by hand, a role deleted
and made again with other members; a write refused mid-sync (what the last answer keeps
must hold for the next sync). After each scoped sync a plan over the same scope by a
backend that keeps nothing (its diff the two set differences) is empty (what the kept
answers left out would show there); after a full sync at the end, a plan over everything
by such a backend is empty and Ranger's engine finds no user, access and resource wider than
the evaluator does. The service definition's implied grants are edited by hand too."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin
from pushdown_lab.ranger_standin.faults import Verdict

from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import RangerBackend
from tests.adversary import histories

from .probe import probe
from .test_ranger_findings_moved import world
from .world import backend_for

pytestmark = pytest.mark.ranger

OBJECTS = (
    "table sales.crm.orders",
    "table sales.crm.leads",
    "table sales.ops.runs",
    "schema sales.crm",
    "schema sales.ops",
)
EDITS = ("move", "unshape", "case", "delete", "members", "recreate", "implied")


def hand_edit(standin: Standin, edit: str, database: str) -> None:
    store = standin.store
    if edit == "implied":  # the service definition's update implies select and drop, or not
        sdef = store.service_def("hive")
        for access in sdef["accessTypes"]:
            if access["name"] == "update":
                access["impliedGrants"] = [] if access.get("impliedGrants") else ["select", "drop"]
        store.update_service_def("hive", sdef)
        return
    if edit in ("members", "recreate"):
        roles = [r for r in store.list_roles({}) if r["name"].startswith("pd_")]
        if not roles:
            return
        role = dict(sorted(roles, key=lambda r: r["name"])[0 if database == "crm" else -1])
        users = [{"name": "carol", "isAdmin": False}, {"name": "alice", "isAdmin": False}]
        if edit == "members":
            role["users"] = [*role.get("users", []), *users]
            store.update_role(role["id"], role)
        elif not store._role_in_use(role["name"]):  # Ranger refuses to delete a role in use
            store.delete_role(role["id"])
            store.create_role({"name": role["name"], "users": users}, create_missing=True)
        return
    ours = [
        p
        for p in store.list_policies({"serviceName": "hive"})
        if p["resources"].get("database", {}).get("values") == [database]
    ]
    if not ours:
        return
    policy = dict(sorted(ours, key=lambda p: p["id"])[0])
    resources = dict(policy["resources"])
    other = "ops" if database == "crm" else "crm"
    if edit == "delete":
        store.delete_policy(policy["id"])
        return
    values = {"move": [other], "unshape": [database, other], "case": [database.upper()]}[edit]
    resources["database"] = {**resources["database"], "values": values}
    policy["resources"] = resources
    try:
        store.update_policy(policy["id"], policy)
    except Exception:  # a policy of that resource set there already: refused, as Ranger does
        pass


steps = st.one_of(
    st.tuples(st.just("grant"), st.sampled_from(("reader", "writer")), st.sampled_from(OBJECTS)),
    st.tuples(st.just("deny"), st.sampled_from(("reader", "writer")), st.sampled_from(OBJECTS)),
    st.tuples(st.just("hand"), st.sampled_from(EDITS), st.sampled_from(("crm", "ops"))),
    st.tuples(st.just("refuse"), st.integers(1, 4), st.sampled_from((400, 403, 500))),
)


def refuse_write(standin: Standin, n: int, status: int) -> None:
    """The stand-in refuses its ``n``-th write from now (``status``), once; other requests
    are served."""
    faults = standin.faults
    take = faults.take
    left = [n]

    def taken(is_write: bool) -> Verdict:
        if is_write and left[0] > 0:
            left[0] -= 1
            if not left[0]:
                return Verdict(status=status)
        return take(is_write)

    faults.take = taken  # type: ignore[method-assign]


def plain(backend: RangerBackend) -> RangerBackend:
    """``backend``, its diff made of the two set differences (nothing kept apart)."""
    backend.apart = lambda desired, held, within=None: (desired - held, held - desired)  # type: ignore[method-assign]
    return backend


def play(standins: list[Standin], history: list[tuple[Any, ...]]) -> None:
    """``history`` synced by scope on each stand-in by its own backend (one process: what is
    kept for every backend is shared); hand edits and refusals on the first alone."""
    model = world().model
    backends = [backend_for(standin) for standin in standins]
    first = standins[0]
    for backend in backends:
        reconcile(backend, model, Scope.everything())
    refused = False
    for kind, *args in history:
        if kind == "hand":
            hand_edit(first, args[0], args[1])
            continue
        if kind == "refuse":
            refuse_write(first, args[0], args[1])
            refused = True
            continue
        obj = ObjectRef.parse(args[1])
        privilege, condition = ("SELECT_TABLE", "DENY") if kind == "deny" else ("MODIFY_TABLE", "ALLOW")
        events = ch.revoke_privileges(model, args[0], obj, [privilege], condition)
        events = events or ch.grant_privileges(model, args[0], obj, [privilege], condition)
        for event in events:
            model.apply(event)
        scope = Scope.union(scope_of(e) for e in events)
        for standin, backend in zip(standins, backends, strict=True):
            try:
                reconcile(backend, model, scope)
            except Exception:
                if not (refused and standin is first):
                    raise
                continue  # the sync may have stopped at the refusal: the next one is judged
            fresh = planner.plan(plain(backend_for(standin)), model, scope)
            assert fresh.empty, (history, [str(op) for op in fresh.ops][:6])
        if refused:
            refused = False
            del first.faults.take  # served again
    if refused:
        del first.faults.take
    for standin, backend in zip(standins, backends, strict=True):
        reconcile(backend, model, Scope.everything())
        plan = planner.plan(plain(backend_for(standin)), model, Scope.everything())
        assert plan.empty, (history, [str(op) for op in plan.ops][:6])
        result = probe(standin, model, "sales", ("alice", "bob", "carol", "stranger"))
        # narrower where the service definition's implied grants would widen a pair (a note)
        assert result.checks > 0 and result.wider == [], (history, result.mismatches[:5])


def test_scoped_syncs_over_hand_edits_leave_nothing_a_fresh_plan_of_their_scope_would_change() -> None:
    @settings(max_examples=histories(40), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(steps, min_size=1, max_size=8))
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as standin:
            play([standin], history)

    run()


def test_two_backends_in_one_process_each_leave_nothing_a_fresh_plan_of_their_scope_would_change() -> None:
    """Two Ranger servers synced in turn by two backends of one process: the implied-grants
    answer and the sets remembered by how they were made are kept for both."""

    @settings(max_examples=histories(20), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(steps, min_size=1, max_size=8))
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as one, Standin() as two:
            play([one, two], history)

    run()
