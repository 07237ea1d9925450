"""The dispatcher: journal scopes, lagging backends catching up, convergence checks."""

from __future__ import annotations

import pytest

from pushdown.app.service import AccessControl
from pushdown.errors import NotConverged, TemporaryBackendError
from pushdown.host.recording import Permit
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from tests.fakes import FlakyBackend, access_control

ORDERS = ObjectRef.parse("table sales.crm.orders")


def flaky(ac: AccessControl) -> FlakyBackend:
    backend = ac.backends["main"]
    assert isinstance(backend, FlakyBackend)
    return backend


def _setup(ac):  # type: ignore[no-untyped-def]
    ac.add_user("alice")
    ac.add_user("carol")
    ac.create_object("catalog sales", "carol", {"backend": "main"})
    ac.create_object("schema sales.crm", "carol")
    ac.create_object("table sales.crm.orders", "carol")
    ac.create_role("reader")
    ac.grant_privileges("reader", "catalog sales", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])


def test_each_change_is_pushed_right_away_over_its_scope() -> None:
    ac = access_control(main=FlakyBackend)
    _setup(ac)
    backend = ac.backends["main"]
    result = ac.grant_role("reader", "user alice")
    assert result.lagging == {}
    [synced] = result.synced
    assert synced.plan is not None
    assert not synced.plan.scope.full  # only what the event touched
    assert [str(op) for op in synced.plan.ops] == [
        "+ alice: load_catalog catalog sales",
        "+ alice: load_schema schema sales.crm",
        "+ alice: load_table table sales.crm.orders",
    ]
    assert Permit("alice", "load_table", ORDERS) in backend.held  # type: ignore[attr-defined]


def test_a_backend_that_is_down_lags_and_catches_up_without_losing_the_change() -> None:
    ac = access_control(main=FlakyBackend)
    _setup(ac)
    backend = flaky(ac)
    backend.down = True
    result = ac.grant_role("reader", "user alice")
    assert "main" in result.lagging and "connection refused" in result.lagging["main"]
    assert "reader" in ac.model.user_roles["alice"]  # the change stayed committed
    assert ac.store.cursor("main") < ac.store.last_seq()
    assert Permit("alice", "load_table", ORDERS) not in backend.held
    backend.down = False
    [caught_up] = ac.sync()
    assert caught_up.ok and caught_up.applied
    assert Permit("alice", "load_table", ORDERS) in backend.held
    assert ac.store.cursor("main") == ac.store.last_seq()
    [again] = ac.sync()
    assert again.plan is None  # nothing pending any more


def test_transient_failures_during_apply_are_retried() -> None:
    ac = access_control(main=FlakyBackend)
    ac.push = False
    _setup(ac)
    backend = flaky(ac)
    backend.fail_times = 2
    plan, applied = reconcile(backend, ac.model, Scope.everything(), sleep=lambda s: None)
    assert applied and not plan.empty
    assert backend.plan(ac.model, Scope.everything()).empty


def test_retries_are_bounded() -> None:
    ac = access_control(main=FlakyBackend)
    ac.push = False
    _setup(ac)
    backend = flaky(ac)
    backend.fail_times = 5
    with pytest.raises(TemporaryBackendError):
        reconcile(backend, ac.model, Scope.everything(), retries=2, sleep=lambda s: None)


def test_permanent_refusal_is_reported_in_the_backends_words() -> None:
    ac = access_control(main=FlakyBackend)
    _setup(ac)
    backend = flaky(ac)
    backend.refuse = "Access denied; you need the GRANT OPTION privilege"
    result = ac.grant_role("reader", "user alice")
    assert "GRANT OPTION" in result.lagging["main"]


def test_an_apply_that_does_not_stick_is_caught_by_reading_back() -> None:
    ac = access_control(main=FlakyBackend)
    ac.push = False
    _setup(ac)
    backend = flaky(ac)
    backend.ignore_apply = True
    with pytest.raises(NotConverged, match="reading back still shows"):
        reconcile(backend, ac.model, Scope.everything())


def test_dry_run_applies_nothing_and_keeps_the_cursor() -> None:
    ac = access_control(main=FlakyBackend)
    ac.push = False
    _setup(ac)
    ac.grant_role("reader", "user alice")
    [result] = ac.sync(dry_run=True)
    assert result.plan is not None and not result.plan.empty
    assert ac.store.cursor("main") == 0
    assert ac.backends["main"].held == set()  # type: ignore[attr-defined]


def test_scoped_sync_covers_group_members_of_a_role_grant() -> None:
    ac = access_control(main=FlakyBackend)
    _setup(ac)
    ac.add_group("analysts", ["alice"])
    result = ac.grant_role("reader", "group analysts")
    assert result.lagging == {}
    assert Permit("alice", "load_table", ORDERS) in ac.backends["main"].held  # type: ignore[attr-defined]


def test_deny_added_later_is_removed_from_the_backend() -> None:
    ac = access_control(main=FlakyBackend)
    _setup(ac)
    ac.grant_role("reader", "user alice")
    ac.create_role("no_orders")
    ac.grant_privileges("no_orders", ORDERS, ["SELECT_TABLE"], "DENY")
    result = ac.grant_role("no_orders", "user alice")
    [synced] = result.synced
    assert synced.plan is not None
    assert [str(op) for op in synced.plan.ops] == ["- alice: load_table table sales.crm.orders"]
    assert Permit("alice", "load_table", ORDERS) not in ac.backends["main"].held  # type: ignore[attr-defined]


def test_unknown_principal_change_writes_nothing() -> None:
    ac = access_control(main=FlakyBackend)
    _setup(ac)
    before = ac.store.last_seq()
    from pushdown.errors import UnknownPrincipal

    with pytest.raises(UnknownPrincipal, match="unknown user 'mallory'"):
        ac.grant_role("reader", "user mallory")
    assert ac.store.last_seq() == before


class DiscoveringBackend(FlakyBackend):
    """Reports that something changed on its server (by other hands) under ``appeared``."""

    kind = "discovering"

    def __init__(self, context):  # type: ignore[no-untyped-def]
        super().__init__(context)
        self.appeared: ObjectRef | None = None
        self.seen: list[str | None] = []

    def discover(self, model, seen):  # type: ignore[no-untyped-def]
        self.seen.append(seen)
        now = str(self.appeared)
        if self.appeared is None or seen == now:
            return Scope.nothing(), now
        return Scope.of([self.appeared]), now


def test_a_pending_sync_also_looks_where_the_backend_discovered_a_change() -> None:
    ac = access_control(main=DiscoveringBackend)
    _setup(ac)
    ac.grant_role("reader", "user alice")
    backend = ac.backends["main"]
    assert isinstance(backend, DiscoveringBackend)
    [idle] = ac.sync()
    assert idle.plan is None  # nothing pending, nothing discovered
    backend.appeared = ObjectRef.parse("schema sales.crm")
    backend.held.discard(Permit("alice", "load_table", ORDERS))  # as if the table were new there
    backend.down = True
    [lagging] = ac.sync()
    assert lagging.kind == "temporary"
    assert backend.seen[-1] == "None"  # the summary is kept only after the backend converged
    backend.down = False
    [synced] = ac.sync()
    assert synced.plan is not None and synced.plan.scope == Scope.of([backend.appeared])
    assert [str(op) for op in synced.plan.ops] == ["+ alice: load_table table sales.crm.orders"]
    assert ac.sync()[0].plan is None  # the new summary was kept


def test_an_error_carries_its_class_and_its_delay_to_the_result_and_the_caller() -> None:
    """The class of a failure and when to try again travel with it (as the backend said),
    to the sync's result and to the library caller, not flattened to a message."""
    ac = access_control(main=FlakyBackend)
    _setup(ac)
    backend = flaky(ac)
    backend.down, backend.retry_after = True, 42.0
    result = ac.grant_role("reader", "user alice")
    failure = result.failures["main"]
    assert isinstance(failure, TemporaryBackendError) and failure.delay == 42.0
    [synced] = result.synced
    assert synced.kind == "temporary" and synced.retry_after == 42.0
    backend.retry_after = None
    assert ac.sync()[0].retry_after == 5.0  # a temporary error's default
    backend.down, backend.refuse = False, "GRANT OPTION missing (test)"
    [refused] = ac.sync()
    assert refused.kind == "permanent" and refused.retry_after is None
