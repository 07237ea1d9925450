"""The recording backend in the hostile environment (:mod:`tests.adversary`).

The recording backend is the core's reference: its "server" is the set of permits it
holds, so what it enforces is exactly that set. Each history draws a name mapping (the
recording backend names model users as they are, so every mapping must leave it
unchanged), grants and DENYs on unregistered, capitalised and case-twin objects,
removals and returns of users, groups and roles, and hand-made permits slipped into its
state between syncs. After every scoped sync and after the full one that follows, no
user of the pool (removed ones included) holds a permit the evaluator refuses.

External group resolution does not apply: the recording backend enforces nothing on a
host that resolves groups. Objects created outside the model do not either: it holds
no inventory of its own, so an ``outside`` step is played as nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import ModelError
from pushdown.host.recording import OPERATIONS_BY_TYPE, Permit, RecordingBackend
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from tests.adversary import (
    MAPPINGS,
    Tally,
    compare,
    histories,
    hostile_steps,
    mapping_names,
    model_changes,
)
from tests.builders import Builder

USERS = ("u1", "u2", "U3")
ROLES = ("r1", "r2")
SCHEMAS = ("s1", "s2")
TABLES = ("a", "b", "Secret")
OBJECTS = ("catalog c", *(f"schema c.{s}" for s in SCHEMAS), "table c.s1.a", "table c.s2.b")
UNREGISTERED = ("table c.s1.Secret", "table c.s1.A", "table c.s2.zz", "schema c.S1", "table c.s3.x")
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE")
#: hand-made permits slipped into the backend's state: (user, operation, object)
HAND = (
    ("u2", "load_table", "table c.s1.a"),
    ("U3", "drop_table", "table c.s2.b"),
    ("stranger", "load_catalog", "catalog c"),
    ("u1", "create_table", "schema c.s2"),
)

steps = hostile_steps(
    roles=ROLES,
    users=USERS,
    objects=OBJECTS,
    unregistered=UNREGISTERED,
    privileges=PRIVILEGES,
    schemas=SCHEMAS,
    tables=TABLES,
    hand=len(HAND),
    rename=True,
)


def start() -> Builder:
    b = Builder().users(*USERS).group("g", "u1").catalog("c", backend="rec")
    for schema in SCHEMAS:
        b.schema(f"c.{schema}")
    b.table("c.s1.a").table("c.s2.b")
    b.role("r1", ("catalog c", "USE_CATALOG", "ALLOW"), ("schema c.s1", "USE_SCHEMA", "ALLOW"))
    b.allow("r1", "schema c.s1", "SELECT_TABLE")
    b.role("r2", ("catalog c", "USE_CATALOG", "ALLOW"), ("catalog c", "USE_SCHEMA", "ALLOW"))
    return b.grant_role("r1", users=["u2"], groups=["g"]).grant_role("r2", users=["U3"])


def table_step(model: Model, step: tuple[Any, ...]) -> list[Any]:
    from pushdown.model import changes as ch

    kind, schema, table, *rest = step
    obj = ObjectRef.parse(f"table c.{schema}.{table}")
    if kind == "create":
        return ch.create_object(model, obj)
    if kind == "drop":
        return ch.drop_object(model, obj)
    return ch.rename_object(model, obj, rest[0])


def decisions(backend: RecordingBackend, model: Model) -> tuple[set[Any], set[Any], int]:
    """(held, allowed, checks) over the pool users (and a stranger) and the catalog's objects."""
    evaluator = Evaluator(model)
    objects = {o for o in model.objects if o.catalog == "c" and o.type in OPERATIONS_BY_TYPE}
    objects |= {ObjectRef.parse(o) for _, _, o in HAND}
    held = {(f.user, f.operation, str(f.object)) for f in backend.held if isinstance(f, Permit)}
    allowed, checks = set(), 0
    for user in (*USERS, "stranger"):
        for obj in objects:
            for op in OPERATIONS_BY_TYPE[obj.type]:
                checks += 1
                if obj in model.objects and evaluator.authorize(user, op, obj, explain=False):
                    allowed.add((user, op, str(obj)))
    return held, allowed, checks


def events_for(model: Model, step: tuple[Any, ...]) -> list[Any]:
    if step[0] in ("create", "drop", "rename"):
        return table_step(model, step)
    return model_changes(model, step)


def test_the_recording_backend_is_never_wider_than_the_evaluator(capsys: pytest.CaptureFixture[str]) -> None:
    tally = Tally()

    @settings(max_examples=histories(300), deadline=None, suppress_health_check=list(HealthCheck))
    @given(mapping=mapping_names, history=st.lists(steps, min_size=1, max_size=6))
    def run(mapping: str, history: list[tuple[Any, ...]]) -> None:
        b = start()
        context = BackendContext("rec", {}, map_principal=MAPPINGS[mapping])
        backend = RecordingBackend(context)
        reconcile(backend, b.model, Scope.everything())
        tally.histories += 1
        for step in history:
            if step[0] == "hand":
                user, op, obj = HAND[step[1]]
                backend.held.add(Permit(user, op, ObjectRef.parse(obj)))
                scope = Scope.of([ObjectRef.parse(obj)])
            else:
                try:
                    events = events_for(b.model, step)
                except ModelError:
                    continue
                for event in events:
                    b.model.apply(event)
                scope = Scope.union(scope_of(e) for e in events)
            for sync_scope in (scope, Scope.everything()):
                plan, _ = reconcile(backend, b.model, sync_scope)
                held, allowed, checks = decisions(backend, b.model)
                wider, narrower = compare(held, allowed)
                tally.record(checks, wider, narrower, [*plan.notes, *plan.findings])
                assert wider == [], (mapping, history, step, sync_scope.describe())

    run()
    with capsys.disabled():
        print("\n" + tally.line("recording"))
    assert tally.wider == 0 and tally.checks > 0 and tally.histories >= histories(300)
