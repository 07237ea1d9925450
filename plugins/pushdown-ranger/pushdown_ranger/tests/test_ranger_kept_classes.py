"""A compile that takes over each class's Hive items from the last compiles
(:mod:`pushdown_ranger.compile.classes`) gives what a compile from scratch gives.

Random histories (hostile names and mappings, unregistered and case-twin objects, owners,
service admins, removals and returns of principals, tables created, renamed and dropped
on the model, DENYs, gates): after every change, a compile keeping the classes (focused
on the change's databases, on random databases, or whole, with or without deny items)
equals the same compile from scratch, facts and notes. One model without topics and
filesets (the users whose items are kept are taken out of the entitlement compiler) and
one with them (every class is compiled, its items taken over). A compile of the same
histories with the invalidation turned off (a signature blind to the class's grants, or a
database's shape blind to its tables) is caught, so these tests can fail.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.decide.inventory import Inventory
from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.scope import Scope, scope_of
from pushdown_ranger.compile import classes as kept_classes
from pushdown_ranger.compile import compile_all, objects
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.compile.deciding import GATES
from pushdown_ranger.compile.naming import RangerNaming
from pushdown_ranger.compile.objects import with_case_twins
from pushdown_ranger.scoping import focus_of
from tests.adversary import MAPPINGS, histories, hostile_steps, mapping_names
from tests.backend_histories import GROUP
from tests.builders import Builder

from .histories import model_events

USERS = ("u1", "u2", "U3", "u4")
ROLES = ("r1", "r2", "r3")
SCHEMAS = ("s1", "s2", "S1")
TABLES = ("a", "b", "Secret", "t*")
PLAIN = (
    "metalake",
    "catalog c",
    "schema c.s1",
    "schema c.s2",
    "table c.s1.a",
    "table c.s1.b",
    "table c.s2.a",
)
UNREGISTERED = ("table c.s1.Secret", "table c.s1.A", "schema c.S1", "table c.s3.x", "table c.s2.{USER}")
LEAVES = ("topic c.s2.events", "fileset c.s2.files")
#: topics and filesets only a grant or an owner names (in a schema holding no registered one)
NAMED_LEAVES = ("topic c.s1.hidden", "fileset c.s1.loose")
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE")
LEAF_PRIVILEGES = ("CONSUME_TOPIC", "READ_FILESET", "WRITE_FILESET")
FOCI = ("s1", "s2", "S1", "s3")


def steps(leaves: bool) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.one_of(
        hostile_steps(
            roles=ROLES,
            users=USERS,
            objects=(*PLAIN, *(LEAVES if leaves else ())),
            unregistered=(*UNREGISTERED, *(NAMED_LEAVES if leaves else ())),
            privileges=(*PRIVILEGES, *(LEAF_PRIVILEGES if leaves else ())),
            schemas=SCHEMAS[:2],
            tables=TABLES,
            rename=True,
            grant_weight=4,
        ),
        st.tuples(st.just("admins"), st.lists(st.sampled_from(USERS), max_size=2, unique=True)),
    )


def start(leaves: bool) -> Builder:
    b = Builder().users(*USERS).group(GROUP, "u1").catalog("c", backend="rg")
    for role in ROLES:
        b.role(role)
    b.schema("c.s1").schema("c.s2").table("c.s1.a").table("c.s1.b").table("c.s2.a")
    if leaves:
        b.create("topic c.s2.events").create("fileset c.s2.files", properties={"location": "/data/files"})
    b.allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", "USE_SCHEMA", "SELECT_TABLE")
    b.allow("r2", "catalog c", "USE_CATALOG", "USE_SCHEMA").allow("r3", "schema c.s2", "SELECT_TABLE")
    b.deny("r3", "table c.s2.a", "SELECT_TABLE")
    return b.grant_role("r1", users=["u2"], groups=[GROUP]).grant_role("r2", users=["U3", "u4"])


def events_for(model: Model, step: tuple[Any, ...]) -> list[Any]:
    kind, *args = step
    if kind == "admins":
        return ch.set_service_admins(model, args[0])
    return model_events(model, step)


#: a compile after a change: on the change's databases (``None``: whole when it is no
#: focus), on these databases, or whole; with deny items in the Hive service or not
Compile = tuple[str, tuple[str, ...], bool]
compiles = st.tuples(
    st.sampled_from(("change", "databases", "whole")),
    st.lists(st.sampled_from(FOCI), min_size=1, max_size=2, unique=True).map(tuple),
    st.booleans(),
)


def compile_with(
    model: Model, mapping: str, focus: frozenset[ObjectRef] | None, deny: bool, kept: KeptClasses | None
) -> Desired:
    naming = RangerNaming(map_principal=MAPPINGS[mapping])
    flags = {"hive": deny, "hdfs": True, "kafka": True}
    return compile_all(
        model,
        ["c"],
        naming,
        flags,
        focus=focus,
        elsewhere=frozenset(),
        hive="c",
        voided={},
        services=frozenset(flags),
        kept=kept,
    )


def focus_for(model: Model, scope: Scope, how: Compile) -> frozenset[ObjectRef] | None:
    kind, databases, _ = how
    if kind == "whole":
        return None
    if kind == "databases":
        return frozenset(ObjectRef(SecurableType.SCHEMA, ("c", d)) for d in databases)
    return focus_of(scope.resolve(model), "c")


def play(
    leaves: bool, mapping: str, history: list[tuple[tuple[Any, ...], Compile]], counts: dict[str, int]
) -> None:
    """The history, each change followed by its compile kept and from scratch: equal."""
    b, kept = start(leaves), KeptClasses()
    model = b.model
    assert compile_with(model, mapping, None, True, kept) == compile_with(model, mapping, None, True, None)
    for step, how in history:
        try:
            events = events_for(model, step)
            for event in events:
                model.apply(event)
        except ModelError:
            continue
        scope = Scope.union(scope_of(e) for e in events) if events else Scope.nothing()
        focus, deny = focus_for(model, scope, how), how[2]
        if focus is not None:
            roots = [ObjectRef(SecurableType.CATALOG, ("c",))]
            twins = with_case_twins(model, roots, focus)
            assert objects.held_in_focus(model, roots, twins) == held_walked(model, roots, twins), step
        before, reused, focused = kept.compiled, kept.reused, kept.focused
        got = compile_with(model, mapping, focus, deny, kept)
        want = compile_with(model, mapping, focus, deny, None)
        differ = sorted(got.facts ^ want.facts, key=str)
        assert got == want, (mapping, step, how, differ, got.notes, want.notes)
        counts["compiles"] += 1
        counts["kept"] += before == kept.compiled and focus is not None
        counts["split kept"] = counts.get("split kept", 0) + kept.reused - reused
        counts["tables focused"] = counts.get("tables focused", 0) + kept.focused - focused


def held_walked(
    model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef]
) -> tuple[Inventory, frozenset[ObjectRef]]:
    """:func:`~pushdown_ranger.compile.objects.held_in_focus` as made before: each object
    added alone, the topics and filesets found by a walk over the inventory."""
    held = Inventory.of(roots)
    wanted = {r.names[0] for r in roots}
    for schema in focus:
        if schema.names[0] in wanted:
            below = (*model.children(schema), *model.marked_within(schema))
            if below or schema in model.objects:  # a schema dropped is not held
                held.add(schema)
            for obj in below:
                held.add(obj)
    for schema in objects.leaf_schemas(model, roots):
        if schema not in focus:
            held.add(schema)
            for kid in model.children(schema):
                held.add(kid)
    for obj in objects.named_objects(model, [r.names[0] for r in roots]):
        if obj.type in (SecurableType.TOPIC, SecurableType.FILESET):
            held.add(obj)
    kinds = (SecurableType.TOPIC, SecurableType.FILESET)
    return held, frozenset(o for r in roots for o in held.within(r) if o.type in kinds)


def histories_of(leaves: bool) -> st.SearchStrategy[list[tuple[tuple[Any, ...], Compile]]]:
    return st.lists(st.tuples(steps(leaves), compiles), min_size=1, max_size=8)


@pytest.mark.parametrize("leaves", [False, True], ids=["tables only", "with topics and filesets"])
def test_a_compile_keeping_the_classes_equals_one_from_scratch(
    leaves: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    counts = {"compiles": 0, "kept": 0}

    @settings(max_examples=histories(120), deadline=None, suppress_health_check=list(HealthCheck))
    @given(mapping=mapping_names, history=histories_of(leaves))
    def run(mapping: str, history: list[tuple[tuple[Any, ...], Compile]]) -> None:
        play(leaves, mapping, history, counts)

    run()
    with capsys.disabled():
        print(f"\nranger kept classes ({'with leaves' if leaves else 'tables only'}): {counts}")
    # the comparison is not vacuous: focused compiles took every class over
    assert counts["compiles"] > 0 and counts["kept"] > 0, counts


#: histories of the gates and a few grants beyond them over two databases, compiled over
#: both: users deciding in one database and holding only the gates (ALLOWs or DENYs) or
#: more in the other are taken out of the compiler or not (:meth:`Signer.inert`)
GATE_OBJECTS = ("catalog c", "schema c.s1", "schema c.s2", "schema c.s2", "table c.s1.a", "table c.s2.a")
GATE_PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE")
_gate_grants = st.tuples(
    st.sampled_from(ROLES),
    st.sampled_from(GATE_OBJECTS),
    st.sampled_from(GATE_PRIVILEGES),
    st.sampled_from(("ALLOW", "DENY")),
)
_memberships = st.tuples(st.sampled_from(ROLES), st.sampled_from(USERS), st.booleans())
gate_steps = st.one_of(
    _gate_grants.map(lambda g: ("grant", *g)),
    _gate_grants.map(lambda g: ("grant", *g)),
    _gate_grants.map(lambda g: ("revoke", *g)),
    _memberships.map(lambda m: ("role_user", *m)),
    _memberships.map(lambda m: ("role_user", *m)),
    st.tuples(st.just("member"), st.sampled_from(USERS), st.booleans()),
)
gate_histories = st.lists(
    st.tuples(
        gate_steps,
        st.tuples(
            st.sampled_from(("change", "databases", "databases")), st.just(("s1", "s2")), st.booleans()
        ),
    ),
    min_size=2,
    max_size=12,
)


def test_a_compile_taking_out_users_holding_only_gates_in_a_database_equals_one_from_scratch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A user whose roles hold nothing but the gates' ALLOWs in a database of the focus adds
    nothing there (:meth:`~pushdown_ranger.compile.classes.Signer.inert`): taken out of the
    compiler when its other databases' classes are kept, the compile equals one from
    scratch over random histories of gates, DENYs of them and grants beyond them."""
    counts = {"compiles": 0, "kept": 0}

    @settings(max_examples=histories(120), deadline=None, suppress_health_check=list(HealthCheck))
    @given(mapping=mapping_names, history=gate_histories)
    def run(mapping: str, history: list[tuple[tuple[Any, ...], Compile]]) -> None:
        play(False, mapping, history, counts)

    run()
    with capsys.disabled():
        print(f"\nranger kept classes, gates over two databases: {counts}")
    # and splits were kept and taken over (:class:`~pushdown_ranger.compile.classes.KeptSplit`)
    assert counts["compiles"] > 0 and counts["kept"] > 0 and counts["split kept"] > 0, counts


#: histories where a class's grants, a database's tables or which of them the model
#: registers change between two compiles of that database: a compile blind to that takes
#: over stale items
STALE: list[tuple[str, list[tuple[tuple[Any, ...], Compile]]]] = [
    ("grants", [(("grant", "r1", "table c.s1.a", "MODIFY_TABLE", "ALLOW"), ("change", ("s1",), True))]),
    ("grants", [(("grant", "r1", "table c.s1.b", "SELECT_TABLE", "DENY"), ("change", ("s1",), True))]),
    ("tables", [(("create", "s1", "t*"), ("databases", ("s1",), True))]),
    (
        "tables",
        [
            (("grant", "r2", "schema c.s1", "CREATE_TABLE", "ALLOW"), ("change", ("s1",), True)),
            (("create", "s1", "Secret"), ("databases", ("s1",), True)),
        ],
    ),
    (
        "registered",
        [
            (("grant", "r2", "schema c.s1", "CREATE_TABLE", "ALLOW"), ("change", ("s1",), True)),
            (("grant", "r3", "table c.s1.Secret", "SELECT_TABLE", "ALLOW"), ("change", ("s1",), True)),
            (("create", "s1", "Secret"), ("databases", ("s1",), True)),
        ],
    ),
    # a user deciding in one database of the focus holds more than the gates in another:
    # an ALLOW beyond them (once the gate there is held), or a DENY of a gate (barred there)
    (
        "inert allows",
        [
            (("grant", "r1", "schema c.s2", "USE_SCHEMA", "ALLOW"), ("change", ("s2",), True)),
            (("grant", "r1", "schema c.s2", "SELECT_TABLE", "ALLOW"), ("databases", ("s1", "s2"), True)),
        ],
    ),
    (
        "inert denies",
        [(("grant", "r1", "schema c.s2", "USE_SCHEMA", "DENY"), ("databases", ("s1", "s2"), True))],
    ),
    # a user's signatures kept from a compile, then its roles or their grants move
    (
        "kept roles",
        [
            (("role_user", "r3", "u4", True), ("databases", ("s1", "s2"), True)),
            (("role_user", "r1", "u4", True), ("databases", ("s1", "s2"), True)),
        ],
    ),
    (
        "kept grants",
        [
            (("role_user", "r3", "u4", True), ("databases", ("s1", "s2"), True)),
            (("grant", "r3", "schema c.s2", "MODIFY_TABLE", "ALLOW"), ("databases", ("s1", "s2"), True)),
        ],
    ),
]
SIGNER = kept_classes.Signer
SHAPE = kept_classes.shape


def _blind_signer(model: Model, schema: ObjectRef, signed: Any = None) -> kept_classes.Signer:
    """A class known by its roles, not by their grants."""
    signer = SIGNER(model, schema, signed)
    signer.of = lambda user, *_: (False, frozenset(model.roles_of(user)))  # type: ignore[method-assign,assignment]
    return signer


class _BlindToRoles(kept_classes.KeptSignatures):
    """A user's signatures kept while its roles' grants stand, whatever roles it holds now."""

    def of(self, user: str) -> Any:
        hit = self.users.get(user)
        if hit is not None and all(self.model.grants_moved.get(r) == at for r, at in hit[1]):
            return hit[2], hit[3]
        return super().of(user)


class _BlindToGrants(kept_classes.KeptSignatures):
    """A user's signatures kept while its roles stand, whatever grants they hold now."""

    def of(self, user: str) -> Any:
        hit = self.users.get(user)
        if hit is not None and self.model.roles_moved.get(user) == hit[0]:
            return hit[2], hit[3]
        return super().of(user)


def _blind_tables(model: Model, inventory: Any, schema: ObjectRef) -> kept_classes.Shape:
    """A database known by its name, not by its tables."""
    return (frozenset(), frozenset())


def _blind_registered(model: Model, inventory: Any, schema: ObjectRef) -> kept_classes.Shape:
    """A database known by its tables, not by which of them the model registers."""
    return (SHAPE(model, inventory, schema)[0], frozenset())


def _deciding_by(model: Model, schema: ObjectRef, counts: Callable[[Any, Condition], bool]) -> frozenset[str]:
    found: set[str] = set()
    for obj in (*schema.path, *model.marked_within(schema)):
        for privilege, conditions in model.by_object.get(obj, {}).items():
            for condition, holders in conditions.items():
                if counts(privilege, condition):
                    found |= holders
    return frozenset(found)


def _blind_allows(model: Model, schema: ObjectRef, signed: Any = None) -> kept_classes.Signer:
    """A role holding only ALLOWs taken for one allowed nothing, whatever they allow."""
    signer = SIGNER(model, schema, signed)
    signer.deciding = lambda: _deciding_by(model, schema, lambda p, c: c is Condition.DENY)  # type: ignore[method-assign]
    return signer


def _blind_denies(model: Model, schema: ObjectRef, signed: Any = None) -> kept_classes.Signer:
    """A role holding only the gates taken for one denied nothing, whether it holds them
    as ALLOWs or DENYs."""
    signer = SIGNER(model, schema, signed)
    signer.deciding = lambda: _deciding_by(model, schema, lambda p, c: p not in GATES)  # type: ignore[method-assign]
    return signer


BLIND: dict[str, tuple[str, Callable[..., Any]]] = {
    "grants": ("Signer", _blind_signer),
    "tables": ("shape", _blind_tables),
    "registered": ("shape", _blind_registered),
    "inert allows": ("Signer", _blind_allows),
    "inert denies": ("Signer", _blind_denies),
    "kept roles": ("KeptSignatures", _BlindToRoles),
    "kept grants": ("KeptSignatures", _BlindToGrants),
}


@pytest.fixture
def classes_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The focus of a database's moved tables (:meth:`KeptItems.moved`) never proved: the
    kept classes and the kept split are what a compile of the database takes over, so
    their own proofs are what a test removes."""
    monkeypatch.setattr(kept_classes.KeptItems, "moved", lambda *args: None)


@pytest.mark.parametrize("leaves", [False, True], ids=["tables only", "with topics and filesets"])
@pytest.mark.parametrize("blind, history", STALE, ids=[f"{b}-{i}" for i, (b, _) in enumerate(STALE)])
def test_a_compile_blind_to_what_a_class_depends_on_is_caught(
    leaves: bool,
    blind: str,
    history: list[tuple[tuple[Any, ...], Compile]],
    monkeypatch: pytest.MonkeyPatch,
    classes_alone: None,
) -> None:
    """The comparison fails when the invalidation is turned off: the kept items of a class
    whose grants moved (its signature blind to them), or of a database whose tables moved
    (its shape blind to them, or to which of them the model registers), are taken over; a
    user taken out of the compiler with no items in a database where it holds more than
    the gates' ALLOWs (an ALLOW beyond them, a DENY of one)."""
    if leaves and blind.startswith("inert"):
        pytest.skip("with topics or filesets every class is compiled: no user is taken out")
    play(leaves, "identity", history, {"compiles": 0, "kept": 0})  # holds as written
    with monkeypatch.context() as m:
        m.setattr(kept_classes, *BLIND[blind])
        with pytest.raises(AssertionError):
            play(leaves, "identity", history, {"compiles": 0, "kept": 0})


@pytest.mark.parametrize("focus", [("s1",), ("s2",), ("s1", "s2"), ("S1", "s3")])
def test_the_inventory_of_a_focus_equals_one_made_object_by_object(focus: tuple[str, ...]) -> None:
    """Registered and only named topics and filesets (in a focused schema and not), tables
    only a grant names, an owner's object: :func:`~pushdown_ranger.compile.objects.held_in_focus`
    equals the inventory made object by object and its topics and filesets walked."""
    b = start(True).allow("r1", "topic c.s1.hidden", "CONSUME_TOPIC").owner("topic c.s2.events", "u4")
    b.allow("r3", "table c.s1.Secret", "SELECT_TABLE").allow("r2", "fileset c.s3.far", "READ_FILESET")
    model, roots = b.model, [ObjectRef(SecurableType.CATALOG, ("c",))]
    schemas = frozenset(ObjectRef(SecurableType.SCHEMA, ("c", d)) for d in focus)
    held, leaves = objects.held_in_focus(model, roots, schemas)
    assert (held, leaves) == held_walked(model, roots, schemas)
    assert ObjectRef.parse("topic c.s1.hidden") in leaves and ObjectRef.parse("topic c.s2.events") in leaves


# -- the split kept between compiles (:class:`~pushdown_ranger.compile.classes.KeptSplit`) --


class _BlindToMemberships(kept_classes.GrantChain):
    """A chain that misses a membership (the count of role stamps not compared)."""

    def proved(self, model: Model, hint: Any) -> bool:
        self.roles_stamped = model.roles_stamped
        return super().proved(model, hint)


class _BlindToUnhinted(kept_classes.GrantChain):
    """A chain that trusts the hint's roles to be every role stamped (the count of grant
    stamps not compared)."""

    def proved(self, model: Model, hint: Any) -> bool:
        newer = sum(1 for r in hint if model.grants_moved.get(r, 0) > self.latest)
        self.grants_stamped = model.grants_stamped - newer
        return super().proved(model, hint)


class _BlindToModels(kept_classes.GrantChain):
    """A chain that takes another model object for its own."""

    def proved(self, model: Model, hint: Any) -> bool:
        self.model = model
        return super().proved(model, hint)


SPLIT_BLIND: dict[str, tuple[str, Any]] = {
    "memberships": ("GrantChain", _BlindToMemberships),
    "unhinted grants": ("GrantChain", _BlindToUnhinted),
    "lineage": ("lineages", lambda databases: ()),
    "owners": ("owners_at", lambda model, starts: frozenset()),
}

S1: Compile = ("databases", ("s1",), True)
#: histories where a split kept from the last compile of ``c.s1`` goes stale: each holds as
#: written and fails with the check it names removed
SPLIT_STALE: list[tuple[str, list[tuple[tuple[Any, ...], Compile]]]] = [
    # u2 (r1: selects in s1) joins r2, denied a table of s1, unseen by a split; then a grant
    # to r3 (deciding in s1, held by nobody) is compiled there
    (
        "memberships",
        [
            (("grant", "r2", "table c.s1.a", "SELECT_TABLE", "DENY"), S1),
            (("grant", "r2", "table c.s1.b", "MODIFY_TABLE", "ALLOW"), S1),
            (("role_user", "r2", "u2", True), ("whole", ("s1",), True)),
            (("grant", "r3", "table c.s1.b", "MODIFY_TABLE", "ALLOW"), S1),
        ],
    ),
    # u4 selects in s1 through r3, and holds the gates through r2 only (deciding nowhere):
    # the gate revoked moves u4's items, its role outside the hint
    (
        "unhinted grants",
        [
            (("grant", "r3", "schema c.s1", "SELECT_TABLE", "ALLOW"), S1),
            (("role_user", "r3", "u4", True), S1),
            (("grant", "r3", "table c.s2.a", "MODIFY_TABLE", "ALLOW"), S1),
            (("revoke", "r2", "catalog c", "USE_SCHEMA", "ALLOW"), S1),
        ],
    ),
    # a table the database did not hold (a name Ranger reads as a pattern) registered
    (
        "lineage",
        [
            (("grant", "r2", "table c.s1.a", "SELECT_TABLE", "DENY"), S1),
            (("grant", "r2", "table c.s1.b", "MODIFY_TABLE", "ALLOW"), S1),
            (("create", "s1", "t*"), S1),
        ],
    ),
    # u2, taken out, comes to own a table of s1 (a personal view): no stamp follows
    (
        "owners",
        [
            (("grant", "r2", "table c.s1.a", "SELECT_TABLE", "DENY"), S1),
            (("grant", "r2", "table c.s1.b", "MODIFY_TABLE", "ALLOW"), S1),
            (("owner", "table c.s1.b", "u2"), S1),
        ],
    ),
]


@pytest.mark.parametrize(
    "blind, history", SPLIT_STALE, ids=[f"{b}-{i}" for i, (b, _) in enumerate(SPLIT_STALE)]
)
def test_a_kept_split_blind_to_what_moved_is_caught(
    blind: str,
    history: list[tuple[tuple[Any, ...], Compile]],
    monkeypatch: pytest.MonkeyPatch,
    classes_alone: None,
) -> None:
    """The split kept from the last compile of a database is split again only for the
    holders of the roles the stamps prove moved (:class:`~pushdown_ranger.compile.classes.GrantChain`):
    each history equals a compile from scratch, took a kept split over, and fails when the
    check it names is removed (a membership, a role stamped outside the hint, the
    database's classes started afresh, an owner)."""
    counts = {"compiles": 0, "kept": 0}
    play(False, "identity", history, counts)  # holds as written
    assert counts["split kept"] > 0, counts
    with monkeypatch.context() as m:
        m.setattr(kept_classes, *SPLIT_BLIND[blind])
        with pytest.raises(AssertionError):
            play(False, "identity", history, {"compiles": 0, "kept": 0})


def _split_kept(model: Model, kept: KeptClasses) -> None:
    """``model`` compiled whole, then three grants in ``c.s1`` compiled there (each takes
    the last split over: ``u1``, ``u2`` (``r1``), ``U3`` and ``u4`` (``r2``) taken out)."""
    assert compile_with(model, "identity", None, True, kept) is not None
    for step in (
        ("grant", "r1", "table c.s1.a", "MODIFY_TABLE", "ALLOW"),
        ("grant", "r2", "table c.s1.a", "SELECT_TABLE", "DENY"),
        ("grant", "r3", "table c.s1.b", "MODIFY_TABLE", "ALLOW"),
    ):
        for event in events_for(model, step):
            model.apply(event)
        compile_with(model, "identity", frozenset({ObjectRef.parse("schema c.s1")}), True, kept)


def _grant(model: Model, role: str, table: str, privilege: str, condition: str) -> None:
    for event in events_for(model, ("grant", role, table, privilege, condition)):
        model.apply(event)


def _equal_on_s1(model: Model, kept: KeptClasses) -> None:
    focus = frozenset({ObjectRef.parse("schema c.s1")})
    assert compile_with(model, "identity", focus, True, kept) == compile_with(
        model, "identity", focus, True, None
    )


def another_model(kept: KeptClasses) -> None:
    """A copy of the model granted ``r1`` a DENY (stamped first), the model ``r2`` more
    (stamped after): the copy's counts equal the model's, and no stamp of its is newer
    than the model's latest, so only the model object tells the chains apart."""
    model = start(False).model
    _split_kept(model, kept)
    replica = copy.deepcopy(model)
    _grant(replica, "r1", "table c.s1.b", "SELECT_TABLE", "DENY")
    _grant(model, "r2", "table c.s1.b", "MODIFY_TABLE", "ALLOW")
    _equal_on_s1(model, kept)
    assert kept.reused > 0
    _equal_on_s1(replica, kept)


def a_directory_view(kept: KeptClasses) -> None:
    """A view with the directory's members (:func:`~pushdown.model.directory.with_members`):
    ``U3`` (taken out by the kept split) joins the group holding ``r1`` there, not in the
    model."""
    from pushdown.model.directory import with_members

    model = start(False).model
    _split_kept(model, kept)
    assert kept.reused > 0
    _equal_on_s1(with_members(model, {GROUP: {"U3"}}), kept)


def unstamped(kept: KeptClasses) -> None:
    """A model filled without events (a role never stamped): no split is kept."""
    model = start(False).model
    model.roles["filled"] = set()  # as a model filled without events has it
    _split_kept(model, kept)
    _grant(model, "r2", "table c.s1.b", "MODIFY_TABLE", "ALLOW")
    _equal_on_s1(model, kept)
    assert kept.reused == 0


@pytest.mark.parametrize(
    "history, blinds",
    [
        (another_model, (_BlindToModels,)),
        (a_directory_view, (_BlindToModels, _BlindToMemberships)),
        (unstamped, ()),
    ],
    ids=["a copy of the model", "a directory view", "a model without stamps"],
)
def test_a_kept_split_is_not_taken_over_for_another_model_or_without_stamps(
    history: Callable[[KeptClasses], None],
    blinds: tuple[type, ...],
    monkeypatch: pytest.MonkeyPatch,
    classes_alone: None,
) -> None:
    """A split kept for one model object is split afresh for another (a copy, a directory
    view: their stamps are not the chain's), and a model whose roles lack stamps keeps none;
    each fails with its checks removed (a view is caught by the count of role stamps too:
    its members are stamped in the view)."""
    history(KeptClasses())
    if not blinds:
        return
    with monkeypatch.context() as m:
        chain = kept_classes.GrantChain
        for blind in blinds:

            class Blind(blind, chain):  # type: ignore[misc, valid-type]
                pass

            chain = Blind
        m.setattr(kept_classes, "GrantChain", chain)
        with pytest.raises(AssertionError):
            history(KeptClasses())
