"""A column grant on a partition column (``Table.partitionKeys``, not ``sd.cols``): the
metastore stores and answers it like any column grant, so it must be reported like one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown_hive.client import HiveObject, ObjectType, PrincipalType

from .test_hive_review import full, grant, named, setup
from .world import CATALOG, World, do

pytestmark = pytest.mark.hive


@pytest.fixture
def world(hive_metastore: Any) -> Iterator[World]:
    w = World(hive_metastore)
    yield w
    w.cleanup()


def test_a_column_grant_on_a_partition_column_is_reported(world: World) -> None:
    """Another grantor grants alice SELECT on column s.events.day, the partition column of
    a table the model denies her."""
    db, hive = setup(world)
    try:
        world.client.create_table(db, "events", partitions=[("day", "string")])
        do(world.model, ch.create_object(world.model, ObjectRef.of("table", (CATALOG, db, "events"))))
        world.grant("reader", f"table c.{db}.events", "SELECT_TABLE", "DENY")
        column = HiveObject(ObjectType.COLUMN, db, "events", "day")
        grant(world, column, "alice", PrincipalType.USER, "SELECT")
        assert {p.upper() for p in world.client.get_privilege_set(column, "alice", []).all} == {"SELECT"}
        plan = full(world, hive)
        assert named(plan.findings, "alice", "events"), plan.findings
    finally:
        hive.close()
