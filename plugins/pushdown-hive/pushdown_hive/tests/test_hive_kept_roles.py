"""The roles a scoped sync puts in play, when it cannot trust what it knows of a user's
roles: the backend's first read (a new process, a new mapping) and a metastore that
refuses to say which roles a user holds. Every managed role is then in play with every
holder: a role recomputed with some of its holders alone would carry nothing and lose
the others' memberships (narrower than the model until the next full sync), and a role
left out of play would keep a membership the model took away (wider)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_hive.backend import HiveBackend
from pushdown_hive.metastore import Refused

from .fake import FakeMetastore
from .test_hive_cost import hive_estate
from .test_hive_review import held, setup
from .world import World, do


@pytest.fixture
def world(hive_metastore: Any) -> Iterator[World]:
    w = World(hive_metastore)
    yield w
    w.cleanup()


def _backend(ms: FakeMetastore) -> HiveBackend:
    return HiveBackend(BackendContext("hive1", {"grantor": "pushdown"}, mapping_stable=lambda: True), ms)


@pytest.mark.hive
def test_a_new_backends_first_scoped_sync_keeps_every_roles_members(world: World) -> None:
    """alice and bob read s.a through reader; a new backend (a new process) first syncs a
    change to carol alone. Every role is in play at a first read; reader is recomputed with
    both its holders, so alice and bob keep it (before: both memberships were revoked)."""
    db, hive = setup(world)
    hive.close()
    world.user("carol")
    hive = world.backend()
    try:
        plan, _ = reconcile(hive, world.model, Scope.of(principals={Principal.user("carol")}))
        assert not [op for op in plan.ops if op.action == "remove"], plan.ops
        assert held(world, db, "a", "alice") == {"SELECT"} and held(world, db, "a", "bob") == {"SELECT"}
        assert world.probe().mismatches == []
    finally:
        hive.close()


def test_a_first_one_table_sync_revokes_no_membership_nor_another_roles_grant() -> None:
    """The same on the in-memory metastore, a one-table change as first sync of a new
    backend: nothing is revoked (before: nine roles' members and r0's grant on t0)."""
    model, ms = hive_estate(1)
    reconcile(_backend(ms), model, Scope.everything())
    before = dict(ms.held), {r: set(u) for r, u in ms.roles.items()}
    events = ch.grant_privileges(model, "r1", ObjectRef.parse("table c.crm.t0"), ["MODIFY_TABLE"])
    do(model, events)
    plan, _ = reconcile(_backend(ms), model, scope_of(events[0]))
    assert not [op for op in plan.ops if op.action == "remove"], plan.ops
    assert {r: set(u) for r, u in ms.roles.items()} == before[1]
    assert set(before[0]) < set(ms.held)


def test_a_refused_read_of_a_users_roles_still_revokes_the_role_the_model_took() -> None:
    """u3 loses r3 in the model; the metastore refuses to list u3's roles. The sync puts
    every role in play and revokes the membership (before: the refusal read as "u3 holds
    nothing", r3 stayed out of play and u3 kept it, with no error and no finding)."""
    model, ms = hive_estate(1)
    hive = _backend(ms)
    reconcile(hive, model, Scope.everything())
    events = ch.revoke_role(model, "r3", Principal.user("u3"))
    do(model, events)

    def refuse(user: str) -> list[str]:
        raise Refused("Internal error processing get_role_grants_for_principal")

    ms.roles_held_by_user = refuse  # type: ignore[method-assign]
    reconcile(hive, model, scope_of(events[0]))
    assert "u3" not in ms.roles.get("pd_r3", set())
    assert all(ms.roles[f"pd_r{i}"] == {f"u{i}"} for i in range(10) if i != 3)
