"""Review of the join cycle, the joined-role focus and the kept roles proved by stamps:
each test states what a hostile history does and is judged as its neighbours judge."""

from __future__ import annotations

from pushdown.model import events as ev
from pushdown.model.directory import with_members
from pushdown.model.principals import Principal
from pushdown.model.state import Model
from pushdown_ranger.compile import desired

from .histories import role_holders


def test_a_view_with_the_directorys_members_proves_nothing_false_of_the_model_it_was_made_from() -> None:
    """A view of the model with the directory's members (a dry run's, a decision's:
    :func:`pushdown.model.directory.with_members`) stamps the members it adds; were the
    stamps written into the model it was made from without the model's count moving, a
    user of the next sync's hint (``b``, named by a change that stamps nobody) would look
    stamped, and a stamp the hint does not name (``a``'s, its group removed) would be taken
    for it: the kept roles would keep ``a`` in ``r`` (WIDER)."""
    model = Model()
    for e in (
        ev.UserAdded("a"),
        ev.UserAdded("b"),
        ev.GroupAdded("g"),
        ev.GroupAdded("h"),
        ev.GroupMemberAdded("g", "a"),
        ev.RoleCreated("r"),
        ev.RoleGranted("r", Principal.group("g")),
    ):
        model.apply(e)
    seen = desired._Seen.of(model)
    held = {u: set(model.roles_of(u)) for u in model.users}
    with_members(model, {"h": {"b"}})  # read, never changed: the model's stamps stand
    model.apply(ev.GroupRemoved("g"))  # stamps a; the sync's hint names b alone
    if seen.stamped_only(model, {"b"}):
        seen.moved(model, frozenset({"b"}), held)
        assert role_holders(seen) == role_holders(model)


def test_a_per_user_role_the_plan_changes_but_that_holds_its_user_throughout_breaks_a_join_cycle() -> None:
    """u joins pd_a and pd_b, each denying on t what the other allows on every table (the
    cycle of ``test_a_join_cycle_through_policies_the_plan_leaves_is_broken_by_transient_deny_items``),
    while the plan also takes a member put in by hand (x) out of u's per-user role: u is in
    that role before and after its write, so the transient deny items through it hold u
    the whole way. Left without them, u holds pd_b's update on t (or pd_a's select on t)
    between its two joins, which neither model allows (WIDER on the way)."""
    from pushdown.reconcile.plan import Op
    from pushdown_ranger.backend import MEMBERS_IN, NARROW, schedule
    from pushdown_ranger.facts import PolicyFact, RoleFact

    from .test_ranger_apply_order import _policy

    every = _policy("?*", allow=frozenset({("pd_a", "select"), ("pd_b", "update")}))
    t = _policy("t", deny=frozenset({("pd_a", "update"), ("pd_b", "select")}))
    pdu = RoleFact("pdu_u", frozenset({"u", "x"}))
    held = [every, t, RoleFact("pd_a", frozenset({"v"})), RoleFact("pd_b", frozenset({"w"})), pdu]
    ops = [
        Op("change", RoleFact("pd_a", frozenset({"v"})), RoleFact("pd_a", frozenset({"u", "v"}))),
        Op("change", RoleFact("pd_b", frozenset({"w"})), RoleFact("pd_b", frozenset({"u", "w"}))),
        Op("change", pdu, RoleFact("pdu_u", frozenset({"u"}))),
    ]
    writes = schedule(ops, held, None, (), "pdu_")
    transient = [
        w for w in writes if w.transient and w.stage == NARROW and isinstance(w.step.after, PolicyFact)
    ]
    assert transient and all(w.stage < MEMBERS_IN for w in transient), writes
    assert any(role == "pdu_u" for w in transient for role, _ in w.step.after.deny)
