"""pushdown's Ranger roles follow the change (issue 30): a scoped compile makes again only the
Ranger roles of the model roles whose holders a change can have moved (those the users its
events name hold or held), and keeps the others while the model's memberships are those
they were made from; a full compile makes them all.

Counted, not timed: a role granted to one more user, a role revoked from one and a user
joining a group make as many roles (1, 1 and the group's roles) in an estate ten times
larger, a one-table grant none. Over random histories of memberships, groups, users and
roles (each synced over its events' scope, some several changes at once, as a daemon
gathers them, some not named by the scope at all), the scoped compile equals the whole one
at every step: what the scope misses is caught by comparing the model's memberships."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.identity import KeptIdentity
from pushdown.reconcile.scope import Scope, scope_of
from pushdown_ranger import compile as compile_module
from pushdown_ranger.compile import compile_all
from pushdown_ranger.compile import desired as desired_module
from pushdown_ranger.compile.naming import RangerNaming
from pushdown_ranger.facts import PolicyFact
from pushdown_ranger.scoping import members_moved, scope_users
from tests.adversary import histories
from tests.costs import at_both_scales, do, estate

DENY = {"hive": True, "hdfs": True, "kafka": True}
KW: dict[str, Any] = {"elsewhere": frozenset(), "hive": "c", "voided": {}, "services": frozenset(DENY)}
#: Ranger roles a one-membership change makes again, whatever the estate
MADE_BOUND = 2


class Compiler:
    """The backend's way of compiling: one kept identity, each change compiled over the
    scope its events name (the users it maps again, the users whose memberships moved)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.naming = RangerNaming()
        self.kept = KeptIdentity(self.naming.user, stable=lambda: True)
        self.full()

    def full(self) -> Desired:
        identity = self.kept.of(self.model.users)
        return compile_all(self.model, ["c"], self.naming, DENY, focus=None, identity=identity, **KW)

    def scoped(self, events: list[ev.Event]) -> Desired:
        scope = Scope.union(scope_of(e) for e in events).resolve(self.model)
        identity = self.kept.of(self.model.users, scope_users(scope))
        moved = members_moved(scope)
        return compile_all(
            self.model, ["c"], self.naming, DENY, focus=None, identity=identity, members_moved=moved, **KW
        )


def whole(model: Model) -> Desired:
    """The compile of a copy of ``model`` from nothing kept (the memos put back after)."""
    memo, who = list(desired_module._MEMO), list(compile_module._WHO)
    try:
        return compile_all(copy.deepcopy(model), ["c"], RangerNaming(), DENY, focus=None, **KW)
    finally:
        desired_module._MEMO[:], compile_module._WHO[:] = memo, who


@contextmanager
def counting_made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The model roles whose Ranger roles the compile makes (their holders asked)."""
    made: list[str] = []
    make = desired_module._Memo._make

    def counted(self: Any, model: Model, naming: Any, who: Any, role: str) -> None:
        made.append(role)
        make(self, model, naming, who, role)

    with monkeypatch.context() as m:
        m.setattr(desired_module._Memo, "_make", counted)
        yield made


def changes_made(scale: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int, int, int]:
    """Roles made by a one-table grant, a role granted to one more user, the role revoked
    from them, and a user joining a group that holds one role, in :func:`estate`."""
    model = estate(scale, "rg", gate_each=True)
    do(model, ch.add_user(model, "newcomer"))
    do(model, ch.create_role(model, "solo"))  # newcomer its only holder, then nobody
    do(model, ch.add_group(model, "team"))
    do(model, ch.grant_role(model, "r1", Principal.group("team")))
    compiler = Compiler(model)
    out: list[int] = []
    for change in (
        lambda: ch.grant_privileges(model, "r2", ObjectRef.parse("table c.crm.t0"), ["MODIFY_TABLE"]),
        lambda: ch.grant_role(model, "solo", Principal.user("newcomer")),
        lambda: ch.revoke_role(model, "solo", Principal.user("newcomer")),
        lambda: ch.add_member(model, "team", "newcomer"),
    ):
        events = change()
        do(model, events)
        with counting_made(monkeypatch) as made:
            scoped = compiler.scoped(events)
        assert scoped == whole(model)
        out.append(len(made))
    return out[0], out[1], out[2], out[3]


def test_a_membership_change_makes_as_many_ranger_roles_in_an_estate_ten_times_larger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small, large = at_both_scales(lambda scale: changes_made(scale, monkeypatch))
    print(f"\nranger roles made (grant, member in, member out, group member): {small} / {large}")
    assert small == large, (small, large)
    grant, joined, left, grouped = small
    assert grant == 0
    assert 1 <= joined <= MADE_BOUND and 1 <= left <= MADE_BOUND
    assert 1 <= grouped <= MADE_BOUND  # the group's role


def test_a_full_compile_makes_every_ranger_role(monkeypatch: pytest.MonkeyPatch) -> None:
    model = estate(1, "rg", gate_each=True)
    compiler = Compiler(model)
    with counting_made(monkeypatch) as made:
        compiler.full()
    assert sorted(made) == sorted(model.roles)


USERS = ("u1", "u2", "u3")
GROUPS = ("g1", "g2")
ROLES = ("r1", "r2", "r3")
users = st.sampled_from(USERS)
principals = st.one_of(users.map(Principal.user), st.sampled_from(GROUPS).map(Principal.group))
changes = st.one_of(
    st.tuples(st.sampled_from(("grant_role", "revoke_role")), st.sampled_from(ROLES), principals),
    st.tuples(st.sampled_from(("add_member", "remove_member")), st.sampled_from(GROUPS), users),
    st.tuples(st.sampled_from(("add_group", "remove_group")), st.sampled_from(GROUPS)),
    st.tuples(st.sampled_from(("add_user", "remove_user")), st.sampled_from(USERS)),
    st.tuples(st.sampled_from(("create_role", "delete_role")), st.sampled_from(ROLES)),
    st.tuples(st.just("grant"), st.sampled_from(ROLES), st.sampled_from(("a", "b"))),
)
#: a change, or one the sync's scope does not name (the model moved past the events synced:
#: a group dropped by its event alone, as a journal may hold it, or any other change)
steps = st.one_of(
    changes.map(lambda step: (False, step)),
    changes.map(lambda step: (True, step)),
    st.sampled_from(GROUPS).map(lambda group: (True, ("group_removed", group))),
)


def start() -> Model:
    model = Model()
    do(model, ch.create_object(model, ObjectRef.of("catalog", "c"), properties={"backend": "rg"}))
    do(model, ch.create_object(model, ObjectRef.parse("schema c.s")))
    for table in ("a", "b"):
        do(model, ch.create_object(model, ObjectRef.parse(f"table c.s.{table}")))
    for user in USERS:
        do(model, ch.add_user(model, user))
    for role in ROLES:
        do(model, ch.create_role(model, role))
        gates = ["USE_CATALOG", "USE_SCHEMA"]
        do(model, ch.grant_privileges(model, role, ObjectRef.of("catalog", "c"), gates))
    do(model, ch.add_group(model, "g1", ["u1"]))
    do(model, ch.grant_role(model, "r1", Principal.group("g1")))
    do(model, ch.grant_role(model, "r2", Principal.user("u2")))
    return model


def events_for(model: Model, step: tuple[Any, ...]) -> list[ev.Event]:
    kind, *args = step
    if kind == "group_removed":
        return [ev.GroupRemoved(args[0])] if args[0] in model.groups else []
    if kind == "grant":
        return ch.grant_privileges(model, args[0], ObjectRef.parse(f"table c.s.{args[1]}"), ["SELECT_TABLE"])
    if kind in ("add_group", "create_role"):
        return getattr(ch, kind)(model, args[0])
    result: list[ev.Event] = getattr(ch, kind)(model, *args)
    return result


def test_the_scoped_compile_of_random_memberships_equals_the_whole_one() -> None:
    @settings(max_examples=histories(200), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(st.lists(steps, min_size=1, max_size=3), min_size=1, max_size=8))
    def run(history: list[list[tuple[bool, tuple[Any, ...]]]]) -> None:
        model = start()
        compiler = Compiler(model)
        for batch in history:  # the changes of a batch synced at once (a daemon's gather)
            events: list[ev.Event] = []
            for unnamed, step in batch:
                try:
                    made = events_for(model, step)
                except ModelError:
                    continue
                do(model, made)
                events += [] if unnamed else made
            if events or batch[-1][0]:
                assert compiler.scoped(events) == whole(model), batch

    run()


def kept_choices() -> Model:
    """Users ``a`` and ``b`` select from ``c.s`` through role ``wide``, which they hold, and
    hold role ``pair`` (no grants; one as large, first by name) too, ``pair`` through group
    ``g`` for ``b``; ``c`` holds nothing. The every-table policy names ``pair`` (the
    policies' choice of Ranger roles, ``desired._cover``: the largest fitting role first)."""
    from tests.builders import Builder

    b = Builder().catalog("c", backend="rg").schema("c.s").table("c.s.t").users("a", "b", "c")
    b.role("wide").allow("wide", "catalog c", "USE_CATALOG").allow(
        "wide", "schema c.s", "USE_SCHEMA", "SELECT_TABLE"
    )
    b.role("pair").group("g", "b").grant_role("wide", users=["a", "b"]).grant_role(
        "pair", users=["a"], groups=["g"]
    )
    return b.model


def names_in_policies(desired: Desired) -> set[str]:
    return {r for f in desired.facts if isinstance(f, PolicyFact) for r, _ in f.allow | f.deny}


@pytest.mark.parametrize(
    "change",
    [
        # a role the policy's users all hold gains a holder outside them: it no longer fits
        # (the users of every policy as they were: only the choice moved)
        ("grant_role", "pair", "c"),
        # the same through a group the role is granted to
        ("add_member", "g", "c"),
        # a role leaves one of them: it no longer fits, the next largest is chosen
        ("revoke_role", "pair", "a"),
        # and one of them leaves the group: the same
        ("remove_member", "g", "b"),
    ],
)
def test_a_kept_choice_of_ranger_roles_is_made_again_when_a_role_s_holders_move(
    change: tuple[str, str, str],
) -> None:
    """The choice of Ranger roles kept between compiles (``desired._Memo.covers``) for a set
    of users that did not change is made again when a role's holders moved: each change
    here moves what the every-table policy names without moving whom it allows, so a choice
    kept without the stamps' proof (``_Memo.kept``) names ``pair`` where a compile from
    scratch names ``wide``. A one-table grant next keeps the choices, and equals it too."""
    model = kept_choices()
    compiler = Compiler(model)
    assert "pd_pair" in names_in_policies(compiler.full()) - {"pd_wide"}
    kind, target, whom = change
    if kind in ("grant_role", "revoke_role"):
        events = getattr(ch, kind)(model, target, Principal.user(whom))
    else:
        events = getattr(ch, kind)(model, target, whom)
    do(model, events)
    scoped = compiler.scoped(events)
    assert scoped == whole(model), change
    assert "pd_pair" not in names_in_policies(scoped), change
    events = ch.grant_privileges(model, "wide", ObjectRef.parse("table c.s.t"), ["MODIFY_TABLE"])
    do(model, events)
    assert compiler.scoped(events) == whole(model)


@pytest.mark.parametrize(
    "batch",
    [
        # a user added (the choices handed to the next memo) with a holder of ``pair``
        # added through its group, the hint naming it or not
        [("add_user", "d"), ("add_member", "g", "c")],
        [("add_user", "d"), ("add_member", "g", "d")],
        # a user removed that holds nothing, and ``pair`` granted to one outside the users
        [("remove_user", "c"), ("grant_role", "pair", "b", "direct")],
        [("add_user", "d"), ("grant_role", "pair", "d", "direct")],
        # ``pair`` deleted and made again, held by one more (its grants gone with it)
        [("delete_role", "pair"), ("create_role", "pair"), ("grant_role", "pair", "a", "direct")],
        [("delete_role", "pair"), ("create_role", "pair"), ("grant_role", "pair", "c", "direct")],
        # a holder removed and added again, holding nothing now
        [("remove_user", "a"), ("add_user", "a")],
        # ``pair``'s case twin made, and a holder of ``pair`` added
        [("create_role", "Pair"), ("add_member", "g", "c")],
    ],
)
@pytest.mark.parametrize("named", [True, False])
def test_kept_choices_handed_over_after_users_or_roles_come_and_go_equal_the_whole_compile(
    batch: list[tuple[str, ...]], named: bool
) -> None:
    """A user or role added or removed hands the kept choices of Ranger roles to the next
    memo (``desired._Memo.handed``); a membership in the same batch (named by the events or
    not) moves ``pair``'s holders beyond the users it was chosen for: the choice handed over
    must be made again (a stale one names ``pair``, whose extra holder the model does not
    allow: wider). A grant next keeps what stands, and equals the whole compile too."""
    model = kept_choices()
    compiler = Compiler(model)
    assert "pd_pair" in names_in_policies(compiler.full())
    events: list[ev.Event] = []
    for step in batch:
        kind, *args = step
        if kind == "grant_role":
            made = ch.grant_role(model, args[0], Principal.user(args[1]))
        elif kind in ("add_member",):
            made = ch.add_member(model, args[0], args[1])
        else:
            made = getattr(ch, kind)(model, args[0])
        do(model, made)
        events += made if named or kind != batch[-1][0] else []
    assert compiler.scoped(events) == whole(model), batch
    events = ch.grant_privileges(model, "wide", ObjectRef.parse("table c.s.t"), ["MODIFY_TABLE"])
    do(model, events)
    assert compiler.scoped(events) == whole(model), batch
