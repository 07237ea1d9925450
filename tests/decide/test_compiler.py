"""The entitlement compiler equals the evaluator: differential tests on random models.

For every user (and one the model does not know), every compilable operation and every
held object of the operation's type — plus a stand-in new child under every held
container — ``Entitlements.allowed`` must equal ``authorize``; every ``Coverage`` must
agree with it child by child; every container below which something is allowed must be
listed by ``View.containers``. The same on random scopes (a subset of users, a few
subtrees). Counts are printed so a run shows how much it compared.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.decide.compiler import EntitlementCompiler, Entitlements
from pushdown.decide.decider import compilable
from pushdown.decide.evaluator import Evaluator
from pushdown.decide.inventory import Inventory, generic_child
from pushdown.decide.requirements import OPERATIONS, Can
from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import SUPPORTED_ON, Condition, Privilege
from pushdown.model.securables import LEAF_TYPES, METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from tests import builders

T = SecurableType


def _compilable(name: str) -> bool:
    try:
        compilable(name)
    except ModelError:
        return False
    return True


OPS = sorted(name for name in OPERATIONS if _compilable(name))
TABLE_OPS = ["load_table", "alter_table", "drop_table", "create_table", "load_schema", "drop_schema"]

USERS = ["ann", "bob", "cy", "dee"]
ROLES = ["r1", "r2", "r3", "r4"]
GROUPS = ["g1", "g2"]
CATALOGS = ["c1", "c2"]
SCHEMAS = ["s1", "s.2"]
LEAVES = ["t1", "t2", "t`3"]


def _objects() -> list[ObjectRef]:
    out: list[ObjectRef] = []
    for c in CATALOGS:
        out.append(ObjectRef(T.CATALOG, (c,)))
        for s in SCHEMAS:
            out.append(ObjectRef(T.SCHEMA, (c, s)))
            out += [ObjectRef(T.TABLE, (c, s, t)) for t in LEAVES]
            out.append(ObjectRef(T.TOPIC, (c, s, "tp")))
    return out


ALL_OBJECTS = _objects()


def _grantable(obj: ObjectRef) -> list[Privilege]:
    return sorted(p for p, types in SUPPORTED_ON.items() if obj.type in types)


@st.composite
def odd_models(draw: st.DrawFn) -> Model:
    """Beyond the shared builder's models: names with dots and backticks, topics, every
    grantable privilege at every level, an open gate so DENY and ALLOW below it matter."""
    model = Model()

    def do(events: list) -> None:  # type: ignore[type-arg]
        for e in events:
            model.apply(e)

    users = draw(st.lists(st.sampled_from(USERS), min_size=1, max_size=4, unique=True))
    for u in users:
        do(ch.add_user(model, u))
    registered = draw(st.lists(st.sampled_from(ALL_OBJECTS), max_size=12, unique=True))
    for obj in sorted({a for o in registered for a in o.path if a != METALAKE}, key=lambda o: len(o.names)):
        do(ch.create_object(model, obj, draw(st.sampled_from([None, *users]))))
    for group in draw(st.lists(st.sampled_from(GROUPS), max_size=2, unique=True)):
        do(ch.add_group(model, group, draw(st.lists(st.sampled_from(users), max_size=3, unique=True))))
    catalogs = [o for o in model.objects if o.type is T.CATALOG]
    targets = [METALAKE, *(o for o in ALL_OBJECTS if o.ancestor(T.CATALOG) in catalogs)]
    for role in draw(st.lists(st.sampled_from(ROLES), min_size=1, max_size=4, unique=True)):
        do(ch.create_role(model, role))
        for _ in range(draw(st.integers(0, 6))):
            obj = draw(st.sampled_from(targets))
            privs = draw(st.lists(st.sampled_from(_grantable(obj)), min_size=1, max_size=3, unique=True))
            cond = draw(st.sampled_from([Condition.ALLOW, Condition.ALLOW, Condition.DENY]))
            do(ch.grant_privileges(model, role, obj, privs, cond))
        holders = [Principal.user(u) for u in users] + [Principal.group(g) for g in model.groups]
        for who in draw(st.lists(st.sampled_from(holders), max_size=3, unique=True)):
            do(ch.grant_role(model, role, who))
    if draw(st.booleans()):  # the gates open for everyone, so DENY and ALLOW below them matter
        do(ch.create_role(model, "gates"))
        gate_at = draw(st.sampled_from([METALAKE, *catalogs])) if catalogs else METALAKE
        do(ch.grant_privileges(model, "gates", gate_at, ["USE_CATALOG", "USE_SCHEMA"]))
        for u in users:
            do(ch.grant_role(model, "gates", Principal.user(u)))
    if draw(st.booleans()):
        do(ch.set_owner(model, METALAKE, draw(st.sampled_from(users))))
    do(ch.set_service_admins(model, draw(st.lists(st.sampled_from(users), max_size=1))))
    known = sorted(model.objects)
    changed = draw(st.lists(st.sampled_from(known), max_size=2, unique=True)) if known else []
    for obj in changed:
        if obj in model.objects and draw(st.booleans()):
            if draw(st.booleans()):
                do(ch.drop_object(model, obj))
            else:
                do(ch.rename_object(model, obj, obj.names[-1] + "x"))
    return model


@st.composite
def inventories(draw: st.DrawFn, model: Model) -> Inventory:
    """What a server holds: some of the model's objects, and some it never registered."""
    known = sorted(o for o in model.objects if o.type is not T.CATALOG)
    held = draw(st.lists(st.sampled_from(known), unique=True)) if known else []
    extra = draw(st.lists(st.sampled_from(ALL_OBJECTS), max_size=6, unique=True))
    return Inventory.of([*held, *extra, *(o for o in model.objects if o.type is T.CATALOG)])


def questions(inventory: Inventory) -> Iterator[tuple[str, ObjectRef]]:
    """Every (operation, object) worth asking: held objects and stand-in new children."""
    held = list(inventory.within(METALAKE))
    for op in OPS:
        kind = OPERATIONS[op].target
        assert isinstance(kind, SecurableType)
        for obj in held:
            if obj.type is kind:
                yield op, obj
        for parent in held:
            if len(parent.names) == kind.depth - 1:
                yield op, generic_child(parent, kind)


def compare(
    model: Model, ent: Entitlements, users: list[str], inventory: Inventory, roots: list[ObjectRef]
) -> int:
    evaluator = Evaluator(model)
    checks = 0
    for user in users:
        view = ent.view(user)
        for op, obj in questions(inventory):
            if not any(obj.is_within(r) for r in roots):
                continue
            want = evaluator.authorize(user, op, obj, explain=False).allowed
            got = view.allowed(op, obj)
            checks += 1
            assert got == want, f"{user} {op} {obj}: compiler {got}, evaluator {want}"
            parent = obj.parent
            assert parent is not None
            if obj in inventory:
                assert view.coverage(op, parent).allowed(obj) == want, f"coverage {user} {op} {obj}"
            if want:
                assert parent in view.containers(parent.type), f"{parent} not listed for {user} {op}"
    return checks


@settings(max_examples=150)
@given(data=st.data())
def test_compiler_equals_the_evaluator_everywhere(data: st.DataObject) -> None:
    model = data.draw(st.one_of(builders.models(), odd_models()))
    inventory = data.draw(inventories(model))
    ent = EntitlementCompiler(model, OPS).compile(inventory)
    compare(model, ent, [*sorted(model.users), "stranger"], inventory, [METALAKE])


@settings(max_examples=150)
@given(data=st.data())
def test_compiler_equals_the_evaluator_on_a_scope(data: st.DataObject) -> None:
    model = data.draw(st.one_of(builders.models(), odd_models()))
    inventory = data.draw(inventories(model))
    names = st.sampled_from([*USERS, *builders.USERS, "stranger"])
    users = data.draw(st.lists(names, max_size=3, unique=True))
    held = sorted(inventory.within(METALAKE))
    roots = data.draw(st.lists(st.sampled_from(held), min_size=1, max_size=3, unique=True))
    ent = EntitlementCompiler(model, TABLE_OPS).compile(inventory, users, roots)
    roots = [r.parent if r.type in LEAF_TYPES and r.parent else r for r in roots]  # leaves widen
    assert set(ent.users) <= set(users)
    before = OPS[:]
    try:
        OPS[:] = TABLE_OPS
        compare(model, ent, users, inventory, roots)
    finally:
        OPS[:] = before


def test_operations_that_cannot_be_compiled_are_refused() -> None:
    with pytest.raises(ModelError, match="cannot be compiled"):
        EntitlementCompiler(Model(), ["get_tag"])
    with pytest.raises(ModelError, match="unknown operation"):
        EntitlementCompiler(Model(), ["frobnicate"])


def test_an_inventory_holds_the_metalake_of_a_copied_model() -> None:
    """``copy.deepcopy`` (a sync with a directory's members) rebuilds every ref: the copied
    metalake is equal to ``METALAKE``, not the same object, and still held."""
    import copy

    copied = copy.deepcopy(METALAKE)
    assert copied is not METALAKE and copied in Inventory()


def test_a_row_reached_through_another_is_checked_again_once_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check of a list of operations is kept while their rows stand, and the rows their
    terms reach (``load_table`` asks ``load_schema``) are among them: a reached row replaced
    by one that cannot be compiled refuses the list again, as a check made afresh does."""
    from dataclasses import replace

    from pushdown.decide.requirements import Has

    EntitlementCompiler(Model(), ["load_table"])  # checked, and kept
    assert "load_schema" in {t.operation for t in _cans(OPERATIONS["load_table"].requires)}
    bad = replace(OPERATIONS["load_schema"], requires=Has((Privilege.USE_SCHEMA,), on="other"))
    monkeypatch.setitem(OPERATIONS, "load_schema", bad)
    with pytest.raises(ModelError, match="cannot be compiled"):
        EntitlementCompiler(Model(), ["load_table"])


def _cans(term: object) -> Iterator[Can]:
    if isinstance(term, Can):
        yield term
    for sub in getattr(term, "terms", ()):
        yield from _cans(sub)


def test_a_replaced_reached_row_is_decided_as_it_now_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row replaced behind a kept check is decided by its new terms, as the evaluator
    decides it (the rule made of the old row is not kept): ``load_schema`` asking a privilege
    alice lacks denies her ``load_table`` too."""
    from dataclasses import replace

    from pushdown.decide.requirements import Has

    catalog, table = ObjectRef.of("catalog", "c"), ObjectRef.of("table", "c.s.t")
    model = (
        builders.Builder()
        .users("alice")
        .catalog("c")
        .schema("c.s")
        .table("c.s.t")
        .role(
            "r",
            (catalog, Privilege.USE_CATALOG, Condition.ALLOW),
            (catalog, Privilege.USE_SCHEMA, Condition.ALLOW),
            (catalog, Privilege.SELECT_TABLE, Condition.ALLOW),
            users=["alice"],
        )
        .model
    )
    inventory = Inventory.of(sorted(model.objects))
    ent = EntitlementCompiler(model, ["load_table"]).compile(inventory)
    assert ent.allowed("alice", "load_table", table)
    narrower = replace(OPERATIONS["load_schema"], requires=Has((Privilege.MODIFY_TABLE,)))
    monkeypatch.setitem(OPERATIONS, "load_schema", narrower)
    assert not Evaluator(model).authorize("alice", "load_table", table, explain=False).allowed
    ent = EntitlementCompiler(model, ["load_table"]).compile(inventory)
    assert not ent.allowed("alice", "load_table", table)
