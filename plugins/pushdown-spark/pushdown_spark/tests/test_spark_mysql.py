"""A full reconcile of the ``mysql`` backend driven by the Spark engine, on a real MariaDB:
the plan equals the one the local engine drives, apply converges (the second plan is
empty) and every login matches the evaluator."""

from __future__ import annotations

from typing import Any

import pytest
from pushdown_lab.mariadb import LocalMariaDB
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.tests.conftest import mariadb, world  # noqa: F401 - the MySQL tests' fixtures
from pushdown_mysql.tests.test_mysql_sync import sales
from pushdown_mysql.tests.world import BACKEND, PUSHDOWN, PUSHDOWN_PASSWORD, World, backend_for

from pushdown.reconcile import planner
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_spark.engine import SparkEngine

pytestmark = [pytest.mark.spark, pytest.mark.mariadb]


def test_a_full_reconcile_driven_by_spark_converges_and_equals_the_local_one(
    world: World,  # noqa: F811
    mariadb: LocalMariaDB,  # noqa: F811
    spark: Any,
) -> None:
    sales(world)
    engine = SparkEngine(session=spark)
    settings = {"host": mariadb.host, "port": mariadb.port, "user": PUSHDOWN, "password": PUSHDOWN_PASSWORD}
    driven = MySQLBackend(BackendContext(BACKEND, settings, engine=engine))
    local = backend_for(mariadb)
    try:
        by_local = planner.plan(local, world.model, Scope.everything())
        assert engine.last is None
        plan, applied = reconcile(driven, world.model, Scope.everything())
        assert engine.last is not None, "the full plan ran on Spark"
        assert applied and plan.adds > 0
        assert sorted(map(str, plan.ops)) == sorted(map(str, by_local.ops))
        assert plan.notes == by_local.notes
        assert planner.plan(driven, world.model, Scope.everything()).empty  # converged, asked of Spark again
        probe = world.probe()
        assert probe.mismatches == []
        print(
            f"\nspark-driven MySQL reconcile: {len(plan.ops)} operations, converged, "
            f"{probe.checks} logins tried"
        )
    finally:
        driven.close()
        local.close()
