"""The table focus of a scoped compile (``desired._tables_only``) through the directory's
view of the model (:func:`pushdown.model.directory.enforced`: a group's members the
directory reports, a new view object each time the model moves).

A view proves nothing of the model it was made from: each is another object, with its
own stamps (the members it adds are stamped anew each time), so the kept items of a
database (:class:`~pushdown_ranger.compile.classes.KeptItems`) and the grant chain
(:class:`~pushdown_ranger.compile.classes.GrantChain`) are not taken over through it and
the database is compiled whole. These histories check that the kept classes never make a
compile through a view wider (or narrower) than one from scratch, and that syncs by scope
alone through the view leave Ranger deciding as the evaluator does.

- Random histories of table grants and revokes, memberships and the directory's members
  joining and leaving the group: each step compiled over its database through the view,
  keeping the classes, equals the same compile from scratch, facts and notes.
- The same kind of histories synced by scope alone to the stand-in through the view:
  after each, a full plan from scratch is empty and Ranger 2.9's own engine decides every
  user (those the directory adds among them) as the evaluator does.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import ModelError
from pushdown.model.directory import enforced
from pushdown.reconcile.scope import Scope, scope_of
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.scoping import focus_of
from tests.adversary import histories, mapping_names

from .histories import events_for, judged, synced
from .test_ranger_table_focus import TABLES, USERS, compile_with, membership_steps, start, table_grants
from .world import backend_for

#: the directory's answer for the group moving: a user (one the model does not list
#: among them) joining or leaving it
external = st.tuples(st.just("external"), st.sampled_from((*USERS, "u5")), st.booleans())

steps = st.one_of(
    *[table_grants(TABLES[:3])] * 4,
    *[external] * 2,
    membership_steps(TABLES[:3]),
)


def play(mapping: str, history: list[tuple[Any, ...]], counts: dict[str, int], later: bool) -> None:
    """``start()`` compiled whole through its view, then each step compiled over its
    change's database (whole when it is no focus) through the view made after it, keeping
    the classes and from scratch: equal. ``later``: a step that is no focus (the
    directory's members moving, a membership) is not compiled: the next compile of a
    database follows it from the items kept before."""
    model, kept = start(capitals=True).model, KeptClasses()
    view = enforced(model)
    assert compile_with(view, mapping, None, kept) == compile_with(view, mapping, None, None)
    for step in history:
        try:
            events = events_for(model, step)
        except ModelError:
            continue
        for event in events:
            model.apply(event)
        view = enforced(model)
        scope = Scope.union(scope_of(e) for e in events) if events else Scope.nothing()
        focus = focus_of(scope.resolve(view), "c")
        if later and focus is None:
            continue
        before = kept.focused
        got = compile_with(view, mapping, focus, kept)
        want = compile_with(view, mapping, focus, None)
        assert got == want, (mapping, step, sorted(got.facts ^ want.facts, key=str), got.notes, want.notes)
        counts["compiles"] += 1
        if view is not model:
            counts["through a view"] += 1
            counts["tables alone through a view"] += kept.focused - before
        else:
            counts["tables alone"] += kept.focused - before


def test_a_focused_compile_through_the_directorys_view_equals_one_from_scratch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts = {"compiles": 0, "through a view": 0, "tables alone through a view": 0, "tables alone": 0}

    @settings(max_examples=histories(100), deadline=None, suppress_health_check=list(HealthCheck))
    @given(mapping=mapping_names, history=st.lists(steps, min_size=2, max_size=12), later=st.booleans())
    def run(mapping: str, history: list[tuple[Any, ...]], later: bool) -> None:
        play(mapping, history, counts, later)

    run()
    with capsys.disabled():
        print(f"\nranger tables' focus through the directory's view, random histories: {counts}")
    # not vacuous: compiles went through a view (the directory adding members)
    assert counts["through a view"] > 0, counts


@pytest.mark.ranger
def test_scoped_syncs_through_the_directorys_view_agree_with_rangers_engine() -> None:
    """Histories synced by scope alone to the stand-in, each sync given the directory's
    view of the model made after the step: a full plan from scratch is empty and Ranger's
    own engine decides every user as the evaluator does."""
    viewed = [0]

    @settings(max_examples=histories(15), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(steps, min_size=2, max_size=10))
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as standin:
            backend = backend_for(standin, mapping_stable=True)
            for step, model in synced(backend, start().model, history, view=enforced):
                viewed[0] += bool(model.external_members)
                judged(standin, backend_for(standin), model, (*USERS, "u5"), (history, step))

    run()
    assert viewed[0] > 0, viewed


def test_a_directory_member_joining_before_a_table_grant_is_decided_through_the_view() -> None:
    """The directory's member joins the group (a user the model lists, and one it does
    not), not compiled then; a table grant in the database the group's role reads follows,
    compiled over it through the new view: equal to a compile from scratch, the member
    named there. A focus taken through the view as if nobody's roles moved (its kept items
    made through the view before) leaves the member out: narrower, and caught here."""
    counts = {"compiles": 0, "through a view": 0, "tables alone through a view": 0, "tables alone": 0}
    grant_a = ("grant", "r3", "table c.s1.a", "MODIFY_TABLE", "ALLOW")
    grant_b = ("grant", "r3", "table c.s1.b", "MODIFY_TABLE", "ALLOW")
    play("identity", [("external", "u5", True), grant_a], counts, True)
    play("identity", [("external", "u3", True), grant_a, ("external", "u4", True), grant_b], counts, True)
    assert counts["through a view"] == 3, counts
