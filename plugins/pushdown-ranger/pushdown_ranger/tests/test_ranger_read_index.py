"""The read index (:class:`~pushdown_ranger.compiling.ReadIndex`) moved from one read's facts
to the next by the facts that differ equals one built from the facts alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.reconcile.plan import Fact, Op
from pushdown_ranger.compiling import ReadIndex
from pushdown_ranger.facts import PolicyFact, RoleFact
from pushdown_ranger.ordering import schedule
from pushdown_ranger.scoping import shaped_database

ROLES = ["pd_a", "pd_b", "pdu_x", "pdu_X"]
DATABASES = ["d1", "D1", "d2"]
#: the per-user roles' prefix (``prefixed_by_database``)
PREFIX = "pdu_"

_roles = st.builds(
    RoleFact,
    st.sampled_from(ROLES),
    st.frozensets(st.sampled_from(["u1", "U1", "u2"]), max_size=2),
    roles=st.frozensets(st.sampled_from(ROLES), max_size=1),
)
_pairs = st.frozensets(st.tuples(st.sampled_from(ROLES), st.sampled_from(["select", "update"])), max_size=3)
_resources = st.one_of(
    st.tuples(st.sampled_from(DATABASES)).map(lambda d: (("database", d, False),)),
    st.tuples(st.sampled_from(DATABASES), st.sampled_from(["t", "?*", "t*"])).map(
        lambda p: (("column", ("*",), False), ("database", p[0], False), ("table", (p[1],), False))
    ),
    st.lists(st.sampled_from(DATABASES), min_size=2, max_size=2, unique=True).map(
        lambda ds: (("database", tuple(sorted(ds)), False),)
    ),
).map(lambda rs: tuple((k, v if isinstance(v, tuple) else (v,), r) for k, v, r in rs))
_policies = st.builds(PolicyFact, st.sampled_from(["hive", "kafka"]), _resources, _pairs, _pairs)
_facts = st.frozensets(st.one_of(_roles, _policies), max_size=8)


def _plain(index: ReadIndex) -> tuple[object, ...]:
    found = (index.nested, index.by_member, index.by_role, index.by_database, index.denying)
    return (*found, index.allowing_roles, index.denying_roles, index.prefixed_by_database)


def _names(index: ReadIndex) -> tuple[object, ...]:
    sets = [{k: set(v) for k, v in d.items()} for d in (index.by_member, index.by_role, index.by_database)]
    roles = (set(index.allowing_roles), set(index.denying_roles))
    prefixed = {k: set(v) for k, v in index.prefixed_by_database.items()}
    return (index.nested, *sets, set(index.denying), *roles, prefixed)


def _whole(facts: frozenset[Fact]) -> tuple[object, ...]:
    """The index as a pass over every fact finds it (the names, without counts)."""
    nested, denying = False, set()
    by_member: dict[str, set[str]] = {}
    by_role: dict[str, set[str]] = {}
    by_database: dict[str, set[str]] = {}
    for fact in facts:
        if isinstance(fact, RoleFact):
            nested = nested or bool(fact.roles)
            for member in fact.users:
                by_member.setdefault(member.casefold(), set()).add(fact.name)
        elif isinstance(fact, PolicyFact) and fact.service == "hive":
            if fact.deny:
                denying |= {d for k, v, _ in fact.resources if k == "database" for d in v}
            database = shaped_database(fact)
            named = {role for role, _ in fact.allow | fact.deny}
            if database is not None and named:  # (a database naming no role: nothing found)
                by_database.setdefault(database.casefold(), set()).update(named)
                for role in named:
                    by_role.setdefault(role, set()).add(database)
    policies = [f for f in facts if isinstance(f, PolicyFact)]
    allowing = {role for f in policies for role, _ in f.allow}
    denying_roles = {role for f in policies for role, _ in f.deny}
    prefixed = {d: {r for r in named if r.startswith(PREFIX)} for d, named in by_database.items()}
    prefixed = {d: named for d, named in prefixed.items() if named}
    return (nested, by_member, by_role, by_database, denying, allowing, denying_roles, prefixed)


@settings(max_examples=80, deadline=None)
@given(st.lists(_facts, min_size=1, max_size=5))
def test_a_moved_index_equals_one_built_from_the_facts(reads: list[frozenset[Fact]]) -> None:
    moving = ReadIndex("hive", PREFIX)
    for facts in reads:
        moving.moved(facts)
        assert _plain(moving) == _plain(ReadIndex("hive", PREFIX).moved(facts))
        assert _names(moving) == _whole(facts)
    assert _plain(moving.moved(frozenset())) == _plain(ReadIndex("hive", PREFIX))


_role_ops = st.builds(
    lambda before, after, action: Op(
        action, before if action != "add" else None, after if action != "remove" else None
    ),
    _roles,
    _roles,
    st.sampled_from(["add", "change", "remove"]),
)
_policy_ops = st.builds(lambda before, after: Op("change", before, after), _policies, _policies)


@settings(max_examples=80, deadline=None)
@given(_facts, st.lists(st.one_of(_role_ops, _policy_ops), max_size=4))
def test_the_apply_order_from_the_index_is_the_order_from_the_facts(
    held: frozenset[Fact], ops: list[Op]
) -> None:
    index = ReadIndex("hive").moved(held)
    named = (index.allowing_roles, index.denying_roles)
    assert schedule(ops, held, named) == schedule(ops, held)
