"""A join cycle (a user joining two roles at once, each denying what the other allows) is
never wider on the way where the transient deny items cannot go where they usually do: the
user's per-user role edited by hand to hold somebody else, and the policy holding the deny
items a policy Ranger refuses to rewrite (a principal named null in it). After every write
of the apply, Ranger's own engine allows nothing that neither model allows, and the next
sync converges."""

from __future__ import annotations

from typing import Any

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import PermanentBackendError
from pushdown.reconcile import planner
from pushdown.reconcile.plan import Op
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import MEMBERS_IN, MEMBERS_OUT, NARROW, schedule
from pushdown_ranger.companion import is_narrowing
from pushdown_ranger.facts import PolicyFact, RoleFact
from tests.builders import Builder

from .test_ranger_apply_order import (
    KINDS,
    _cycle_new,
    _cycle_old,
    _names,
    _watched,
    allowed,
    held,
    keys,
    two_crossed_roles,
)
from .test_ranger_null_narrow import NULL_DENY
from .world import backend_for

pytestmark = pytest.mark.ranger
ALL = Scope.everything()


def _crossed_old() -> Builder:
    """r1 (v) may select every table but not modify orders; r2 (w) may modify every table
    but not select orders."""
    return two_crossed_roles(("table sales.crm.orders", "MODIFY_TABLE"), "MODIFY_TABLE")


def _crossed_new() -> Builder:
    """u joins r1 and r2 at once: the compile denies u select on orders through pdu_u."""
    return _crossed_old().grant_role("r1", users=["u"]).grant_role("r2", users=["u"])


def _synced(
    standin: Standin, pdu_u: list[str], old_new: tuple[Any, Any] = (_cycle_old, _cycle_new)
) -> tuple[Any, Any, Any, Any, Any]:
    """``old_new``'s old model synced, then a role ``pdu_u`` made by hand holding ``pdu_u``'s
    users (none made when empty): (the backend, old, new, the accesses asked, what either
    model allows)."""
    old, new = old_new[0]().model, old_new[1]().model
    backend = backend_for(standin, retries=0)
    reconcile(backend, old, ALL)
    if pdu_u:
        members = [{"name": user, "isAdmin": False} for user in pdu_u]
        standin.store.create_role({"name": "pdu_u", "users": members}, create_missing=True)
    asked = keys(old, new)
    return backend, old, new, asked, allowed(old, 0, asked) | allowed(new, 1, asked)


def _settled(standin: Standin, backend: Any, new: Any, asked: Any) -> None:
    """The next sync leaves nothing to do and Ranger's engine decides as ``new``; no role
    made for the join cycle (``pdu_u~…``) nor an item naming one is left."""
    reconcile(backend, new, ALL, retries=0)
    assert planner.plan(backend, new, ALL).empty
    assert held(standin, new, new, asked) == allowed(new, 1, asked)
    roles = {str(r["name"]) for r in standin.store.list_roles({})}
    assert not any(name.startswith("pdu_u~") for name in roles), roles
    named = {n for p in standin.store.list_policies({}) for kind in KINDS for n in _names(p, kind)}
    assert not any(name.startswith("pdu_u~") for name in named), named


@pytest.mark.parametrize("pdu_u", [["v"], []])
def test_a_per_user_role_edited_by_hand_takes_its_user_before_any_join(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch, pdu_u: list[str]
) -> None:
    """u joins pd_r1 and pd_r2 at once (:func:`_crossed_new`), the compile denying u select
    on orders through pdu_u, which Ranger holds edited by hand (holding v, or nobody). No
    allow item names pdu_u, so u joining it only narrows: u joins it with the other
    narrowing writes, v leaving it only after (leaving a role a deny item names widens),
    before u joins pd_r1 (which lets it select every table). Before, pdu_u was written
    whole among the joins, after pd_r1: u could select orders in between."""
    backend, old, new, asked, bound = _synced(ranger_standin, pdu_u, (_crossed_old, _crossed_new))
    seen = _watched(ranger_standin, backend, monkeypatch, bound, asked, old, lambda name, payload: False)
    reconcile(backend, new, ALL, retries=0)
    assert [(name, wider) for name, wider in seen if wider] == []
    monkeypatch.undo()
    _settled(ranger_standin, backend, new, asked)


@pytest.mark.parametrize("pdu_u", [["v"], ["u", "v"]])
def test_a_per_user_role_edited_by_hand_never_leaves_a_join_cycle_wider(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch, pdu_u: list[str]
) -> None:
    """u joins pd_r1 and pd_r2 at once (:func:`_cycle_new`: a join cycle) while Ranger holds
    a role pdu_u made (or edited) by hand, which the plan removes: holding v and not u, or
    u and v. Where it holds u the transient deny items name it (v, denied too for the
    while, is narrower); where it does not (before, no transient deny item was written for
    u then), they name a role made for that apply alone holding u (``pdu_u~1``), removed
    after. After every write Ranger's engine allows nothing neither model allows; the next
    sync converges."""
    backend, old, new, asked, bound = _synced(ranger_standin, pdu_u)
    plan, snapshot, _ = planner.plan_for(backend, new, ALL)
    writes = backend.writes(plan, snapshot)
    made = {w.step.fact.name for w in writes if w.transient and w.extra and isinstance(w.step.fact, RoleFact)}
    denied = {r for w in writes if w.transient and w.stage == NARROW for r, _ in w.step.after.deny}
    seen = _watched(ranger_standin, backend, monkeypatch, bound, asked, old, lambda name, payload: False)
    reconcile(backend, new, ALL, retries=0)
    assert [(name, wider) for name, wider in seen if wider] == []
    if "u" in pdu_u:
        assert made == set() and "pdu_u" in denied, (made, denied)  # relied on
    else:
        assert made == {"pdu_u~1"} and "pdu_u~1" in denied and "pdu_u" not in denied, (made, denied)
    monkeypatch.undo()
    _settled(ranger_standin, backend, new, asked)


def test_a_join_cycle_through_a_policy_ranger_refuses_to_rewrite_is_never_wider(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """u joins pd_r1 and pd_r2 at once (:func:`_cycle_new`), and the policy holding pd_r1's
    deny items (create in crm) holds a deny item for a principal named null, stored behind
    the validator: Ranger refuses any rewrite of it, so the transient deny item for u goes
    into an override-priority narrowing policy beside it (the allow the model adds there is
    reported, not added). After every write (the refused ones too), of that sync and the
    next, Ranger's engine allows nothing neither model allows, and the null deny is never
    dropped. Once the policy is fixed by hand, the next sync converges: no narrowing
    policy, no pdu_u left."""
    backend, old, new, asked, bound = _synced(ranger_standin, [])
    store = ranger_standin.store
    (target,) = [p for p in store.list_policies({}) if "pd_r1" in _names(p, "denyPolicyItems")]
    edit = {**target, "denyPolicyItems": [*target["denyPolicyItems"], NULL_DENY]}
    store.update_policy(int(target["id"]), edit, checked=False)
    assert held(ranger_standin, old, old, asked) - bound == set()
    narrowed: list[bool] = []

    def watch(name: str, payload: Any) -> bool:
        if name in ("create_policy", "update_policy") and is_narrowing(payload, "pushdown"):
            narrowed.append("pdu_u" in _names(payload, "denyPolicyItems"))
        return False

    for _ in range(2):
        seen = _watched(ranger_standin, backend, monkeypatch, bound, asked, old, watch)
        with pytest.raises(PermanentBackendError, match="3053"):
            reconcile(backend, new, ALL, retries=0)
        monkeypatch.undo()
        assert [(name, wider) for name, wider in seen if wider] == [], seen
        assert NULL_DENY in store.policy(int(target["id"]))["denyPolicyItems"]
    assert narrowed[0], narrowed  # the transient deny went beside the policy
    fixed = store.policy(int(target["id"]))
    fixed["denyPolicyItems"] = [i for i in fixed["denyPolicyItems"] if i != NULL_DENY]
    store.update_policy(int(target["id"]), fixed, checked=False)
    seen = _watched(ranger_standin, backend, monkeypatch, bound, asked, old, lambda n, p: False)
    reconcile(backend, new, ALL, retries=0)
    monkeypatch.undo()
    assert [(name, wider) for name, wider in seen if wider] == []
    assert planner.plan(backend, new, ALL).empty
    assert held(ranger_standin, new, new, asked) == allowed(new, 1, asked)
    assert not [p for p in store.list_policies({}) if is_narrowing(p, "pushdown")]
    assert "pdu_u" not in {str(r["name"]) for r in store.list_roles({})}


@pytest.mark.parametrize("nested", ["no", "in pushdown's", "in a hand-made role"])
@pytest.mark.parametrize("x_leaves", [True, False])
def test_a_join_to_a_role_only_deny_items_name_goes_early_unless_it_is_nested(
    nested: str, x_leaves: bool
) -> None:
    """The schedule alone: u joins pdu_u (x leaving it, or staying), which only a deny item
    names: joining it only narrows, so u joins it with the narrowing writes (stage 2: the
    members of before and after, x leaving only after), before any join of a role allow
    items name. A role nested in another by hand (pd_x, or a hand-made role, holding pdu_u
    as a member: Ranger gives pdu_u's members that role's allows) is not: u joins it among
    the joins (stage 4)."""
    t = PolicyFact("hive", (("database", ("crm",), False),), frozenset({("pd_x", "select")}), frozenset())
    deny = PolicyFact("hive", (("database", ("hr",), False),), frozenset(), frozenset({("pdu_u", "drop")}))
    x = RoleFact("pd_x", frozenset({"v"}), roles=frozenset({"pdu_u"} if nested == "in pushdown's" else ()))
    held: list[Any] = [t, deny, x]
    before = RoleFact("pdu_u", frozenset({"x"}))
    after = RoleFact("pdu_u", frozenset({"u"} if x_leaves else {"u", "x"}))
    ops = [Op("change", before, after)]
    elsewhere = ["pdu_u"] if nested == "in a hand-made role" else []
    steps = [(w.stage, w.step.after) for w in schedule(ops, held, None, (), "pdu_", elsewhere)]
    if nested != "no":
        assert (MEMBERS_IN, after) in steps and all(s < MEMBERS_IN for s, a in steps if a != after), steps
    elif x_leaves:
        assert steps == [(MEMBERS_OUT, RoleFact("pdu_u", frozenset({"u", "x"}))), (MEMBERS_OUT, after)]
    else:
        assert steps == [(MEMBERS_OUT, after)]


def test_a_hand_made_role_holding_a_per_user_role_keeps_its_joins_among_the_joins(
    ranger_standin: Standin,
) -> None:
    """The backend's writes: u joins pd_r1 and pd_r2 (:func:`_crossed_new`) while pdu_u,
    edited by hand to hold v, is a member of a hand-made role: u joins pdu_u among the
    joins of roles allow items name, never with the narrowing writes."""
    backend, _, new, _, _ = _synced(ranger_standin, ["v"], (_crossed_old, _crossed_new))
    ranger_standin.store.create_role({"name": "team", "roles": [{"name": "pdu_u", "isAdmin": False}]})
    plan, snapshot, _ = planner.plan_for(backend, new, ALL)
    joins = [w.stage for w in backend.writes(plan, snapshot) if "u" in getattr(w.step.after, "users", ())]
    assert joins and all(stage == MEMBERS_IN for stage in joins), joins
