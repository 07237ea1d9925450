"""Hostile review of the day's merges: sequences after which Ranger (its own engine, the
stand-in held equal to it) allowed more than the stored model, or a narrowing was held back."""

from __future__ import annotations

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import BackendError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.scope import scope_of as event_scope
from pushdown.reconcile.sync import reconcile
from tests.builders import Builder

from .probe import probe
from .test_ranger_apply_order import RICH, allowed, held, keys
from .test_ranger_histories import events_for, start
from .world import backend_for

pytestmark = pytest.mark.ranger
ALL = Scope.everything()


def test_a_member_leaves_a_denying_role_only_after_the_narrowing_it_relies_on(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """u may select every table through reader, and rd denies u select on orders. One
    batch revokes reader's select and takes u out of rd: both models deny u orders. The
    narrowing write (the every-table policy loses select) is refused; u must not then
    leave rd's Ranger role, which alone still bars u from orders."""

    def world() -> Builder:
        return (
            Builder()
            .users("u", "v")
            .catalog("sales", backend="rg")
            .schema("sales.crm")
            .table("sales.crm.orders")
            .table("sales.crm.leads")
            .role("reader", users=["u", "v"])
            .role("rd", users=["u", "v"])
            .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
            .deny("rd", "table sales.crm.orders", "SELECT_TABLE")
        )

    old, new = world().model, world().model
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, old, ALL)
    events = ch.revoke_privileges(
        new, "reader", ObjectRef.parse("catalog sales"), ["SELECT_TABLE"], Condition.ALLOW
    ) + ch.revoke_role(new, "rd", Principal.user("u"))
    for event in events:
        new.apply(event)
    asked = keys(old, new)
    bound = allowed(old, 0, asked) | allowed(new, 1, asked)

    def refuse(*args: object, **kwargs: object) -> None:
        raise BackendError("rg", "Ranger refused update policy (HTTP 400): refused")

    monkeypatch.setattr(backend.api, "update_policy", refuse)
    monkeypatch.setattr(backend.api, "create_policy", refuse)
    monkeypatch.setattr(backend.api, "delete_policy", refuse)
    with pytest.raises(BackendError, match="refused"):
        reconcile(backend, new, ALL, retries=0)
    wider = held(ranger_standin, old, new, asked) - bound
    assert wider == set(), sorted(wider)
    monkeypatch.undo()
    reconcile(backend, new, ALL)
    assert planner.plan(backend, new, ALL).empty
    assert held(ranger_standin, new, new, asked) == allowed(new, 1, asked)


def test_a_change_that_narrows_and_widens_still_narrows_after_a_refusal(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch: reader loses select on every table of sales (its every-table policy
    goes), and orders' select moves from r2 (v) to w (u): orders' policy both narrows and
    widens, the only such change, so it is written whole after the narrowing writes. The
    every-table policy's delete is refused: orders' widening waits, but its narrowing (v
    loses select on orders) must not: an error never holds back a narrowing."""

    def world() -> Builder:
        return (
            Builder()
            .users("u", "v")
            .catalog("sales", backend="rg")
            .schema("sales.crm")
            .table("sales.crm.orders")
            .table("sales.crm.leads")
            .role("reader", users=["u"])
            .role("w", users=["u"])
            .role("r2", users=["v"])
            .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
            .allow("w", "catalog sales", "USE_CATALOG", "USE_SCHEMA")
            .allow("r2", "catalog sales", "USE_CATALOG", "USE_SCHEMA")
            .allow("r2", "table sales.crm.orders", "SELECT_TABLE")
        )

    old, new = world().model, world().model
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, old, ALL)
    orders, sales_catalog = ObjectRef.parse("table sales.crm.orders"), ObjectRef.parse("catalog sales")
    events = [
        *ch.revoke_privileges(new, "reader", sales_catalog, ["SELECT_TABLE"], Condition.ALLOW),
        *ch.revoke_privileges(new, "r2", orders, ["SELECT_TABLE"], Condition.ALLOW),
        *ch.grant_privileges(new, "w", orders, ["SELECT_TABLE"], Condition.ALLOW),
    ]
    for event in events:
        new.apply(event)
    asked = keys(old, new)

    def refuse(*args: object, **kwargs: object) -> None:
        raise BackendError("rg", "Ranger refused delete policy (HTTP 400): refused")

    monkeypatch.setattr(backend.api, "delete_policy", refuse)
    with pytest.raises(BackendError, match="refused"):
        reconcile(backend, new, ALL, retries=0)
    now = held(ranger_standin, old, new, asked)
    assert now - (allowed(old, 0, asked) | allowed(new, 1, asked)) == set()
    orders_select = ("v", "hive", '{"database": "crm", "table": "orders"}', "select")
    assert orders_select in allowed(old, 0, asked) and orders_select not in now
    monkeypatch.undo()
    reconcile(backend, new, ALL)
    assert planner.plan(backend, new, ALL).empty
    assert held(ranger_standin, new, new, asked) == allowed(new, 1, asked)


def test_a_schema_dropped_leaves_no_policy_a_whole_compile_does_not_hold(ranger_standin: Standin) -> None:
    """u1 owns catalog c; schema s1 is dropped (its tables, topic and grants with it). The
    scoped sync's inventory held the dropped schema still (a focus's schema counted as
    held, registered or not), so u1's owner policies on database s1 stayed, which the
    whole compile does not hold: the next full plan was not empty (verify drifts)."""
    backend = backend_for(ranger_standin)
    b = start()
    reconcile(backend, b.model, ALL)
    for step in (("owner", "catalog c", "u1"), ("drop-schema", "s1")):
        if step[0] == "owner":
            events = ch.set_owner(b.model, ObjectRef.parse("catalog c"), "u1")
        else:
            events = ch.drop_object(b.model, ObjectRef.parse("schema c.s1"))
        scope = Scope.nothing()
        for event in events:
            b.model.apply(event)
            scope = scope | event_scope(event)
        reconcile(backend, b.model, scope)
        left = planner.plan(backend, b.model, ALL)
        assert left.empty, [f"{op.action} {op.fact}" for op in left.ops]
    assert not any("database=s1" in str(f) for f in backend.read(b.model, ALL.resolve(b.model)).facts)


def test_a_role_s_last_holder_removed_leaves_no_item_a_whole_compile_does_not_hold(
    ranger_standin: Standin,
) -> None:
    """r1 is held by u2 and, through group g, by u1. Both users are removed, one sync each:
    the second scoped sync looked for u2's Ranger roles only through the model's names,
    which no longer hold u2, so s1's policy naming pd_r1 (now without members) was not
    compiled again and stayed, which the whole compile does not hold (verify drifts)."""
    backend = backend_for(ranger_standin)
    b = start()
    reconcile(backend, b.model, ALL)
    for user in ("u1", "u2"):
        scope = Scope.nothing()
        for event in ch.remove_user(b.model, user):
            b.model.apply(event)
            scope = scope | event_scope(event)
        reconcile(backend, b.model, scope)
        left = planner.plan(backend, b.model, ALL)
        assert left.empty, [f"{op.action} {op.fact}" for op in left.ops]


def test_a_role_made_one_with_another_but_for_case_keeps_its_deny(ranger_standin: Standin) -> None:
    """r1 (u1, u2, u3) denies select on s1.a; r2 (u3) allows select on every table. Role R1
    is created: r1 and R1 are one Ranger name but for case, so r1 is refused and its
    holders are named by their per-user roles. The change's scope names no object, so the
    scoped sync compiled no database, dropped pd_r1 all the same; Ranger kept the role a
    deny item names and its members were taken out: u3 could select s1.a, which the model
    denies (no write refused, Ranger's own engine judging)."""
    backend = backend_for(ranger_standin)
    b = start()
    select = ["SELECT_TABLE"]
    for events in (
        ch.grant_privileges(b.model, "r2", ObjectRef.parse("catalog c"), select, Condition.ALLOW),
        ch.grant_privileges(b.model, "r1", ObjectRef.parse("table c.s1.a"), select, Condition.DENY),
        ch.revoke_privileges(b.model, "r1", ObjectRef.parse("schema c.s1"), select, Condition.ALLOW),
        ch.grant_role(b.model, "r1", Principal.user("u3")),
    ):
        for event in events:
            b.model.apply(event)
    reconcile(backend, b.model, ALL)
    scope = Scope.nothing()
    for event in ch.create_role(b.model, "R1"):
        b.model.apply(event)
        scope = scope | event_scope(event)
    reconcile(backend, b.model, scope)
    found = probe(ranger_standin, b.model, "c", ("u1", "u2", "u3"))
    assert found.wider == [], found.wider
    assert planner.plan(backend, b.model, ALL).empty


def test_a_role_a_deny_names_keeps_its_members_after_a_refusal() -> None:
    """r2 (u3, and u1 through g) denies select on s1; r1 (u2, and u1 through g) allows it on
    every table. One batch deletes r2 and revokes r1 from g: both models deny u1 s1.a. The
    first write is refused, so the deny items naming pd_r2 stay; Ranger then refused to
    delete pd_r2, and its members were taken out instead: u1 could select s1.a."""

    def world() -> Builder:
        b = start()
        for step in (*RICH, ("role_group", "r2", True)):
            for event in events_for(b.model, step):
                b.model.apply(event)
        return b

    old = world().model
    b = world()
    for step in (("delete_role", "r2"), ("role_group", "r1", False)):
        kind = step[0]
        events = ch.delete_role(b.model, "r2") if kind == "delete_role" else events_for(b.model, step)
        for event in events:
            b.model.apply(event)
    new = b.model
    asked = keys(old, new)
    bound = allowed(old, 0, asked) | allowed(new, 1, asked)
    with Standin() as standin:
        backend = backend_for(standin, retries=0)
        reconcile(backend, old, ALL)
        first = [True]
        real = backend.api.delete_policy

        def refuse_first(*args: object, **kwargs: object) -> None:
            if first[0]:
                first[0] = False
                raise BackendError("rg", "Ranger refused delete policy (HTTP 400): refused")
            real(*args, **kwargs)  # type: ignore[arg-type]

        backend.api.delete_policy = refuse_first  # type: ignore[method-assign]
        with pytest.raises(BackendError, match="refused"):
            reconcile(backend, new, ALL, retries=0)
        wider = held(standin, old, new, asked) - bound
        assert wider == set(), sorted(wider)
        del backend.api.delete_policy
        reconcile(backend, new, ALL)
        assert planner.plan(backend, new, ALL).empty


def test_a_user_removed_whose_ranger_name_another_holds_ends_a_clash_everywhere(
    ranger_standin: Standin,
) -> None:
    """u1 and u3 map to one Ranger name (``u1``): each is compiled apart and the name gets
    what both are allowed. u3 is removed: the clash ends, so u1's items change wherever u1
    is decided, not only where u3's Ranger roles are named (the sync's read-back then
    looked further than its compile and did not converge)."""

    def collide(p: Principal) -> str:
        return "u1" if p.kind is PrincipalKind.USER and p.name in ("u1", "u3") else p.name

    backend = backend_for(ranger_standin, map_principal=collide)
    b = start()  # u1 holds r1 (through g), u3 holds r2
    reconcile(backend, b.model, ALL)
    scope = Scope.nothing()
    for event in ch.remove_user(b.model, "u3"):
        b.model.apply(event)
        scope = scope | event_scope(event)
    reconcile(backend, b.model, scope)
    assert planner.plan(backend, b.model, ALL).empty
    found = probe(ranger_standin, b.model, "c", ("u1", "u2"), mapped=lambda u: collide(Principal.user(u)))
    assert found.wider == [], found.wider
