"""Entries of the metastore's authorization surface (:mod:`pushdown_hive.surface`) that no
other test draws, each against the real metastore: a database's owner (name and type),
a table's partition-level privilege setting, and the privilege names pushdown never
grants (``ALTER``, ``DROP``, ``INDEX``, ``LOCK``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope
from pushdown_hive.client import Grant, HiveObject, PrincipalType

from .test_hive_review import ADMIN, full, held, named, setup
from .world import World

pytestmark = pytest.mark.hive

#: privilege names of the metastore's model that pushdown never grants
NEVER = ("ALTER", "DROP", "INDEX", "LOCK")


@pytest.fixture
def world(hive_metastore: Any) -> Iterator[World]:
    w = World(hive_metastore)
    yield w
    w.cleanup()


def test_database_owner_set_by_hand_to_a_managed_user_is_reported(world: World) -> None:
    """A DBA makes alice the owner of database s (``Database.ownerName``): HiveServer2's
    SQL-standard authorizer lets her create and drop its tables; the model does not."""
    db, hive = setup(world)
    try:
        world.client.set_database_owner(db, "alice")
        plan = full(world, hive)
        assert named(plan.findings, f"database {db}", "owner USER 'alice'"), plan.findings
    finally:
        hive.close()


def test_database_owner_of_role_type_is_reported(world: World) -> None:
    """``Database.ownerType`` ROLE: the role's holders own the database, whoever they are."""
    db, hive = setup(world)
    try:
        world.client.set_database_owner(db, "etl_team", PrincipalType.ROLE)
        plan = full(world, hive)
        assert named(plan.findings, f"database {db}", "owner ROLE 'etl_team'"), plan.findings
    finally:
        hive.close()


def test_database_owned_by_a_user_outside_the_model_is_no_finding(world: World) -> None:
    db, hive = setup(world)
    try:
        world.client.set_database_owner(db, "etl")
        assert not named(full(world, hive).findings, f"database {db}", "owner"), "a stranger is no finding"
    finally:
        hive.close()


def test_partition_level_privileges_on_a_table_read_are_reported(world: World) -> None:
    """A partitioned table with ``PARTITION_LEVEL_PRIVILEGE = TRUE``: the legacy authorizer
    decides on each partition's grants, which pushdown does not read: a finding says so."""
    db, hive = setup(world)
    try:
        world.client.create_table(
            db, "events", partitions=[("day", "string")], parameters={"PARTITION_LEVEL_PRIVILEGE": "TRUE"}
        )
        world.client.create_table(db, "plain", partitions=[("day", "string")])
        findings = full(world, hive).findings
        assert named(findings, f"{db}.events", "PARTITION_LEVEL_PRIVILEGE"), findings
        assert not named(findings, f"{db}.plain", "PARTITION_LEVEL_PRIVILEGE"), findings
    finally:
        hive.close()


@pytest.mark.parametrize("privilege", NEVER)
def test_privileges_pushdown_never_grants_are_revoked_or_reported(world: World, privilege: str) -> None:
    """pushdown's grantor's ``privilege`` on s.a to alice is revoked; another grantor's to
    bob is reported (pushdown compiles to ALL, SELECT, INSERT, UPDATE, DELETE, CREATE only)."""
    db, hive = setup(world)
    table = HiveObject.of_table(db, "a")
    try:
        world.client.grant_privileges(
            [
                Grant(table, "alice", PrincipalType.USER, privilege, grantor=world.grantor),
                Grant(table, "bob", PrincipalType.USER, privilege, grantor=ADMIN),
            ]
        )
        plan = full(world, hive)
        assert held(world, db, "a", "alice") == {"SELECT"}
        assert named(plan.findings, privilege, "bob", "not by pushdown"), plan.findings
        assert planner.plan(hive, world.model, Scope.everything()).empty
    finally:
        hive.close()
