"""CREATE on `d`.* is wider than create_table: narrower by default, wider only when accepted."""

from __future__ import annotations

import pymysql
import pytest

from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile

from .world import PASSWORD, PREFIX, World, admin, backend_for, q

pytestmark = pytest.mark.mariadb


def creators(world: World) -> None:
    """tim may only create tables in c.d; olga owns c.d; both see a table t there."""
    world.user("tim")
    world.user("olga")
    world.schema("d", owner="olga")
    world.table("d", "t")
    world.role(
        "creator",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("schema c.d", "USE_SCHEMA", "ALLOW"),
            ("schema c.d", "CREATE_TABLE", "ALLOW"),
        ],
        to=["tim"],
    )
    world.role("gate", [("catalog c", "USE_CATALOG", "ALLOW")], to=["olga"])


def attempt(world: World, user: str, sql: str) -> bool:
    conn = world.server.connect(PREFIX + user, PASSWORD)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
        return True
    except pymysql.err.MySQLError as exc:
        assert exc.args[0] in (1044, 1142), exc
        return False
    finally:
        conn.close()


def recreate_after_drop(world: World, user: str) -> bool:
    """Drop c.d as an administrator; may ``user`` create the database again?"""
    with admin(world.server) as cur:
        cur.execute("DROP DATABASE `d`")
    try:
        return attempt(world, user, "CREATE DATABASE `d`")
    finally:
        with admin(world.server) as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS `d`")
            cur.execute("CREATE TABLE IF NOT EXISTS `d`.`t` (id INT)")


def test_by_default_create_on_the_database_is_not_granted_and_the_plan_says_so(world: World) -> None:
    creators(world)
    backend = backend_for(world.server)
    try:
        plan, _ = reconcile(backend, world.model, Scope.everything())
    finally:
        backend.close()
    note = next(n for n in plan.notes if n.startswith("user tim may create tables in c.d"))
    assert "CREATE on `d`.* would also let them CREATE DATABASE `d`" in note
    assert note.endswith("not granted (narrower); set create_on_database = true to accept")
    assert any(n.startswith("user olga may create tables in c.d") for n in plan.notes)
    assert not any(" CREATE ON " in str(op) for op in plan.ops)
    assert not attempt(world, "tim", f"SHOW CREATE TABLE {q('d')}.{q('t')}")  # the model hides it
    assert not attempt(world, "tim", "CREATE TABLE `d`.`new` (id INT)")  # narrower, as noted
    assert not recreate_after_drop(world, "tim")  # the model denies create_schema
    assert not recreate_after_drop(world, "olga")  # an owner of the schema, not of the catalog
    probe = world.probe()
    assert probe.mismatches == []
    assert "tim CREATE TABLE in d" in probe.narrower and "olga CREATE TABLE in d" in probe.narrower


def test_create_on_database_accepts_the_wider_grant_and_says_so(world: World) -> None:
    creators(world)
    world.create_on_database = True
    backend = backend_for(world.server, create_on_database=True)
    try:
        plan, _ = reconcile(backend, world.model, Scope.everything())
        assert planner.plan(backend, world.model, Scope.everything()).empty
    finally:
        backend.close()
    note = next(n for n in plan.notes if n.startswith("user tim may create tables in c.d"))
    assert "CREATE granted, accepted as wider (create_on_database = true)" in note
    assert "also lets them CREATE DATABASE `d` once it is dropped" in note
    assert "+ CREATE ON `d`.* TO 'pd_tim'@'%'" in [str(op) for op in plan.ops]
    assert attempt(world, "tim", "CREATE TABLE `d`.`new` (id INT)")
    with admin(world.server) as cur:
        cur.execute("DROP TABLE `d`.`new`")
    assert attempt(world, "tim", f"SHOW CREATE TABLE {q('d')}.{q('t')}")  # wider, as the note says
    assert recreate_after_drop(world, "tim")  # wider, as the note says
    probe = world.probe()
    assert probe.mismatches == [] and probe.narrower == []
