"""A kept split (:class:`~pushdown_ranger.compile.classes.KeptSplit`) under hostile
histories: the mapping and the deny-items option switched between compiles, the model
replaced by a copy (reloaded), compiles on the directory's view (``with_members``), the
directory's members moved, a role deleted and created again: every compile keeping the
classes equals one from scratch."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.errors import ModelError
from pushdown.model.directory import enforced
from pushdown.reconcile.scope import Scope, scope_of
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.tests.test_ranger_kept_classes import (
    FOCI,
    PLAIN,
    PRIVILEGES,
    ROLES,
    SCHEMAS,
    TABLES,
    UNREGISTERED,
    USERS,
    compile_with,
    events_for,
    focus_for,
    start,
)
from tests.adversary import MAPPINGS, histories, hostile_steps

steps = st.one_of(
    hostile_steps(
        roles=ROLES,
        users=USERS,
        objects=PLAIN,
        unregistered=UNREGISTERED,
        privileges=PRIVILEGES,
        schemas=SCHEMAS[:2],
        tables=TABLES,
        rename=True,
        external=True,
        grant_weight=4,
    ),
    st.tuples(st.just("admins"), st.lists(st.sampled_from(USERS), max_size=2, unique=True)),
)
#: (how, databases, deny items, mapping, reload the model first, compile on the directory's view)
compiles = st.tuples(
    st.sampled_from(("change", "databases", "databases", "whole")),
    st.lists(st.sampled_from(FOCI), min_size=1, max_size=2, unique=True).map(tuple),
    st.booleans(),
    st.sampled_from(tuple(MAPPINGS)),
    st.integers(0, 5),
    st.booleans(),
)


def play(history: list[tuple[Any, Any]], counts: dict[str, int]) -> None:
    """Each step (or bundle of steps, applied together) followed by its compile."""
    model, kept = start(False).model, KeptClasses()
    compile_with(model, "identity", None, True, kept)
    for bundle, (kind, dbs, deny, mapping, reload, view) in history:
        events = []
        for step in bundle if isinstance(bundle, list) else [bundle]:
            try:
                made = events_for(model, step)
                for event in made:
                    model.apply(event)
            except ModelError:
                continue
            events += made
        if reload == 0:
            model = copy.deepcopy(model)
        on = enforced(model) if view else model
        scope = Scope.union(scope_of(e) for e in events) if events else Scope.nothing()
        focus = focus_for(on, scope, (kind, dbs, deny))
        reused = kept.reused
        got = compile_with(on, mapping, focus, deny, kept)
        want = compile_with(on, mapping, focus, deny, None)
        assert got == want, (step, kind, dbs, deny, mapping, sorted(got.facts ^ want.facts, key=str))
        counts["compiles"] += 1
        counts["split kept"] += kept.reused - reused


def test_a_kept_split_under_hostile_histories_equals_a_compile_from_scratch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts = {"compiles": 0, "split kept": 0}

    @settings(max_examples=histories(150), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(st.tuples(steps, compiles), min_size=1, max_size=20))
    def run(history: list[tuple[tuple[Any, ...], Any]]) -> None:
        play(history, counts)

    run()
    with capsys.disabled():
        print(f"\nkept split, hostile: {counts}")
    assert counts["split kept"] > 0, counts


def test_bundled_changes_under_a_kept_split_equal_a_compile_from_scratch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Several changes between two compiles (two stamps of one role and none of another, a
    table dropped and created again, a role deleted and created again, an owner moved with
    a grant): the counts proving what moved are not fooled."""
    counts = {"compiles": 0, "split kept": 0}

    @settings(max_examples=histories(150), deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        history=st.lists(
            st.tuples(st.lists(steps, min_size=2, max_size=4), compiles), min_size=1, max_size=12
        )
    )
    def run(history: list[tuple[Any, Any]]) -> None:
        play(history, counts)

    run()
    with capsys.disabled():
        print(f"\nkept split, bundled: {counts}")
    assert counts["split kept"] > 0, counts
