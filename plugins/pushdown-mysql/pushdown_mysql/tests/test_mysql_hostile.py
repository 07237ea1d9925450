"""Hostile names for databases, tables and users: no injection, no wildcard widening."""

from __future__ import annotations

import pytest

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin, do

pytestmark = pytest.mark.mariadb

DATABASES = [
    "we`ird",
    "it's",
    'dq"uote',
    "sp ace",
    "semi;colon",
    "pct%",
    "under_score",
    "back\\slash",
    "ünïcødé中文",
    "d" * 64,
]
TABLES = ["t`1", "o'k", "x; DROP TABLE y", "100%", "a_b", "é" * 64]
USERS = [
    "o'brien",
    "back`tick",
    "semi;colon",
    "pct%",
    "under_score",
    "ünï",
    'dq"',
    "sl\\ash",
    "u" * (128 - 3),
]


def test_hostile_names_converge_and_match_the_evaluator(world: World, backend: MySQLBackend) -> None:
    for user in USERS:
        world.user(user)
    for i, db in enumerate(DATABASES):
        world.schema(db, owner=USERS[i % len(USERS)] if i % 3 == 0 else None)
        for table in TABLES[: 1 + i % len(TABLES)]:
            world.table(db, table)
    # decoys that a wildcard would match: a grant on `pct%` or `under_score` must not reach them
    world.schema("pctX")
    world.table("pctX", "t")
    world.schema("underXscore")
    world.table("underXscore", "t")
    world.role(
        "r;`'",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("schema c.`pct%`", "USE_SCHEMA", "ALLOW"),
            ("schema c.`pct%`", "SELECT_TABLE", "ALLOW"),
            ("schema c.under_score", "USE_SCHEMA", "ALLOW"),
            ("schema c.under_score", "CREATE_TABLE", "ALLOW"),
            ("schema c.under_score", "MODIFY_TABLE", "ALLOW"),
        ],
    )
    do(world.model, ch.add_group(world.model, "g`%_;", USERS[:4]))
    do(world.model, ch.grant_role(world.model, "r;`'", Principal.group("g`%_;")))
    reconcile(backend, world.model, Scope.everything())
    assert planner.plan(backend, world.model, Scope.everything()).empty
    probe = world.probe()
    assert probe.mismatches == []
    with admin(world.server) as cur:
        cur.execute("SELECT Db FROM mysql.db WHERE User LIKE 'pd\\_%%'")
        patterns = {row[0] for row in cur.fetchall()}
    assert "under\\_score" in patterns and "under_score" not in patterns
    print(f"hostile names: {probe.checks} checks, 0 mismatches")
