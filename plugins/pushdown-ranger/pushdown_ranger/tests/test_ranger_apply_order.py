"""The apply order never widens on the way: after ANY prefix of an apply's writes (the
stand-in dies after the k-th), the stand-in allows no (user, access, resource) that
neither the old nor the new model allows, and while only narrowing writes have run,
nothing the old model does not allow."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_ground_truth import allows
from pushdown_lab.ranger_standin import Standin

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import BackendError, ModelError, TemporaryBackendError
from pushdown.model import changes as ch
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.plan import Op
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import CREATE_ROLES, DROP_ROLES, MEMBERS_IN, MEMBERS_OUT, NARROW, WIDEN, schedule
from pushdown_ranger.facts import PolicyFact, RoleFact
from pushdown_ranger.mapping import NEW_TABLE_ACCESS
from tests.adversary import histories
from tests.builders import Builder

from .probe import REPLACE, authorized, checks
from .test_ranger_histories import events_for, start, steps
from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()
Key = tuple[str, str, str, str]


def keys(*models: Model) -> dict[Key, dict[int, tuple[str, ObjectRef]]]:
    """Every (user, service, resource, access) either model decides, with what it asks of each."""
    out: dict[Key, dict[int, tuple[str, ObjectRef]]] = {}
    users = sorted({u for m in models for u in m.users} | {"stranger"})
    for i, model in enumerate(models):
        for service, resource, access, op, obj in checks(model, "c" if "c" in _catalogs(model) else "sales"):
            for user in users:
                key = (user, service, json.dumps(resource, sort_keys=True), access)
                out.setdefault(key, {})[i] = (op, obj)
    return out


def _catalogs(model: Model) -> set[str]:
    return {o.names[0] for o in model.objects}


def allowed(model: Model, index: int, asked: dict[Key, dict[int, tuple[str, ObjectRef]]]) -> set[Key]:
    evaluator = Evaluator(model)
    out = set()
    for key, by_model in asked.items():
        user = key[0]
        op_obj = by_model.get(index) or next(iter(by_model.values()))
        if user not in model.users:
            continue
        if op_obj[0] == REPLACE and op_obj[1] not in model.objects:
            # a table this model does not hold (dropped): ``create`` makes a new one, as
            # for any name its schema does not hold yet
            op_obj = (dict(NEW_TABLE_ACCESS)[key[3]], op_obj[1])
        try:
            if authorized(evaluator, user, op_obj[0], op_obj[1]):
                out.add(key)
        except ModelError:
            continue
    return out


def held(standin: Standin, old: Model, new: Model, asked: dict[Key, Any]) -> set[Key]:
    """What Ranger's own engine allows now (the stand-in's held equal to it), in one batch."""
    keys = list(asked)
    groups = {u: sorted(set(old.user_groups.get(u, ())) | set(new.user_groups.get(u, ()))) for u, *_ in keys}
    answers = allows(standin, [(s, json.loads(r), a, u, groups[u]) for u, s, r, a in keys])
    return {key for key, yes in zip(keys, answers, strict=True) if yes}


def wider_on_the_way(
    make_old: Callable[[], Builder], make_new: Callable[[], Builder], writes_out: list[Any] | None = None
) -> list[str]:
    """Apply old -> new, dying after k writes for every k; what any prefix allowed beyond the
    models (empty: never wider). Group membership is the old model's where they differ
    (pushdown does not write groups). ``writes_out``: given the apply's writes."""
    old, new = make_old().model, make_new().model
    asked = keys(old, new)
    allow_old, allow_new = allowed(old, 0, asked), allowed(new, 1, asked)
    with Standin() as standin:
        backend = backend_for(standin)
        reconcile(backend, old, ALL)
        plan, snapshot, _ = planner.plan_for(backend, new, ALL)
        writes = backend.writes(plan, snapshot)
    if writes_out is not None:
        writes_out.extend(writes)
    narrowing = sum(1 for w in writes if w.stage <= NARROW)
    found: list[str] = []
    for k in range(1, len(writes)):
        with Standin() as standin:
            backend = backend_for(standin, retries=0)
            reconcile(backend, old, ALL)
            standin.faults.die_after_writes(k)
            with pytest.raises(TemporaryBackendError):
                reconcile(backend, new, ALL, retries=0)
            now = held(standin, old, old, asked)
        bound = allow_old if k <= narrowing else allow_old | allow_new
        found += [f"after {k} of {len(writes)} writes: {key}" for key in sorted(now - bound)]
    return found


def test_a_table_deny_goes_only_after_the_every_table_policy_is_narrowed() -> None:
    """reader may select every table and modify every table but orders; MODIFY is revoked:
    the deny on orders is not needed any more. Removed first (the order before), reader
    could update orders between the two writes: neither model allows that."""

    def old() -> Builder:
        return (
            sales()
            .allow("reader", "catalog sales", "MODIFY_TABLE")
            .deny("reader", "table sales.crm.orders", "MODIFY_TABLE")
        )

    def new() -> Builder:
        b = old()
        ref = ObjectRef.parse("catalog sales")
        for event in ch.revoke_privileges(b.model, "reader", ref, ["MODIFY_TABLE"], Condition.ALLOW):
            b.model.apply(event)
        return b

    assert wider_on_the_way(old, new) == []


def test_two_changes_that_narrow_and_widen_are_split_narrowing_first(ranger_standin: Standin) -> None:
    """Two policies each lose one role's item and gain another's: each is written twice,
    both narrowed before either widens; the plan still shows one operation per policy."""

    def old() -> Builder:
        return (
            sales()
            .role("other", users=["carol"])
            .allow("other", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "MODIFY_TABLE")
            .deny("reader", "table sales.crm.orders", "SELECT_TABLE")
            .deny("other", "table sales.crm.leads", "MODIFY_TABLE")
        )

    def new() -> Builder:
        b = old()
        for role, obj, priv in (
            ("reader", "table sales.crm.orders", "SELECT_TABLE"),
            ("other", "table sales.crm.leads", "MODIFY_TABLE"),
        ):
            for event in ch.revoke_privileges(b.model, role, ObjectRef.parse(obj), [priv], Condition.DENY):
                b.model.apply(event)
        for role, obj, priv in (
            ("other", "table sales.crm.orders", "MODIFY_TABLE"),
            ("reader", "table sales.crm.leads", "SELECT_TABLE"),
        ):
            for event in ch.grant_privileges(b.model, role, ObjectRef.parse(obj), [priv], Condition.DENY):
                b.model.apply(event)
        return b

    backend = backend_for(ranger_standin)
    reconcile(backend, old().model, ALL)
    plan = planner.plan(backend, new().model, ALL)
    writes = schedule(plan.ops)
    assert len(writes) == len(plan.ops) + 2 == 4
    assert [w.widens for w in writes] == [False, False, True, True]
    assert wider_on_the_way(old, new) == []


PROFILE = settings(
    max_examples=histories(25),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


#: grants on the catalog with DENY exceptions on tables: the every-table and table-level
#: policies that a batch narrows and widens at once
RICH = (
    ("grant", "r1", "catalog c", "SELECT_TABLE", "ALLOW"),
    ("grant", "r1", "catalog c", "MODIFY_TABLE", "ALLOW"),
    ("grant", "r2", "catalog c", "SELECT_TABLE", "ALLOW"),
    ("grant", "r1", "table c.s1.a", "MODIFY_TABLE", "DENY"),
    ("grant", "r2", "table c.s2.b", "SELECT_TABLE", "DENY"),
    ("grant", "r2", "schema c.s1", "SELECT_TABLE", "DENY"),
)
#: a batch step: any history step but a change of group membership (the directory's, not
#: pushdown's to order: the stand-in is asked with the old groups), or undoing one of :data:`RICH`
batch_steps = st.one_of(
    steps.filter(lambda s: s[0] != "member"),
    st.sampled_from(RICH).map(lambda s: ("revoke", *s[1:])),
    st.sampled_from(RICH).map(lambda s: (s[0], s[1], s[2], s[3], "DENY" if s[4] == "ALLOW" else "ALLOW")),
)


def _built(history: list[tuple[Any, ...]], *users: str) -> Builder:
    b = start().users(*users)
    history = [*RICH, *history]
    for step in history:
        try:
            events = events_for(b.model, step)
        except ModelError:
            continue
        for event in events:
            b.model.apply(event)
    return b


#: grants that let r2 do what r1 denies (:data:`RICH`: r1 may modify every table but c.s1.a,
#: r2 may select every table but some), for a user joining both (``None``: no grant)
CROSS: tuple[tuple[Any, ...] | None, ...] = (
    ("grant", "r2", "catalog c", "MODIFY_TABLE", "ALLOW"),
    ("grant", "r2", "schema c.s1", "MODIFY_TABLE", "ALLOW"),
    ("grant", "r2", "table c.s1.a", "MODIFY_TABLE", "ALLOW"),
    None,
)


def test_random_batches_of_changes_are_never_wider_on_the_way(capsys: pytest.CaptureFixture[str]) -> None:
    """A random model, then a random batch of changes synced at once."""
    totals = {"batches": 0, "wider": 0, "cycles": 0}

    @PROFILE
    @given(
        before=st.lists(steps, max_size=3),
        batch=st.lists(batch_steps, min_size=2, max_size=5),
        both=st.none() | st.tuples(st.sampled_from(("u1", "u4")), st.sampled_from(CROSS)),
    )
    # u3 joins r1, whose new deny on every table of c covers s2.b: r2's deny there went
    # before u3 joined (a window where u3 selected s2.b, which neither model allows)
    @example(
        before=[],
        batch=[("grant", "r1", "catalog c", "MODIFY_TABLE", "DENY"), ("role_user", "r1", "u3", True)],
        both=None,
    )
    # u3 joins r1, whose new deny on c.s2.b replaces r2's deny there in one policy: that
    # change written whole before u3 joined, r2's deny went first (u3 selected s2.b)
    @example(
        before=[],
        batch=[
            ("grant", "r1", "catalog c", "USE_CATALOG", "ALLOW"),
            ("role_user", "r1", "u3", True),
            ("grant", "r1", "table c.s2.b", "MODIFY_TABLE", "DENY"),
        ],
        both=None,
    )
    # u1 joins r1 and r2 at once, r2 now allowed to modify what r1 denies modifying (c.s1.a)
    # and r1 allowed to select what r2 denies selecting: a cycle, no order of joins is safe
    @example(
        before=[("role_group", "r1", False)],
        batch=[("grant", "r1", "catalog c", "USE_CATALOG", "ALLOW")],
        both=("u1", CROSS[0]),
    )
    def run(
        before: list[tuple[Any, ...]],
        batch: list[tuple[Any, ...]],
        both: tuple[str, tuple[Any, ...] | None] | None,
    ) -> None:
        users: tuple[str, ...] = ()
        if both is not None:
            # one user (u4: a new one, holding nothing) joins both roles in the batch, r2
            # perhaps allowed what r1 denies (r2 denies what r1 allows): a join cycle, often
            user, grant = both
            users = ("u4",)
            batch = [*batch, *([grant] if grant else []), ("role_user", "r1", user, True)]
            batch.append(("role_user", "r2", user, True))
        writes: list[Any] = []
        found = wider_on_the_way(
            lambda: _built(before, *users), lambda: _built(before + batch, *users), writes
        )
        totals["batches"] += 1
        totals["wider"] += len(found)
        totals["cycles"] += any(w.transient for w in writes)
        assert found == [], (before, batch, found[:5])

    run()
    with capsys.disabled():
        print(
            f"\nranger apply order: {totals['batches']} batches ({totals['cycles']} with a join cycle "
            f"broken by transient deny items), {totals['wider']} wider on the way"
        )
    assert totals["batches"] > 0


def test_a_member_joins_a_denying_role_before_the_deny_item_it_replaces_goes() -> None:
    """u and v may select every table; r3 (u) and rd (v) deny select on orders, so the orders
    policy names both. rd is granted to u: it now covers everybody denied, and r3's item
    goes. Were u to join pd_rd only after that item is removed (members last), u could
    select orders in between: both models deny it."""

    def old() -> Builder:
        return (
            Builder()
            .users("u", "v")
            .catalog("sales", backend="rg")
            .schema("sales.crm")
            .table("sales.crm.orders")
            .table("sales.crm.leads")
            .role("reader", users=["u", "v"])
            .role("r3", users=["u"])
            .role("rd", users=["v"])
            .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
            .deny("r3", "table sales.crm.orders", "SELECT_TABLE")
            .deny("rd", "table sales.crm.orders", "SELECT_TABLE")
        )

    def new() -> Builder:
        return old().grant_role("rd", users=["u"])

    assert wider_on_the_way(old, new) == []


def test_after_a_refused_narrowing_write_nothing_widens(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The narrowing write (the every-table policy loses update, alter) is refused: no
    widening one follows (reader's DENY on orders stays a deny item: it still bars reader,
    issue 23 N9), so reader cannot update orders; the next sync converges."""

    def world() -> Builder:
        return (
            sales()
            .allow("reader", "catalog sales", "MODIFY_TABLE")
            .deny("reader", "table sales.crm.orders", "MODIFY_TABLE")
        )

    old, new = world().model, world().model
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, old, ALL)
    for event in ch.revoke_privileges(
        new, "reader", ObjectRef.parse("catalog sales"), ["MODIFY_TABLE"], Condition.ALLOW
    ):
        new.apply(event)
    asked = keys(old, new)

    def refuse(*args: object, **kwargs: object) -> None:
        raise BackendError("rg", "Ranger refused update policy (HTTP 400): refused")

    monkeypatch.setattr(backend.api, "update_policy", refuse)
    with pytest.raises(BackendError, match="refused"):
        reconcile(backend, new, ALL, retries=0)
    assert len(ranger_standin.store.list_policies({})) == 2  # the deny on orders is still there
    assert held(ranger_standin, old, old, asked) == allowed(old, 0, asked)
    monkeypatch.undo()
    reconcile(backend, new, ALL)
    assert planner.plan(backend, new, ALL).empty
    assert held(ranger_standin, new, new, asked) == allowed(new, 1, asked)


def test_a_user_joining_a_denying_and_an_allowing_role_at_once_is_never_wider_on_the_way() -> None:
    """A random batch the history test drew: r1 without the group, then r1 given USE_CATALOG
    and u1 made a holder of r1 and r2 at once. Neither model lets u1 select c.s1.a (r2
    denies it), yet Ranger's engine allowed it after 5 of the 9 writes: both Ranger roles are
    named by deny items, and u1 once joined them in name order, pd_r1 (whose allow on s1's
    every table gives select) before pd_r2 (whose deny on s1.a takes it away). A
    deny of pd_r2's (select) meets an allow of pd_r1's, and no deny of pd_r1's (alter,
    update) meets an allow of pd_r2's: u1 joins pd_r2 first."""
    before = [("role_group", "r1", False)]
    batch = [
        ("grant", "r1", "catalog c", "USE_CATALOG", "ALLOW"),
        ("role_user", "r1", "u1", True),
        ("role_user", "r2", "u1", True),
    ]
    assert wider_on_the_way(lambda: _built(before), lambda: _built(before + batch)) == []


def two_crossed_roles(denied: tuple[str, str], allowed: str) -> Builder:
    """r1 (v) may select every table but not ``denied`` (an object, a privilege); r2 (w)
    has ``allowed`` on the catalog but may not select orders."""
    return (
        Builder()
        .users("u", "v", "w")
        .catalog("sales", backend="rg")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .table("sales.crm.leads")
        .role("r1", users=["v"])
        .role("r2", users=["w"])
        .allow("r1", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
        .deny("r1", denied[0], denied[1])
        .allow("r2", "catalog sales", "USE_CATALOG", "USE_SCHEMA", allowed)
        .deny("r2", "table sales.crm.orders", "SELECT_TABLE")
    )


def _cycle_old() -> Builder:
    """r1 (v) may select every table but create none in crm; r2 (w) may create tables but
    not select orders."""
    return two_crossed_roles(("schema sales.crm", "CREATE_TABLE"), "CREATE_TABLE")


def _cycle_new() -> Builder:
    """u joins r1 and r2 at once."""
    return _cycle_old().grant_role("r1", users=["u"]).grant_role("r2", users=["u"])


def test_a_user_joining_two_roles_each_denying_what_the_other_allows_is_never_wider_on_the_way() -> None:
    """u joins r1 and r2 at once (:func:`_cycle_old`): whichever it joins first gives it an
    access the other denies (select on orders, or create in crm), which neither model
    allows. No order of the joins is safe: u is denied, through its per-user role, what
    the role joined out of order denies, before either join, and those deny items go
    with the widening writes; the per-user role is made for it and removed after."""
    plan_writes: list[Any] = []
    assert wider_on_the_way(_cycle_old, _cycle_new, plan_writes) == []
    extra = [w for w in plan_writes if w.extra]
    # the per-user role made and removed, and the transient deny items, each
    # removed again by a widening write
    assert {(w.stage, w.widens) for w in extra if "role 'pdu_u'" in str(w.step)} == {
        (CREATE_ROLES, False),
        (DROP_ROLES, True),
    }
    transient = [w for w in plan_writes if w.stage == NARROW and "'pdu_u'" in str(w.step.after)]
    assert transient, plan_writes
    assert all(w.stage < MEMBERS_IN for w in transient)


#: the item lists of a Ranger policy
KINDS = ("policyItems", "denyPolicyItems", "allowExceptions", "denyExceptions")


def _watched(
    standin: Standin,
    backend: Any,
    monkeypatch: pytest.MonkeyPatch,
    bound: set[Key],
    asked: dict[Key, Any],
    old: Model,
    refuse: Callable[[str, Any], bool],
) -> list[tuple[str, list[Key]]]:
    """Every write of ``backend`` from now on, followed by what Ranger's engine allows beyond
    ``bound`` (a list per write, in order); a write ``refuse`` picks is refused instead."""
    seen: list[tuple[str, list[Key]]] = []
    for name in (
        "create_role",
        "update_role",
        "delete_role",
        "create_policy",
        "update_policy",
        "delete_policy",
    ):
        real = getattr(backend.api, name)

        def call(*args: Any, _name: str = name, _real: Any = real) -> Any:
            if refuse(_name, args[-1]):
                seen.append((f"{_name} refused", sorted(held(standin, old, old, asked) - bound)))
                raise BackendError("rg", f"Ranger refused {_name} (HTTP 400): refused")
            answer = _real(*args)
            seen.append((_name, sorted(held(standin, old, old, asked) - bound)))
            return answer

        monkeypatch.setattr(backend.api, name, call)
    return seen


def _names(payload: Any, kind: str) -> set[str]:
    """The roles a policy payload's ``kind`` items name (``denyPolicyItems``, ...)."""
    if not isinstance(payload, dict):
        return set()
    return {r for item in payload.get(kind) or () for r in item.get("roles") or ()}


def _joins_u(name: str, payload: Any) -> bool:
    return (
        name == "update_role"
        and isinstance(payload, dict)
        and str(payload.get("name", "")).startswith("pd_r")
        and "u" in {m["name"] for m in payload.get("users") or ()}
    )


@pytest.mark.parametrize("refused", ["the second join", "a transient deny"])
def test_a_refused_write_in_a_join_cycle_is_never_wider_and_the_next_sync_converges(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch, refused: str
) -> None:
    """u joins r1 and r2 at once (:func:`_cycle_old`), and one write is refused: the second
    join (the transient deny items stay: narrower, the first join already made), or the
    first write of a transient deny item (then no join is made). After every write,
    refused or not, Ranger's engine allows nothing neither model allows; the next sync
    (every write watched the same way) converges, the per-user role and its deny items gone."""
    old, new = _cycle_old().model, _cycle_new().model
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, old, ALL)
    asked = keys(old, new)
    bound = allowed(old, 0, asked) | allowed(new, 1, asked)
    joins: list[str] = []
    denies: list[str] = []

    def refuse(name: str, payload: Any) -> bool:
        if refused == "the second join":
            if _joins_u(name, payload):
                joins.append(str(payload["name"]))
                return len(joins) == 2
            return False
        if name in ("update_policy", "create_policy") and "pdu_u" in _names(payload, "denyPolicyItems"):
            denies.append(str(payload.get("name")))
            return len(denies) == 1
        return False

    seen = _watched(ranger_standin, backend, monkeypatch, bound, asked, old, refuse)
    with pytest.raises(BackendError, match="refused"):
        reconcile(backend, new, ALL, retries=0)
    refusals = [name for name, _ in seen if name.endswith("refused")]
    assert len(refusals) == 1, seen
    assert [(name, wider) for name, wider in seen if wider] == []
    policies = ranger_standin.store.list_policies({})
    if refused == "the second join":
        # the first join is made, the transient deny items stay (narrower), the second not
        assert len(joins) == 2
        assert any("pdu_u" in _names(p, "denyPolicyItems") for p in policies)
    else:
        assert len(denies) >= 1
        assert not any(_joins_u("update_role", r) for r in ranger_standin.store.list_roles({}))
    monkeypatch.undo()
    again = _watched(ranger_standin, backend, monkeypatch, bound, asked, old, lambda name, payload: False)
    reconcile(backend, new, ALL, retries=0)
    assert again and [(name, wider) for name, wider in again if wider] == []
    monkeypatch.undo()
    assert planner.plan(backend, new, ALL).empty
    assert held(ranger_standin, new, new, asked) == allowed(new, 1, asked)
    roles = {r["name"] for r in ranger_standin.store.list_roles({})}
    assert "pdu_u" not in roles
    assert not any(
        "pdu_u" in _names(p, kind) for p in ranger_standin.store.list_policies({}) for kind in KINDS
    )


def _policy(
    table: str,
    allow: frozenset[tuple[str, str]] = frozenset(),
    deny: frozenset[tuple[str, str]] = frozenset(),
) -> PolicyFact:
    resources = (("column", ("*",), False), ("database", ("crm",), False), ("table", (table,), False))
    return PolicyFact("hive", resources, allow, deny)


@pytest.mark.parametrize("pdu_u", ["none", "held", "held without u", "changed", "removed"])
def test_a_join_cycle_through_policies_the_plan_leaves_is_broken_by_transient_deny_items(pdu_u: str) -> None:
    """The schedule alone: u joins pd_a and pd_b, and no policy changes: pd_a may select
    every table but not update t, pd_b may update every table but not select t. The
    policy of t (held, not in the plan) is written in stage 1 with u's per-user role denied
    what pd_a denies there, and again in stage 5 as held, u joining pd_b before pd_a in
    between; the per-user role, when the apply has none, is made in stage 0 and removed
    in stage 6. A per-user role Ranger holds without u, or one the plan removes, cannot be
    relied on: a role made for u alone (``pdu_u~1``) takes the deny items instead. One the
    plan changes to take u in (no allow item names it) takes u among the narrowing writes,
    before any join: it is relied on, u joining it in stage 2."""
    every = _policy("?*", allow=frozenset({("pd_a", "select"), ("pd_b", "update")}))
    t = _policy("t", deny=frozenset({("pd_a", "update"), ("pd_b", "select")}))
    held: list[Any] = [every, t, RoleFact("pd_a", frozenset({"v"})), RoleFact("pd_b", frozenset({"w"}))]
    ops = [
        Op("change", RoleFact("pd_a", frozenset({"v"})), RoleFact("pd_a", frozenset({"u", "v"}))),
        Op("change", RoleFact("pd_b", frozenset({"w"})), RoleFact("pd_b", frozenset({"u", "w"}))),
    ]
    repaired: list[Any] = []
    if pdu_u == "held":
        held.append(RoleFact("pdu_u", frozenset({"u"})))
    elif pdu_u == "held without u":
        held.append(RoleFact("pdu_u", frozenset({"x"})))
    elif pdu_u == "removed":
        held.append(RoleFact("pdu_u", frozenset({"x"})))
        ops.append(Op("remove", RoleFact("pdu_u", frozenset({"x"})), None))
    elif pdu_u == "changed":
        ops.append(Op("change", RoleFact("pdu_u", frozenset({"x"})), RoleFact("pdu_u", frozenset({"u"}))))
        both = RoleFact("pdu_u", frozenset({"u", "x"}))
        repaired = [(MEMBERS_OUT, False, False, both), (MEMBERS_OUT, True, False, ops[-1].after)]
    writes = schedule(ops, held, None, (), "pdu_")
    name = "pdu_u~1" if pdu_u in ("held without u", "removed") else "pdu_u"
    steps = [(w.stage, w.widens, w.extra, w.step.after) for w in writes if w.op not in ops[2:] or repaired]
    mid = _policy("t", deny=frozenset({("pd_a", "update"), ("pd_b", "select"), (name, "update")}))
    new = pdu_u in ("none", "held without u", "removed")
    made = [(CREATE_ROLES, False, True, RoleFact(name, frozenset({"u"})))] if new else []
    gone = [(DROP_ROLES, True, True, None)] if new else []
    assert steps == [
        *made,
        (NARROW, False, True, mid),
        *repaired,
        (MEMBERS_IN, True, False, ops[1].after),  # pd_b's deny (select) is in place for pd_a's allow
        (MEMBERS_IN, True, False, ops[0].after),
        (WIDEN, True, True, t),
        *gone,
    ]
    assert not any(w.last for w in writes if w.extra)
