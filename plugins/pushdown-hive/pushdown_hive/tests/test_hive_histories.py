"""Random histories of model changes; after every sync, every user's privilege set on
every database and table of the metastore must match the evaluator.

Each history starts from a fresh model and fresh databases (a new name prefix), applies
up to five changes (grants and revokes with DENY, group membership, role grants to
users and groups, owner changes, tables created and dropped on the metastore as well),
syncs after each change with only the scope its events touched, requires the full
plan to be empty afterwards, and asks ``get_privilege_set`` for each user (with its
groups) on each object.
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

from .world import World, do

pytestmark = pytest.mark.hive

settings.register_profile(
    "pushdown-hive-histories",
    max_examples=15,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("pushdown-hive-histories")

USERS = ("u1", "u2", "u3")
ROLES = ("r1", "r2", "r3")
SCHEMAS = ("s1", "s2")
TABLES = ("a", "b", "c")
OBJECTS = (
    "catalog c",
    *(f"schema {s}" for s in SCHEMAS),
    *(f"table {s}.{t}" for s in SCHEMAS for t in TABLES),
)
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE")

steps = history_steps(
    roles=ROLES,
    users=USERS,
    objects=OBJECTS,
    privileges=PRIVILEGES,
    schemas=SCHEMAS,
    tables=TABLES,
    rename=False,
)


def ref(world: World, text: str) -> ObjectRef:
    """``schema s1`` / ``table s1.a`` in the world's database names."""
    kind, _, name = text.partition(" ")
    if kind == "catalog":
        return ObjectRef.parse(text)
    parts = name.split(".")
    return ObjectRef.of(kind, ("c", world.db(parts[0]), *parts[1:]))


def changes_for(world: World, step: tuple[Any, ...]) -> list[Any]:
    return model_changes(world.model, step, lambda text: ref(world, text))


def table_step(world: World, step: tuple[Any, ...]) -> Scope:
    """A table created or dropped on the metastore and in the model; the scope it touched."""
    kind, schema, table = step
    obj = ObjectRef.of("table", ("c", world.db(schema), table))
    if kind == "create" and obj not in world.model.objects:
        world.table(schema, table)
    elif kind == "drop" and obj in world.model.objects:
        world.drop_table(schema, table)
    return Scope.of([obj])


def test_random_histories_match_the_evaluator_after_every_sync(hive_metastore: Any, capsys: Any) -> None:
    totals = {"histories": 0, "syncs": 0, "operations": 0, "checks": 0, "mismatches": 0}

    @settings(PROFILE)
    @given(history=st.lists(steps, min_size=1, max_size=5))
    def run(history: list[tuple[Any, ...]]) -> None:
        world = World(hive_metastore)
        hive = world.backend()
        try:
            for user in USERS:
                world.user(user)
            do(world.model, ch.add_group(world.model, "g", ["u1"]))
            for schema in SCHEMAS:
                world.schema(schema)
            world.table("s1", "a")
            world.table("s2", "b")
            # grants to start from (the steps may take them away, or deny below them)
            start = [
                ("catalog c", "USE_CATALOG", "ALLOW"),
                ("catalog c", "USE_SCHEMA", "ALLOW"),
                (f"schema c.{world.db('s1')}", "SELECT_TABLE", "ALLOW"),
            ]
            world.role("r1", start, to=["u1", "u2"])
            world.role("r2")
            # a second role of u2's, so a change to u1 widens to u2 with a role out of play
            world.role(
                "r3", [*start[:2], (f"schema c.{world.db('s2')}", "MODIFY_TABLE", "ALLOW")], to=["u2", "u3"]
            )
            first, _ = reconcile(hive, world.model, Scope.everything())
            totals["operations"] += len(first.ops)
            totals["histories"] += 1
            for step in history:
                if step[0] in ("create", "drop"):
                    scope = table_step(world, step)
                else:
                    try:
                        events = changes_for(world, step)
                    except ModelError:
                        continue
                    do(world.model, events)
                    scope = Scope.union(event_scope(e) for e in events)
                plan, _ = reconcile(hive, world.model, scope)
                totals["operations"] += len(plan.ops)
                assert planner.plan(hive, world.model, Scope.everything()).empty, step
                probe = world.probe()
                totals["syncs"] += 1
                totals["checks"] += probe.checks
                totals["mismatches"] += len(probe.mismatches)
                assert probe.mismatches == [], (history, step)
        finally:
            hive.close()
            world.cleanup()

    run()
    with capsys.disabled():
        print(
            f"\nhive histories: {totals['histories']} histories, {totals['syncs']} syncs, "
            f"{totals['operations']} grants and revokes applied, "
            f"{totals['checks']} checks, {totals['mismatches']} mismatches"
        )
    assert totals["mismatches"] == 0 and totals["checks"] > 0 and totals["operations"] > 0
