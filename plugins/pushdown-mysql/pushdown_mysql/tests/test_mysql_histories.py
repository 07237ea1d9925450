"""Random histories of model changes; after every sync, every login must match the evaluator.

Each history starts from a fresh model and fresh databases, applies up to six changes
(grants and revokes with DENY, group membership, role grants to users and groups,
owner changes, tables created, renamed and dropped, on the server as well), syncs
after each change with only the scope its events touched, requires the full plan to
be empty afterwards, and logs in as every user to try every statement.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.scope import scope_of as event_scope
from pushdown.reconcile.sync import reconcile
from tests.backend_histories import model_changes
from tests.backend_histories import steps as history_steps

from .world import World, backend_for, do

pytestmark = pytest.mark.mariadb

settings.register_profile(
    "pushdown-mysql-histories",
    max_examples=15,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("pushdown-mysql-histories")

USERS = ("u1", "u2", "u3")
ROLES = ("r1", "r2")
SCHEMAS = ("s1", "s2")
TABLES = ("a", "b", "c")
OBJECTS = (
    "catalog c",
    *(f"schema c.{s}" for s in SCHEMAS),
    *(f"table c.{s}.{t}" for s in SCHEMAS for t in TABLES),
)
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE", "CREATE_SCHEMA")

steps = history_steps(
    roles=ROLES, users=USERS, objects=OBJECTS, privileges=PRIVILEGES, schemas=SCHEMAS, tables=TABLES
)


def changes_for(world: World, step: tuple[Any, ...]) -> list[Any]:
    return model_changes(world.model, step)


def server_step(world: World, step: tuple[Any, ...]) -> list[Any] | None:
    """Tables change on the server and in the model together; ``None`` if not a table step."""
    kind, schema, *rest = step
    objects = world.model.objects
    existing = ObjectRef.of("table", ("c", schema, rest[0])) in objects
    before = len(world.model.objects)
    if kind == "create" and not existing:
        world.table(schema, rest[0])
    elif kind == "drop" and existing:
        world.drop_table(schema, rest[0])
    elif kind == "rename" and existing and ObjectRef.of("table", ("c", schema, rest[1])) not in objects:
        world.rename_table(schema, rest[0], rest[1])
    return [] if len(world.model.objects) == before and kind != "rename" else [("table", schema, *rest)]


def scope_of(world: World, step: tuple[Any, ...], events: list[Any]) -> Scope:
    scope = Scope.nothing()
    for event in events:
        scope = scope | event_scope(event)
    if step[0] in ("create", "drop", "rename"):
        names = [ObjectRef.of("table", ("c", step[1], t)) for t in step[2:]]
        scope = scope | Scope.of(names)
    return scope


def test_random_histories_match_the_evaluator_after_every_sync(mariadb, capsys) -> None:
    totals = {"histories": 0, "syncs": 0, "checks": 0, "mismatches": 0}

    @settings(PROFILE)
    @given(history=st.lists(steps, min_size=1, max_size=6))
    def run(history: list[tuple[Any, ...]]) -> None:
        world = World(mariadb)
        backend = backend_for(mariadb)
        try:
            for user in USERS:
                world.user(user)
            do(world.model, ch.add_group(world.model, "g", ["u1"]))
            for role in ROLES:
                world.role(role)
            for schema in SCHEMAS:
                world.schema(schema)
            world.table("s1", "a")
            world.table("s2", "b")
            reconcile(backend, world.model, Scope.everything())
            totals["histories"] += 1
            for step in history:
                if step[0] in ("create", "drop", "rename"):
                    server_step(world, step)
                    events: list[Any] = []
                else:
                    try:
                        events = changes_for(world, step)
                    except ModelError:
                        continue
                    do(world.model, events)
                reconcile(backend, world.model, scope_of(world, step, events))
                assert planner.plan(backend, world.model, Scope.everything()).empty, step
                probe = world.probe()
                totals["syncs"] += 1
                totals["checks"] += probe.checks
                totals["mismatches"] += len(probe.mismatches)
                assert probe.mismatches == [], (history, step)
        finally:
            backend.close()
            world.cleanup()

    run()
    with capsys.disabled():
        print(
            f"\nmysql histories: {totals['histories']} histories, {totals['syncs']} syncs, "
            f"{totals['checks']} checks, {totals['mismatches']} mismatches"
        )
    assert totals["mismatches"] == 0 and totals["checks"] > 0
