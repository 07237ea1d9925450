"""The kept roles moved by a membership (:func:`pushdown_ranger.factsets.kept_moved`) over
hostile histories synced by scope alone: batches applied at once (memberships of users
and of the group, the group's members, roles deleted and made again, a role's case twin,
a role granted and revoked to one user in one batch, table grants and DENYs beside them),
now and then a full sync, a refused write mid-sync, or a compile of another model in
another thread (the one kept memo taken from the backend's, its sets made again).

Every answer :func:`factsets.known` gives in the run (the plan's diff, the implied-grants
check, the read's index) equals the two set differences over every fact; so does every
pair of the latest compiles and the first (records replaced, kept sets moved twice or
more between them), compared from another thread while the next sync moves the kept
roles. Before each scoped sync its plan equals a fresh backend's; after it a fresh
backend's full plan is empty and Ranger's own engine decides every user as the evaluator
does. The kept roles' steps were used (not vacuous): the kept roles are spread (the
tests' ``SPREAD_FROM`` is 0)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Set
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import PermanentBackendError
from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger import compile as compile_module
from pushdown_ranger import factsets
from pushdown_ranger.compile import desired
from tests.adversary import histories

from .histories import estate, judged, played
from .test_ranger_table_focus import compile_with
from .test_ranger_table_focus import start as other_start
from .world import backend_for

pytestmark = pytest.mark.ranger

USERS = ("u1", "u2", "u3", "u4")
ROLES = ("r1", "r2", "r3", "R1")
OBJECTS = ("catalog c", "schema c.s1", "schema c.s2", "table c.s1.a", "table c.s2.b")

membership = st.one_of(
    st.tuples(st.just("role_user"), st.sampled_from(ROLES), st.sampled_from(USERS), st.booleans()),
    st.tuples(st.just("role_group"), st.sampled_from(ROLES), st.booleans()),
    st.tuples(st.just("member"), st.sampled_from(USERS), st.booleans()),
    st.tuples(st.sampled_from(("delete_role", "create_role")), st.sampled_from(ROLES)),
    st.tuples(st.sampled_from(("remove_user", "add_user")), st.sampled_from(USERS)),
)
grant = st.tuples(
    st.sampled_from(("grant", "grant", "revoke")),
    st.sampled_from(ROLES),
    st.sampled_from(OBJECTS),
    st.sampled_from(("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE")),
    st.sampled_from(("ALLOW", "ALLOW", "DENY")),
)
#: a batch of steps applied at once, then how it is synced
batch = st.tuples(
    st.lists(st.one_of(membership, membership, grant), min_size=1, max_size=4),
    st.sampled_from(("scoped", "scoped", "scoped", "full", "refused", "other", "two")),
)


def start() -> Model:
    b = estate(USERS, roles=ROLES[:3], schemas=("s1", "s2"), tables=("s1.a", "s2.b"))
    b.allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", "USE_SCHEMA", "SELECT_TABLE")
    b.allow("r2", "catalog c", "USE_CATALOG", "USE_SCHEMA").allow("r3", "catalog c", "USE_CATALOG")
    b.allow("r3", "schema c.s2", "USE_SCHEMA", "SELECT_TABLE").deny("r3", "table c.s2.b", "SELECT_TABLE")
    b.grant_role("r1", users=["u2"], groups=["g"]).grant_role("r2", users=["u3", "u4"])
    return b.grant_role("r3", users=["u4"]).model


class Watch:
    """:func:`factsets.known` checked at every call against the set differences, the calls
    the kept roles' steps answered counted; every set :func:`factsets.joined` made kept."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.kept_steps = 0
        self.made: list[Set[Fact]] = []
        known, joined = factsets.known, factsets.joined

        def checked(old: Set[Fact], new: Set[Fact]) -> tuple[Set[Fact], Set[Fact]] | None:
            found = known(old, new)
            if found is not None:
                a, b = factsets.whole(old), factsets.whole(new)
                assert (frozenset(found[0]), frozenset(found[1])) == (a - b, b - a)
                p, q = factsets.parts(old), factsets.parts(new)
                self.kept_steps += p is not None and q is not None and p[0] is not q[0]
            return found

        def kept(kept: Set[Fact], own: frozenset[Fact]) -> Any:
            facts = joined(kept, own)
            self.made.append(facts)
            return facts

        monkeypatch.setattr(factsets, "known", checked)
        monkeypatch.setattr(factsets, "joined", kept)
        # the compile calls joined by the name it imported
        monkeypatch.setattr(desired, "joined", kept)

    def every_pair(self) -> Callable[[], None]:
        """Every pair of the latest five compiles and the first one (sets remembered, or
        not any more), compared both ways (several times) from another thread, started:
        waited for and checked by the function returned (the caller syncs meanwhile, moving
        the kept roles and the steps remembered)."""
        made = self.made
        latest = [*made[:1], *made[-5:]]
        pairs = [(old, new) for i, old in enumerate(latest) for new in latest[i + 1 :]]
        errors: list[BaseException] = []

        def compare() -> None:
            try:
                for old, new in pairs * 5:
                    a, b = factsets.whole(old), factsets.whole(new)
                    assert factsets.differ(old, new) == (a - b, b - a)
                    assert factsets.differ(new, old) == (b - a, a - b)
            except BaseException as e:  # handed to the test's thread
                errors.append(e)

        thread = threading.Thread(target=compare)
        thread.start()

        def join() -> None:
            thread.join()
            assert not errors, errors

        return join


def aside(keep: bool, check: Callable[..., object], *args: Any) -> None:
    """``check`` (by fresh backends: each compile takes the one kept memo and principals);
    ``keep``: those put back after it, as when those backends ran in another process."""
    memo, who = list(desired._MEMO), list(compile_module._WHO)
    check(*args)
    if keep:
        desired._MEMO[:], compile_module._WHO[:] = memo, who


def same_plan(standin: Standin, model: Model, scope: Scope, got: Any, why: object) -> None:
    """A fresh backend plans ``scope`` as ``got``."""
    want = planner.plan(backend_for(standin, mapping_stable=True), model, scope)
    assert sorted(map(str, got.ops)) == sorted(map(str, want.ops)), why


def play(standin: Standin, batches: list[tuple[list[tuple[Any, ...]], str]], watch: Watch) -> None:
    backend = backend_for(standin, mapping_stable=True)
    model = start()
    reconcile(backend, model, Scope.everything())
    for steps, how in batches:
        events: list[Any] = []
        for step in steps:
            events += played(model, step) or []
        if not events:
            continue
        scope = Scope.union(scope_of(e) for e in events)
        why = (batches, steps, how)
        if how == "other":  # another model compiled in another thread: the memo taken from ours
            thread = threading.Thread(target=compile_with, args=(other_start().model, "identity", None, None))
            thread.start()
            thread.join()
        compared = watch.every_pair()  # in another thread, while this one compiles and syncs
        got = planner.plan(backend, model, scope)
        aside(how != "two", same_plan, standin, model, scope, got, why)
        if how == "refused":  # the writes after the first refused: the sync stops there
            standin.faults.fail_next(50, 400)
            try:
                reconcile(backend, model, scope)
            except PermanentBackendError:
                pass
            finally:
                standin.faults.clear()
        reconcile(backend, model, Scope.everything() if how == "full" else scope)
        compared()
        watch.every_pair()()  # with this sync's compiles
        aside(how != "two", lambda: judged(standin, backend_for(standin), model, USERS, why))  # noqa: B023


def test_kept_roles_moved_over_hostile_batches_answer_as_full_compiles(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    watch = Watch(monkeypatch)

    @settings(max_examples=histories(10), deadline=None, suppress_health_check=list(HealthCheck))
    @given(batches=st.lists(batch, min_size=2, max_size=6))
    # u3 joins r1 and leaves it again in one batch, beside a DENY; then r1 deleted and
    # made again, its case twin made, u1 joins it; a move, then a full sync, then a move
    @example(
        batches=[
            ([("role_user", "r1", "u3", True), ("role_user", "r1", "u3", False)], "scoped"),
            (
                [("role_user", "r2", "u1", True), ("grant", "r2", "table c.s1.a", "SELECT_TABLE", "DENY")],
                "scoped",
            ),
            ([("delete_role", "r1"), ("create_role", "r1"), ("create_role", "R1")], "scoped"),
            ([("role_user", "R1", "u1", True), ("role_user", "r1", "u1", True)], "full"),
            ([("member", "u3", True)], "other"),
            ([("role_user", "r3", "u2", True), ("role_group", "r2", True)], "refused"),
            ([("role_user", "r3", "u2", False)], "two"),
            ([("role_user", "r2", "u2", True), ("role_user", "r1", "u4", True)], "scoped"),
        ]
    )
    # r1's case twin made (r1 refused, its grants named by r3's Ranger role once r3 has
    # r1's holders), then the twin deleted: the scoped sync names r1 again where r3 stood
    @example(
        batches=[
            ([("role_group", "r1", False)], "scoped"),
            ([("member", "u4", True), ("create_role", "R1")], "scoped"),
            ([("member", "u2", True)], "scoped"),
            ([("role_group", "r1", True)], "scoped"),
            ([("role_group", "r3", True)], "scoped"),
            ([("delete_role", "R1")], "scoped"),
        ]
    )
    def run(batches: list[tuple[list[tuple[Any, ...]], str]]) -> None:
        with Standin() as standin:
            play(standin, batches, watch)

    run()
    with capsys.disabled():
        print(f"\nranger kept roles moved, answers of the kept roles' steps: {watch.kept_steps}")
    assert watch.kept_steps > 0, watch.kept_steps
