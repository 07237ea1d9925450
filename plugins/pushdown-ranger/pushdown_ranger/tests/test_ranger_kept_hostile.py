"""What a backend keeps between calls (the kept identity, principals and refused roles
while the roster stamps stand, the sets :mod:`pushdown_ranger.factsets` remembers, the
plan's diff moved from the last one, :class:`ReadIndex`) over hostile histories: two
backends on two Ranger services in one process (the module-level kept answers shared),
hand edits in Ranger between syncs (a read fresh after a read-back was moved), dry runs
of older and current copies of the model between applying syncs, users and roles added
and removed. Each scoped sync leaves nothing a fresh backend's plan of the same scope
would do; each dry run plans exactly what a fresh backend plans."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import PermanentBackendError
from pushdown.model.principals import Principal
from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import RangerBackend
from tests.adversary import histories

from .histories import judged, played
from .probe import probe
from .test_ranger_scoped_histories import USERS, live, start, steps
from .world import backend_for

pytestmark = pytest.mark.ranger

ANY = {"values": ["*"], "isExcludes": False, "isRecursive": False}
HAND = ("drop policy", "add member", "drop members", "pin role")

hostile = st.one_of(
    st.tuples(st.just("a"), steps),
    st.tuples(st.just("b"), steps),
    st.tuples(st.just("hand"), st.sampled_from(HAND), st.integers(0, 7), st.sampled_from(USERS)),
    st.tuples(st.just("dry"), st.integers(0, 7)),
    st.tuples(st.just("refuse"), st.integers(1, 3)),
)


def hand_edit(standin: Standin, kind: str, which: int, user: str) -> None:
    """By hand in Ranger: one of pushdown's Hive policies deleted, a user added to one of
    pushdown's roles, or a pushdown role's users all taken out."""
    store = standin.store
    if (
        kind == "pin role"
    ):  # a hand-made policy names one of pushdown's roles: Ranger then refuses its deletion
        name = f"hand pin {which}"
        if store.list_policies({"policyName": name}):
            return
        role = ("pd_r1", "pd_r2", "pd_r3", "pdu_" + user)[which % 4]
        resources = {"database": {"values": [f"hand{which}"]}, "table": ANY, "column": ANY}
        item = {"roles": [role], "accesses": [{"type": "select"}]}
        body = {"service": "hive", "name": name, "resources": resources, "policyItems": [item]}
        store.create_policy(body, create_missing=True)
        return
    if kind == "drop policy":
        ours = sorted(
            (p for p in store.list_policies({"serviceName": "hive"}) if "pushdown" in p["name"]),
            key=lambda p: p["id"],
        )
        if ours:
            store.delete_policy(ours[which % len(ours)]["id"])
        return
    roles = sorted(
        (r for r in store.list_roles({}) if r["name"].startswith(("pd_", "pdu_"))), key=lambda r: r["id"]
    )
    if not roles:
        return
    role = dict(roles[which % len(roles)])
    if kind == "add member":
        role["users"] = [*role.get("users", []), {"name": user, "isAdmin": False}]
    else:
        role["users"] = []
    store.update_role(role["id"], role)


class Side:
    """One Ranger service and its model, synced by a backend that keeps what it keeps."""

    def __init__(self, standin: Standin) -> None:
        self.standin = standin
        self.backend = backend_for(standin, mapping_stable=True)
        self.model = start().model
        reconcile(self.backend, live(self.model), Scope.everything())
        #: requests refused (400) once the next sync starts writing
        self.refuse = 0
        apply = self.backend.apply

        def refusing(plan: Any, snapshot: Any, progress: Any) -> Any:
            if self.refuse:
                standin.faults.fail_next(self.refuse, 400)
                self.refuse = 0
            try:
                return apply(plan, snapshot, progress)
            finally:
                standin.faults.clear()

        self.backend.apply = refusing  # type: ignore[method-assign]

    def fresh(self) -> RangerBackend:
        return backend_for(self.standin, mapping_stable=True)

    def step(self, step: tuple[Any, ...], why: object) -> Model | None:
        events = played(self.model, step)
        if not events:
            return None
        seen = live(self.model)
        scope = Scope.union(scope_of(e) for e in events)
        before = probe(self.standin, seen, "c", (*USERS, "stranger")).wider if self.refuse else None
        try:
            reconcile(self.backend, seen, scope)
        except PermanentBackendError:  # some writes refused (a role a hand-made policy names)
            after_refusal(self.standin, self.backend, self.fresh, seen, scope, why, before)
            return seen
        left = planner.plan(self.fresh(), seen, scope)
        assert left.empty, (why, "left by the scoped sync", [str(op) for op in left.ops][:6])
        return seen


def after_refusal(
    standin: Standin,
    kept: RangerBackend,
    fresh: Any,
    seen: Model,
    scope: Scope,
    why: object,
    before: list[Any] | None = None,
    mapped: Callable[[str], str] = str,
) -> None:
    """After a sync whose writes were partly refused, Ranger's engine allows nobody more
    than it did before the sync (``before``: the answers wider than the model then, such
    as a hand edit's outside the scope); the kept backend's plan of the same
    scope does everything a fresh backend's does; it may do more: the refused writes it
    remembers and a fresh backend's scope cannot find (a policy left naming a role that a
    removed user held, in a database the removal no longer leads to), each of them in a
    fresh backend's full plan (work the model asks for, never a kept answer gone stale)."""
    if before is not None:  # what the sync found wider (a hand edit's, say), at most, stays so
        wider = probe(standin, seen, "c", (*USERS, "stranger"), mapped=mapped).wider
        assert set(wider) <= set(before), (
            why,
            "after a refused write: wider",
            sorted(set(wider) - set(before)),
        )
    got = set(ops(planner.plan(kept, seen, scope)))
    want = set(ops(planner.plan(fresh(), seen, scope)))
    assert want <= got, (why, "after a refused write: missed", sorted(want - got))
    more = got - want
    if more:
        full = set(ops(planner.plan(fresh(), seen, Scope.everything())))
        assert more <= full, (why, "after a refused write: not the model's", sorted(more - full))


def unpin(standin: Standin) -> None:
    """The hand-made policies naming pushdown's roles deleted (the full sync may then
    delete those roles)."""
    for policy in standin.store.list_policies({"serviceName": "hive"}):
        if policy["name"].startswith("hand pin"):
            standin.store.delete_policy(policy["id"])


def ops(plan: Any) -> list[str]:
    return sorted(str(op) for op in plan.ops)


def test_kept_answers_over_hostile_histories_on_two_backends_equal_a_fresh_backends() -> None:
    @settings(max_examples=histories(12), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(hostile, min_size=2, max_size=12))
    # drawn once (28 November 2026): the refused write is the deletion of r1's policy on
    # s1, which a fresh backend's scope of u2's removal no longer reaches
    @example(
        history=[
            ("a", ("role_group", "r1", False)),
            ("refuse", 1),
            ("hand", "drop policy", 0, "u1"),
            ("a", ("remove_user", "u2")),
        ]
    )
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as one, Standin() as two:
            a, b = Side(one), Side(two)
            pool: list[Model] = [copy.deepcopy(live(a.model))]
            for step in history:
                kind = step[0]
                if kind == "hand":
                    hand_edit(one, step[1], step[2], step[3])
                elif kind == "refuse":
                    a.refuse = step[1]
                elif kind == "dry":
                    seen = pool[step[1] % len(pool)]
                    got = planner.plan(a.backend, seen, Scope.everything())
                    want = planner.plan(a.fresh(), seen, Scope.everything())
                    assert ops(got) == ops(want), (history, step)
                else:
                    side = a if kind == "a" else b
                    seen = side.step(step[1], (history, step))
                    if seen is not None and side is a:
                        pool.append(copy.deepcopy(seen))
            unpin(one)
            a.refuse = 0
            for side in (a, b):
                reconcile(side.backend, live(side.model), Scope.everything())
                judged(side.standin, side.fresh(), live(side.model), USERS, history)

    run()


def realm(principal: Principal) -> str:
    """A realm name; ``u3`` maps to ``u1``'s (the two refused on this backend alone)."""
    name = "u1" if principal.name == "u3" else principal.name
    return name + "@CORP"


def _realm_user(user: str) -> str:
    return realm(Principal.user(user))


shared_steps = st.one_of(
    st.tuples(st.just("model"), steps),
    st.tuples(st.sampled_from(("sync a", "sync b", "dry a", "dry b"))),
    st.tuples(st.just("hand"), st.sampled_from(HAND), st.integers(0, 7), st.sampled_from(USERS)),
)


def test_one_model_on_two_backends_with_two_mappings_equals_fresh_backends() -> None:
    """One model object, its catalog mirrored on two Ranger services by two backends (the
    second maps every user to a realm name, two users to one: refused there alone): each
    syncs the scopes of the changes since its own last sync, so what one backend kept over
    the model object (the roster stamps, the kept roles' memberships, the principals) is
    never the other's."""

    @settings(max_examples=histories(12), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(shared_steps, min_size=2, max_size=14))
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as one, Standin() as two:
            model = start().model
            maps = {"a": None, "b": realm}
            stand = {"a": one, "b": two}

            def fresh(side: str) -> RangerBackend:
                return backend_for(stand[side], maps[side], mapping_stable=True)

            kept = {side: fresh(side) for side in ("a", "b")}
            due: dict[str, list[Scope]] = {"a": [], "b": []}
            for side in ("a", "b"):
                reconcile(kept[side], live(model), Scope.everything())
            for step in history:
                kind = step[0]
                if kind == "model":
                    events = played(model, step[1])
                    if events:
                        for side in due:
                            due[side].append(Scope.union(scope_of(e) for e in events))
                elif kind == "hand":
                    hand_edit(one, step[1], step[2], step[3])
                elif kind.startswith("dry"):
                    side = kind[-1]
                    seen = live(model)
                    got = planner.plan(kept[side], seen, Scope.everything())
                    want = planner.plan(fresh(side), seen, Scope.everything())
                    assert ops(got) == ops(want), (history, step)
                else:
                    side = kind[-1]
                    if not due[side]:
                        continue
                    seen, scope = live(model), Scope.union(due[side])
                    due[side] = []
                    try:
                        reconcile(kept[side], seen, scope)
                    except PermanentBackendError:  # some writes refused
                        after_refusal(
                            stand[side],
                            kept[side],
                            functools.partial(fresh, side),
                            seen,
                            scope,
                            (history, step),
                            mapped=str if maps[side] is None else _realm_user,
                        )
                        continue
                    left = planner.plan(fresh(side), seen, scope)
                    assert left.empty, (history, step, [str(op) for op in left.ops][:6])
            unpin(one)
            for side in ("a", "b"):
                reconcile(kept[side], live(model), Scope.everything())
                left = planner.plan(fresh(side), live(model), Scope.everything())
                assert left.empty, (history, side, [str(op) for op in left.ops][:6])
            judged(one, fresh("a"), live(model), USERS, history)

    run()


def test_a_plan_of_a_set_changed_in_place_since_the_last_plan_removes_what_it_no_longer_holds() -> None:
    """Two plans of one mutable desired set (``plan.diff`` keys the facts of ``set`` and
    ``frozenset`` alike, and passes both to ``Backend.apart``): ``pd_r1`` wanted and held,
    then no longer wanted. The second plan must remove it, as the two set differences do."""
    from pushdown.reconcile.plan import diff
    from pushdown_ranger.facts import RoleFact

    with Standin() as standin:
        backend = backend_for(standin, mapping_stable=True)
        role = RoleFact("pd_r1", frozenset({"u1"}))
        desired, held = {role}, {role}
        assert diff("rg", desired, held, Scope.everything(), apart=backend.apart).empty
        desired.discard(role)  # the same set object, changed in place
        plain = diff("rg", desired, held, Scope.everything())
        assert [op.action for op in plain.ops] == ["remove"]
        kept = diff("rg", desired, held, Scope.everything(), apart=backend.apart)
        assert [str(op) for op in kept.ops] == [str(op) for op in plain.ops]
