"""A user joining a role changes only the role's Ranger role when the backend can prove it
(issue 30, :meth:`~pushdown_ranger.compiling.Compiling._only_role_fact`): no database is
compiled then. Over random histories heavy with memberships (users joining and leaving
roles, fresh users, groups, DENYs, grants beyond the gates, owners, service admins, roles
created and deleted), each synced over the scope its events name, what Ranger holds after
every sync equals a compile from scratch of a copy of the model (a fresh backend's full
plan is empty), and the proof is taken at least once."""

from __future__ import annotations

import copy
import importlib
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger import compile as compile_module
from pushdown_ranger.backend import RangerBackend
from pushdown_ranger.compile import desired as desired_module
from pushdown_ranger.compiling import Compiling
from tests.adversary import GROUP, histories
from tests.builders import Builder

from .histories import applied, estate, played, synced
from .probe import probe
from .world import backend_for

pytestmark = pytest.mark.ranger
#: the module (the package's ``principals`` is its function of that name)
principals_module = importlib.import_module("pushdown_ranger.compile.principals")

USERS = ("u1", "u2", "u3", "u4", "u5")
JOINERS = ("j1", "j2", "j3", "j4", "j5", "j6")
ROLES = ("r1", "r2", "r3", "r4", "r5")
TABLES = ("s1.a", "s1.b", "s2.a", "s2.b")
OBJECTS = ("catalog c", "schema c.s1", "schema c.s2", *(f"table c.{t}" for t in TABLES))
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE")
everyone = st.sampled_from(USERS + JOINERS)
joins = st.tuples(st.just("role_user"), st.sampled_from(ROLES), everyone, st.booleans())
others = st.one_of(
    st.tuples(
        st.just("grant"),
        st.sampled_from(ROLES),
        st.sampled_from(OBJECTS),
        st.sampled_from(PRIVILEGES),
        st.sampled_from(("ALLOW", "ALLOW", "DENY")),
    ),
    st.tuples(st.sampled_from(("remove_user", "add_user")), st.sampled_from(JOINERS)),
    st.tuples(st.just("member"), everyone, st.booleans()),
    st.tuples(st.just("role_group"), st.sampled_from(ROLES), st.booleans()),
    st.tuples(st.just("owner"), st.sampled_from(OBJECTS), everyone),
    st.tuples(st.just("admins"), st.lists(everyone, max_size=1)),
    st.tuples(st.sampled_from(("delete_role", "create_role")), st.sampled_from(ROLES)),
)
#: a user (most often one holding nothing) joining a role, alone in its batch
arrivals = st.tuples(
    st.just("role_user"), st.sampled_from(ROLES[:4]), st.sampled_from(JOINERS), st.just(True)
)
#: a step: joins weigh most (a membership alone is what the proof is about)
steps = st.one_of(arrivals, arrivals, joins, joins, others)


def start() -> Builder:
    b = estate((*USERS, *JOINERS), member="u5", schemas=("s1", "s2"), tables=TABLES)
    for role in ROLES[:4]:
        b.role(role).allow(role, "catalog c", "USE_CATALOG")
    b.allow("r1", "schema c.s1", "USE_SCHEMA", "SELECT_TABLE").deny("r1", "table c.s1.a", "SELECT_TABLE")
    b.allow("r2", "schema c.s2", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE")
    b.allow("r3", "schema c.s1", "USE_SCHEMA").allow("r3", "table c.s1.b", "SELECT_TABLE")
    b.allow("r4", "schema c.s2", "USE_SCHEMA", "SELECT_TABLE").deny("r4", "table c.s2.b", "SELECT_TABLE")
    b.grant_role("r1", users=["u1"]).grant_role("r2", users=["u2"]).grant_role("r3", users=["u3", "u4"])
    return b.grant_role("r4", users=["u4"], groups=["g"])


def backend_on(standin: Standin) -> RangerBackend:
    """The backend on ``standin``, the principal mapping kept (which the proof needs)."""
    return backend_for(standin, mapping_stable=True)


@pytest.fixture
def proofs(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The proof's answers (``Compiling._only_role_fact``), in the order it was asked."""
    answers: list[bool] = []
    only = Compiling._only_role_fact

    def counted(self: Compiling, *args: Any) -> bool:
        answers.append(only(self, *args))
        return answers[-1]

    monkeypatch.setattr(Compiling, "_only_role_fact", counted)
    return answers


def scratch(standin: Standin, model: Model) -> Plan:
    """A fresh backend's full plan for a copy of ``model`` (nothing kept), the backend's
    memos put back after (the compile from scratch leaves the one under test as it was)."""
    kept = [list(m) for m in (desired_module._MEMO, compile_module._WHO, principals_module._REFUSED)]
    try:
        return planner.plan(backend_on(standin), copy.deepcopy(model), Scope.everything())
    finally:
        desired_module._MEMO[:], compile_module._WHO[:], principals_module._REFUSED[:] = kept


def test_random_membership_histories_leave_ranger_as_a_compile_from_scratch(
    proofs: list[bool], capsys: pytest.CaptureFixture[str]
) -> None:
    @settings(max_examples=histories(25), deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        history=st.lists(
            st.one_of(steps.map(lambda s: [s]), st.lists(steps, min_size=2, max_size=2)),
            min_size=2,
            max_size=10,
        )
    )
    # u5 leaving g leaves r4 to u4 alone, which then fits s1.b's readers {u3, u4} (j1 reads
    # s1 through r1): named there by per-user roles, in a database naming r4 nowhere
    @example(
        history=[
            [("role_user", "r1", "j1", True)],
            [("role_user", "r3", "j1", True)],
            [("member", "u5", False)],
        ]
    )
    def run(history: list[list[tuple[Any, ...]]]) -> None:
        with Standin() as standin:
            backend = backend_on(standin)
            model = start().model
            reconcile(backend, model, Scope.everything())
            for batch in history:  # the changes of a batch synced at once (a daemon's gather)
                events = [event for step in batch for event in played(model, step) or []]
                if not events:
                    continue
                reconcile(backend, model, Scope.union(scope_of(e) for e in events))
                # what Ranger holds now, against a fresh backend's compile of a copy
                assert scratch(standin, model).empty, (history, batch, scratch(standin, model).ops[:5])

    run()
    taken, asked = sum(proofs), len(proofs)
    with capsys.disabled():
        print(f"\nranger joined roles: the proof taken {taken} of {asked} times asked")
    assert taken > 0, (taken, asked)


def _case_model(case: str) -> Builder:
    b = estate(("v", "x", "y", "z", "w", "j1"), member=None, schemas=("s1",), tables=("s1.a", "s1.b"))
    reads = ("USE_SCHEMA", "SELECT_TABLE")
    if case in ("taken", "unsynced"):
        b.role("r1").allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", *reads)
        b.deny("r1", "table c.s1.a", "SELECT_TABLE")
        return b.grant_role("r1", users=["v"])
    if case == "deny items":
        # x, holding r1 too, is denied s1.b by another role: a deny item of that role there
        b.role("r1").allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", *reads)
        b.role("rd").deny("rd", "table c.s1.b", "SELECT_TABLE")
        return b.grant_role("r1", users=["v", "x"]).grant_role("rd", users=["x"])
    if case == "per-user":
        # x, holding r1 too, is denied every table of s1 by rd: r1 does not fit the users
        # allowed there, v is named by its per-user role
        b.role("r1").allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", *reads)
        b.role("rd").deny("rd", "schema c.s1", "SELECT_TABLE")
        return b.grant_role("r1", users=["v", "x"]).grant_role("rd", users=["x"])
    if case == "order":
        # r7 {y, z, w} first, then r8 {x, y} (as large as r9, before it by name) adds x, r9
        # {v, x} adds v; r9 one larger goes before r8, which then adds nobody
        for role, holders in (("r7", ["y", "z", "w"]), ("r8", ["x", "y"]), ("r9", ["v", "x"])):
            b.role(role).allow(role, "catalog c", "USE_CATALOG").allow(role, "schema c.s1", *reads)
            b.grant_role(role, users=holders)
        return b
    # "two roles": v holds ra and rb; rb's MODIFY is v's alone (its other holders are denied
    # it), so ra, v's alone, covers v there: ra alone is not v's whole class
    b.role("ra").allow("ra", "catalog c", "USE_CATALOG").allow("ra", "schema c.s1", *reads)
    b.role("rb").allow("rb", "catalog c", "USE_CATALOG").allow("rb", "schema c.s1", "USE_SCHEMA")
    b.allow("rb", "schema c.s1", "MODIFY_TABLE").role("rd").deny("rd", "schema c.s1", "MODIFY_TABLE")
    b.grant_role("ra", users=["v"]).grant_role("rb", users=["v", "y", "z"])
    return b.grant_role("rd", users=["y", "z"])


@pytest.mark.parametrize(
    ("case", "role", "taken"),
    [
        ("taken", "r1", True),
        ("deny items", "r1", True),
        ("per-user", "r1", False),
        ("order", "r9", False),
        ("two roles", "ra", False),
        ("unsynced", "r1", False),
    ],
)
def test_a_joining_user_whose_items_may_move_compiles_the_role_s_databases(
    case: str, role: str, taken: bool, proofs: list[bool]
) -> None:
    """Fixed histories, each a hazard of the proof (``taken``: those it holds for): the
    other holders' DENYs through other roles (deny items of those roles); the choice of
    roles reordered; the other holder named by its per-user role; the other holder
    holding a second role; another holder's membership compiled by a plan but never
    pushed (Ranger does not hold it). Ranger equals a compile from scratch after each.
    Each of the proof's checks was seen to fail its case here when removed."""
    with Standin() as standin:
        backend = backend_on(standin)
        model = _case_model(case).model
        reconcile(backend, model, Scope.everything())
        assert scratch(standin, model).empty
        scope = Scope.nothing()
        if case == "unsynced":
            scope = applied(model, ch.grant_role(model, role, Principal.user("x")))
            planner.plan(backend, model, scope)  # compiled, never written
            proofs.clear()  # x joining alone was proved: the sync's own proof is asked
        reconcile(backend, model, scope | applied(model, ch.grant_role(model, role, Principal.user("j1"))))
        assert scratch(standin, model).empty, scratch(standin, model).ops
    assert any(proofs) is taken, proofs


@pytest.mark.parametrize("leaving", ["revoked", "group", "removed"])
def test_a_role_a_holder_left_comes_to_fit_its_other_holders_items_elsewhere(leaving: str) -> None:
    """The hazard of a membership ended (a user leaving a role: revoked, leaving a group
    holding it, removed): the role, smaller, comes to fit an item of its other holders in
    a database that names it nowhere. s1.a's readers are x and y (v, holding r1 too, is
    denied it): no role fits them, so per-user roles name them; ra (grants in s2 only)
    holds y and w. Once w leaves ra, ra is y alone and fits s1.a's readers (named there by
    a compile from scratch): the scoped sync of w's change compiles s1 too, though its
    scope names w alone (a revoke's names the role's holders; a group member's or a
    removed user's does not). Ranger's engine decides as the model after each sync."""
    b = estate(("v", "x", "y", "w"), member="w", schemas=("s1", "s2"), tables=("s1.a", "s2.a"))
    b.role("r1").allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", "USE_SCHEMA")
    b.allow("r1", "table c.s1.a", "SELECT_TABLE").role("rd").deny("rd", "table c.s1.a", "SELECT_TABLE")
    b.role("ra").allow("ra", "catalog c", "USE_CATALOG").allow(
        "ra", "schema c.s2", "USE_SCHEMA", "SELECT_TABLE"
    )
    b.grant_role("r1", users=["v", "x", "y"]).grant_role("rd", users=["v"])
    if leaving == "revoked":
        b.grant_role("ra", users=["y", "w"])
    else:
        b.grant_role("ra", users=["y"], groups=[GROUP])
    with Standin() as standin:
        backend = backend_on(standin)
        model = b.model
        reconcile(backend, model, Scope.everything())
        _judged(standin, model)
        assert not _naming(standin, "s1", "pd_ra")
        if leaving == "revoked":
            events = ch.revoke_role(model, "ra", Principal.user("w"))
        elif leaving == "group":
            events = ch.remove_member(model, GROUP, "w")
        else:
            events = ch.remove_user(model, "w")
        reconcile(backend, model, applied(model, events))
        _judged(standin, model)
        assert _naming(standin, "s1", "pd_ra")  # the hazard arose: ra fits s1.a's readers now


def _judged(standin: Standin, model: Model) -> None:
    """Ranger holds what a compile from scratch of ``model`` makes, and its engine decides
    every user (and a stranger) as the evaluator does."""
    assert scratch(standin, model).empty, [str(op) for op in scratch(standin, model).ops]
    result = probe(standin, model, "c", (*model.users, "stranger"))
    assert result.checks > 0 and result.mismatches == [], result.mismatches[:5]


def _naming(standin: Standin, database: str, role: str) -> bool:
    """Whether a Hive policy of ``database`` in the stand-in names the Ranger role ``role``."""
    return any(
        role in item.get("roles", ())
        for policy in standin.store.policies.values()
        if policy["service"] == "hive" and policy["resources"].get("database", {}).get("values") == [database]
        for item in (*policy.get("policyItems", ()), *policy.get("denyPolicyItems", ()))
    )


#: a random estate: each role's grants (beyond the catalog's gate) and holders
estates = st.lists(
    st.tuples(
        st.lists(
            st.tuples(
                st.sampled_from(OBJECTS[1:]),
                st.sampled_from(PRIVILEGES[1:]),
                st.sampled_from(("ALLOW", "ALLOW", "DENY")),
            ),
            max_size=4,
        ),
        st.sets(st.sampled_from(USERS), max_size=4),
    ),
    min_size=2,
    max_size=5,
)


def test_random_estates_joined_by_fresh_users_leave_ranger_as_a_compile_from_scratch(
    proofs: list[bool], capsys: pytest.CaptureFixture[str]
) -> None:
    """Random roles (grants, DENYs and holders drawn; holders sharing roles, roles of every
    size), then fresh users joining random roles one sync each: where the proof is asked
    the structures it must refuse (another holder with a second role, a per-user role, a
    role as large sharing a holder) arise by chance. Ranger equals a compile from scratch
    after every sync."""

    @settings(max_examples=histories(40), deadline=None, suppress_health_check=list(HealthCheck))
    @given(roles=estates, joins=st.lists(st.tuples(st.sampled_from(JOINERS), st.integers(0, 4)), max_size=4))
    def run(roles: list[tuple[list[tuple[str, str, str]], set[str]]], joins: list[tuple[str, int]]) -> None:
        b = estate((*USERS, *JOINERS), member=None, schemas=("s1", "s2"), tables=TABLES)
        for i, (grants, holders) in enumerate(roles):
            b.role(f"r{i}").allow(f"r{i}", "catalog c", "USE_CATALOG")
            for obj, privilege, condition in grants:
                try:
                    (b.allow if condition == "ALLOW" else b.deny)(f"r{i}", obj, privilege)
                except ModelError:
                    pass  # not granted on that object
            if holders:
                b.grant_role(f"r{i}", users=sorted(holders))
        joined = [("role_user", f"r{k % len(roles)}", joiner, True) for joiner, k in joins]
        with Standin() as standin:
            for _, model in synced(backend_on(standin), b.model, joined):
                assert scratch(standin, model).empty, (roles, joins, scratch(standin, model).ops[:5])

    run()
    taken, asked = sum(proofs), len(proofs)
    with capsys.disabled():
        print(f"\nranger joined roles, random estates: the proof taken {taken} of {asked} times asked")
    assert taken > 0, (taken, asked)
