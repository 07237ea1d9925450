"""The table focus's proof by key (:attr:`Model.folds`, :attr:`Model.marked_leaves`,
:attr:`Model.held_stamps`) on every path that moves what it reads: random histories of
table grants among schema and catalog renames (to and from spellings that fold alike:
``S1``, ``ſ1``, the Kelvin sign's ``K1``), topics and filesets registered, named late,
renamed and dropped, indexes rebuilt in place (as a rename or a load does), models
copied, pickled and forked (a copy changed, then the original compiled again). After
each step the compile keeping the classes equals one from scratch, over the step's
focus and over ``s1`` alone; and the model's indexes equal those of a copy rebuilt."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.errors import ModelError
from pushdown.model import events as ev
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope, scope_of
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.scoping import focus_of
from tests.adversary import histories, mapping_names
from tests.builders import Builder
from tests.model.test_folds import _folds, _marked_leaves

from .histories import events_for
from .test_ranger_table_focus import compile_with, start, steps

T = SecurableType
#: spellings of ``s1`` a case-blind server takes for it (and ones it does not)
SCHEMAS = ("s1", "s2", "S1", "ſ1", "k1", "K1", "\u212a1", "ss1", "ß1")
LEAVES = ("topic c.s1.t", "topic c.S1.t", "fileset c.s2.f", "fileset c.ſ1.f", "topic c.k1.t")
S1 = frozenset({ObjectRef(T.SCHEMA, ("c", "s1"))})


def _ref(text: str) -> ObjectRef:
    return ObjectRef.parse(text)


extra = st.one_of(
    st.tuples(st.just("rename_schema"), st.sampled_from(SCHEMAS), st.sampled_from(SCHEMAS)),
    st.tuples(st.just("rename_catalog")),
    st.tuples(st.just("rename_leaf"), st.sampled_from(LEAVES), st.sampled_from(SCHEMAS)),
    st.tuples(st.sampled_from(("create_leaf", "drop_leaf")), st.sampled_from(LEAVES)),
    st.tuples(
        st.just("grant_leaf"),
        st.sampled_from(LEAVES),
        st.sampled_from(("r1", "r2", "r3")),
        st.sampled_from((Condition.ALLOW, Condition.DENY)),
    ),
    st.tuples(st.just("grant_twin"), st.sampled_from(SCHEMAS), st.sampled_from(("r1", "r2", "r3"))),
    st.tuples(st.just("create_twin"), st.sampled_from(SCHEMAS)),
    st.tuples(st.sampled_from(("reindex", "pickle", "deepcopy", "fork"))),
)
path_steps = st.one_of(steps, steps, extra)

_LEAF_PRIVILEGE = {T.TOPIC: "CONSUME_TOPIC", T.FILESET: "READ_FILESET"}


def extra_events(model: Model, step: tuple[Any, ...]) -> list[Any] | None:
    """The events of an extra step (``None``: not one of them)."""
    kind, *args = step
    if kind == "rename_schema":
        old, new = (ObjectRef(T.SCHEMA, ("c", s)) for s in args)
        if old not in model.objects or new in model.objects or old == new:
            return []
        return [ev.ObjectRenamed(old, new)]
    if kind == "rename_catalog":
        c, x = ObjectRef(T.CATALOG, ("c",)), ObjectRef(T.CATALOG, ("x",))
        return [ev.ObjectRenamed(c, x)] if c in model.objects else [ev.ObjectRenamed(x, c)]
    if kind == "rename_leaf":
        leaf = _ref(args[0])
        new = ObjectRef(leaf.type, ("c", args[1], leaf.names[2]))
        if leaf not in model.objects or new in model.objects or new == leaf:
            return []
        return [ev.ObjectRenamed(leaf, new)]
    if kind in ("create_leaf", "create_twin"):
        obj = _ref(args[0]) if kind == "create_leaf" else ObjectRef(T.SCHEMA, ("c", args[0]))
        if obj in model.objects:
            return []
        parent = obj.parent
        out: list[Any] = []
        if parent is not None and parent.type is T.SCHEMA and parent not in model.objects:
            out.append(ev.ObjectCreated(parent))
        return [*out, ev.ObjectCreated(obj)]
    if kind == "drop_leaf":
        leaf = _ref(args[0])
        return [ev.ObjectDropped(leaf)] if leaf in model.objects else []
    if kind == "grant_leaf":
        leaf, role, condition = _ref(args[0]), args[1], args[2]
        if role not in model.roles:
            return []
        privilege = frozenset({Privilege(_LEAF_PRIVILEGE[leaf.type])})
        return [ev.PrivilegesGranted(role, leaf, privilege, condition)]
    if kind == "grant_twin":
        role = args[1]
        if role not in model.roles:
            return []
        table = ObjectRef(T.TABLE, ("c", args[0], "a"))
        return [ev.PrivilegesGranted(role, table, frozenset({Privilege("SELECT_TABLE")}), Condition.ALLOW)]
    return None


def _indexes(model: Model) -> tuple[Any, ...]:
    return (model.folds, model.marked_leaves, model.marks, model.kids, model.capitals, model.leaves)


def _check_indexes(model: Model) -> None:
    """The indexes equal a scan (``tests/model/test_folds.py``'s) and a copy rebuilt."""
    assert model.folds == _folds(model)
    assert model.marked_leaves == _marked_leaves(model)
    again = copy.deepcopy(model)
    again.reindex()
    assert _indexes(model) == _indexes(again)


def _compare(model: Model, mapping: str, focus: Any, kept: KeptClasses, why: Any) -> None:
    got = compile_with(model, mapping, focus, kept)
    want = compile_with(model, mapping, focus, None)
    assert got == want, (why, sorted(got.facts ^ want.facts, key=str), got.notes, want.notes)


def play_paths(mapping: str, history: list[tuple[Any, ...]], counts: dict[str, int]) -> None:
    model, kept = start(capitals=True).model, KeptClasses()
    compile_with(model, mapping, None, kept)
    for i, step in enumerate(history):
        why = (mapping, history[: i + 1])
        kind = step[0]
        events: list[Any] = []
        if kind == "reindex":
            model.reindex()
        elif kind == "pickle":
            model = pickle.loads(pickle.dumps(model))
        elif kind == "deepcopy":
            model = copy.deepcopy(model)
        elif kind == "fork":
            # a copy changed on the catalog's and the database's grants and compiled with
            # the same kept classes, then the original (unchanged) compiled again
            other = copy.deepcopy(model)
            for obj in (ObjectRef(T.CATALOG, ("c",)), ObjectRef(T.SCHEMA, ("c", "s1"))):
                if "r2" in other.roles:
                    other.apply(
                        ev.PrivilegesGranted(
                            "r2", obj, frozenset({Privilege("SELECT_TABLE")}), Condition.ALLOW
                        )
                    )
            _compare(other, mapping, S1, kept, why)
        else:
            try:
                made = extra_events(model, step)
                events = made if made is not None else events_for(model, step)
            except ModelError:
                continue
            for event in events:
                model.apply(event)
        scope = Scope.union(scope_of(e) for e in events) if events else Scope.nothing()
        focus = focus_of(scope.resolve(model), "c")
        before = kept.focused
        _compare(model, mapping, focus, kept, why)
        _compare(model, mapping, S1, kept, why)
        _check_indexes(model)
        counts["compiles"] += 1
        counts["tables alone"] += kept.focused - before


def test_focused_compiles_on_every_path_equal_ones_from_scratch() -> None:
    counts = {"compiles": 0, "tables alone": 0}

    @settings(max_examples=histories(120), deadline=None, suppress_health_check=list(HealthCheck))
    @given(mapping=mapping_names, history=st.lists(path_steps, min_size=1, max_size=12))
    def run(mapping: str, history: list[tuple[Any, ...]]) -> None:
        play_paths(mapping, history, counts)

    run()
    assert counts["tables alone"] > 0, counts


def swapped_schema(counts: dict[str, int]) -> None:
    """Database ``s1`` owned by ``u2`` (no grant on it) and ``s9`` of the same tables owned
    by ``u1``: ``s1`` compiled, then ``s1`` renamed away and ``s9`` renamed to ``s1`` (the
    same tables, by name, under another owner), and a table grant compiled over ``s1``: as
    from scratch (the database's stamp is new: its owner is compared, not taken as
    unmoved)."""
    b = Builder().users("u1", "u2", "u3").catalog("c", backend="rg").role("r1").role("r3")
    b.schema("c.s1", owner="u2").table("c.s1.a").table("c.s1.b")
    b.schema("c.s9", owner="u1").table("c.s9.a").table("c.s9.b")
    b.allow("r1", "catalog c", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    b.grant_role("r1", users=["u1", "u2", "u3"]).grant_role("r3", users=["u3"])
    model, kept = b.model, KeptClasses()
    compile_with(model, "identity", None, kept)
    table = ObjectRef(T.TABLE, ("c", "s1", "a"))
    grant = ev.PrivilegesGranted("r3", table, frozenset({Privilege("MODIFY_TABLE")}), Condition.ALLOW)
    model.apply(grant)
    before = kept.focused
    _compare(model, "identity", S1, kept, "first grant")
    schema = ObjectRef(T.SCHEMA, ("c", "s1"))
    model.apply(ev.ObjectRenamed(schema, ObjectRef(T.SCHEMA, ("c", "s8"))))
    model.apply(ev.ObjectRenamed(ObjectRef(T.SCHEMA, ("c", "s9")), schema))
    model.apply(grant)
    _compare(model, "identity", S1, kept, "after the swap")
    counts["tables alone"] += kept.focused - before


def test_a_database_renamed_onto_another_is_compared_not_taken_by_its_stamp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = {"tables alone": 0}
    swapped_schema(counts)
    assert counts["tables alone"] >= 1, counts
    # a rebuild that kept the stamps it had: the swapped database's stamp stands, wider
    kept_stamps = Model.reindex

    def reindex(model: Model) -> None:
        old = dict(model.held_stamps)
        kept_stamps(model)
        model.held_stamps.update((o, s) for o, s in old.items() if o in model.held_stamps)

    with monkeypatch.context() as m:
        m.setattr(Model, "reindex", reindex)
        with pytest.raises(AssertionError):
            swapped_schema({"tables alone": 0})
