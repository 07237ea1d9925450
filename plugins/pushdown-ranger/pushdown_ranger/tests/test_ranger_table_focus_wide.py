"""A compile of one Hive database's moved tables alone (:func:`pushdown_ranger.compile.desired._tables_only`)
against a compile from scratch, over histories wider than ``test_ranger_table_focus.py``'s:
batches of several steps compiled at once (a grant beside an owner, a membership, an admin),
owners and grants on the metalake and the catalog, DENYs on tables, and whole compiles
between the focused ones. What the focus got wrong is a plain test here, each with the
fixed history that showed it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import ModelError
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.scoping import focus_of
from tests.adversary import histories, hostile_steps, mapping_names

from .histories import events_for, synced
from .test_ranger_table_focus import CAPITALS, PRIVILEGES, ROLES, TABLES, USERS, compile_with, start
from .world import backend_for

Step = tuple[Any, ...]

OBJECTS = ("metalake", "catalog c", "schema c.s1", "schema c.s2", *TABLES[:3])

table_steps = st.tuples(
    st.sampled_from(("grant", "grant", "revoke")),
    st.sampled_from(ROLES),
    st.sampled_from((*TABLES[:3], *TABLES[:3], *CAPITALS)),
    st.sampled_from(PRIVILEGES),
    st.sampled_from(("ALLOW", "ALLOW", "ALLOW", "DENY")),
)
wide_steps = st.one_of(
    *[table_steps] * 6,
    hostile_steps(
        roles=ROLES,
        users=USERS,
        objects=OBJECTS,
        unregistered=("table c.s1.x",),
        privileges=("USE_CATALOG", "USE_SCHEMA", *PRIVILEGES),
        schemas=("s1", "s2"),
        tables=("a", "b", "c"),
        rename=True,
        external=True,
    ),
    st.tuples(st.just("owner"), st.sampled_from(OBJECTS), st.sampled_from(USERS)),
    st.tuples(st.just("admins"), st.lists(st.sampled_from(USERS), max_size=1, unique=True)),
)
#: a batch of steps applied at once, and whether a whole compile follows its focused one
batches = st.tuples(st.lists(wide_steps, min_size=1, max_size=3), st.booleans())


def play(mapping: str, history: list[tuple[list[Step], bool]], counts: dict[str, int]) -> None:
    model, kept = start(capitals=True).model, KeptClasses()
    compile_with(model, mapping, None, kept)
    for batch, whole in history:
        events: list[Any] = []
        for step in batch:
            try:
                mine = events_for(model, step)
            except ModelError:
                continue
            for event in mine:
                model.apply(event)
            events += mine
        scope = Scope.union(scope_of(e) for e in events) if events else Scope.nothing()
        focus = focus_of(scope.resolve(model), "c")
        before = kept.focused
        got = compile_with(model, mapping, focus, kept)
        want = compile_with(model, mapping, focus, None)
        assert got == want, (mapping, batch, sorted(map(str, got.facts ^ want.facts)))
        counts["tables alone"] += kept.focused - before
        if whole:
            compile_with(model, mapping, None, kept)


def test_batches_of_hostile_steps_compile_as_from_scratch() -> None:
    counts = {"tables alone": 0}

    @settings(max_examples=histories(100), deadline=None, suppress_health_check=list(HealthCheck))
    @given(mapping=mapping_names, history=st.lists(batches, min_size=1, max_size=8))
    def run(mapping: str, history: list[tuple[list[Step], bool]]) -> None:
        play(mapping, history, counts)

    run()
    assert counts["tables alone"] > 0, counts


def focused_and_scratch(
    model: Any, kept: KeptClasses, schema: str, batch: list[Step]
) -> tuple[Any, Any, int]:
    """``batch`` applied, then ``schema`` compiled keeping the classes and from scratch;
    with how many compiles took the moved tables alone."""
    for step in batch:
        for event in events_for(model, step):
            model.apply(event)
    focus = frozenset({ObjectRef(SecurableType.SCHEMA, ("c", schema))})
    before = kept.focused
    got = compile_with(model, "identity", focus, kept)
    return got, compile_with(model, "identity", focus, None), kept.focused - before


def test_a_first_grant_in_a_capitalised_database_pushes_what_a_compile_from_scratch_refuses() -> None:
    """``c.S9`` carries no grant or owner: its every-table item is pushed. A grant on its
    table makes it carry one: from scratch nothing is pushed there (a note says why); the
    focused compile took the table alone and kept the every-table select of ``r1``."""
    b = start().schema("c.S9").table("c.S9.t")
    b.allow("r1", "catalog c", "SELECT_TABLE", "USE_SCHEMA")
    model, kept = b.model, KeptClasses()
    compile_with(model, "identity", None, kept)
    got, want, _ = focused_and_scratch(
        model, kept, "S9", [("grant", "r3", "table c.S9.t", "SELECT_TABLE", "ALLOW")]
    )
    assert not any("database=S9" in str(f) for f in want.facts)  # the refusal, from scratch
    assert got == want, sorted(map(str, got.facts ^ want.facts))


@pytest.mark.ranger
def test_a_scoped_sync_of_a_first_grant_in_a_capitalised_database_leaves_what_scratch_removes() -> None:
    b = start().schema("c.S9").table("c.S9.t")
    b.allow("r1", "catalog c", "SELECT_TABLE", "USE_SCHEMA")
    step = ("grant", "r3", "table c.S9.t", "SELECT_TABLE", "ALLOW")
    with Standin() as standin:
        backend = backend_for(standin, mapping_stable=True)
        for _, model in synced(backend, b.model, [step]):
            plan = planner.plan(backend_for(standin), model, Scope.everything())
            assert plan.empty, [str(op) for op in plan.ops]
