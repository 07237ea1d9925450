"""Random histories of model changes; after every sync, the stand-in's policy engine must
decide every (user, access, resource) as the evaluator does.

Each history starts from a fresh model (two roles with some gates open, held by users and a
group) and a fresh stand-in, applies up to six changes
(ALLOW and DENY grants and revokes on the catalog, schemas, tables, a topic and a
fileset; role grants to users and to a group; group membership; owners; tables created,
renamed and dropped), syncs after each one (the scope its events touched), requires
the full plan to be empty afterwards, and asks the stand-in about every user (and one
the model does not know), every access the backend maps and every resource, including
a table no schema holds yet.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from tests.backend_histories import steps as history_steps
from tests.builders import Builder

from .histories import applied, estate, events_for, judged, synced
from .probe import probe
from .world import backend_for

pytestmark = pytest.mark.ranger

PROFILE = settings(
    max_examples=40,
    deadline=None,
    derandomize=False,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
USERS = ("u1", "u2", "u3")
ROLES = ("r1", "r2")
SCHEMAS = ("s1", "s2")
TABLES = ("a", "b", "c")
OBJECTS = (
    "catalog c",
    *(f"schema c.{s}" for s in SCHEMAS),
    *(f"table c.{s}.{t}" for s in SCHEMAS for t in TABLES),
    "topic c.s1.events",
    "fileset c.s2.files",
)
PRIVILEGES = (
    "USE_CATALOG",
    "USE_SCHEMA",
    "SELECT_TABLE",
    "MODIFY_TABLE",
    "CREATE_TABLE",
    "CONSUME_TOPIC",
    "PRODUCE_TOPIC",
    "READ_FILESET",
    "WRITE_FILESET",
)

steps = history_steps(  # grants weigh most: they decide the most
    roles=ROLES,
    users=USERS,
    objects=OBJECTS,
    privileges=PRIVILEGES,
    schemas=SCHEMAS,
    tables=TABLES,
    grant_weight=3,
)


def start() -> Builder:
    b = estate(USERS, roles=ROLES, schemas=SCHEMAS, tables=("s1.a", "s2.b")).create("topic c.s1.events")
    b.create("fileset c.s2.files", properties={"location": "/data/files"})
    # gates already open for some, so that the random grants decide something
    b.allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", "USE_SCHEMA", "SELECT_TABLE")
    b.allow("r2", "catalog c", "USE_CATALOG", "USE_SCHEMA")
    return b.grant_role("r1", users=["u2"], groups=["g"]).grant_role("r2", users=["u3"])


def test_random_histories_match_the_evaluator_after_every_sync(capsys: pytest.CaptureFixture[str]) -> None:
    totals = {"histories": 0, "syncs": 0, "checks": 0, "mismatches": 0}

    @PROFILE
    @given(history=st.lists(steps, min_size=2, max_size=6))
    # a DENY of a table privilege once barred r1's holders from the topic's publish and
    # delete: deny items that Ranger's implied grants widen to describe, cutting CONSUME_TOPIC
    @example(
        history=[
            ("grant", "r1", "catalog c", "SELECT_TABLE", "DENY"),
            ("grant", "r1", "catalog c", "CONSUME_TOPIC", "ALLOW"),
        ]
    )
    # the catalog's last tables dropped (no Hive catalog: every Hive policy goes), then a
    # table made in another schema: the catalog holds the Hive service again, and every one
    # of its databases is due, not only the new table's (s1's policy was left out)
    @example(history=[("drop", "s1", "a"), ("drop", "s2", "b"), ("create", "s2", "a")])
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as standin:
            backend = backend_for(standin)
            totals["histories"] += 1
            for step, model in synced(backend, start().model, history):
                result = judged(standin, backend, model, USERS, (history, step))
                totals["syncs"] += 1
                totals["checks"] += result.checks
                totals["mismatches"] += len(result.mismatches)

    run()
    with capsys.disabled():
        print(
            f"\nranger histories: {totals['histories']} histories, {totals['syncs']} syncs, "
            f"{totals['checks']} checks, {totals['mismatches']} mismatches"
        )
    assert totals["mismatches"] == 0 and totals["checks"] > 0


@pytest.mark.parametrize(
    "step",
    [
        ("grant", "r2", "catalog c", "MODIFY_TABLE", "ALLOW"),  # alter on every table, not on the database
        ("grant", "r1", "table c.s1.a", "SELECT_TABLE", "DENY"),  # an exception under a wildcard
        ("owner", "schema c.s2", "u3"),  # database-level accesses for one user
        ("grant", "r2", "schema c.s2", "CREATE_TABLE", "ALLOW"),
        ("grant", "r1", "topic c.s1.events", "CONSUME_TOPIC", "ALLOW"),
        ("grant", "r2", "fileset c.s2.files", "WRITE_FILESET", "ALLOW"),
    ],
)
def test_known_hard_cases_match_the_evaluator(step: tuple[Any, ...]) -> None:
    with Standin() as standin:
        backend = backend_for(standin)
        model = start().model
        applied(model, events_for(model, step))
        reconcile(backend, model, Scope.everything())
        result = probe(standin, model, "c", (*USERS, "stranger"))
        assert result.checks > 0 and result.mismatches == []
