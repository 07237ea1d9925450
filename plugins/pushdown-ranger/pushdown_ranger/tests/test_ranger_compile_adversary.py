"""The compile's hostile histories (:mod:`tests.adversary`) against the stand-in.

Each history draws a name mapping and plays grants, DENYs and owners on registered and
unregistered objects (capitalised names, case twins, a schema nobody registered, names
holding Ranger's wildcards or ``{USER}`` token, a table named like a user), the
same topic (but for case) in two catalogs, nested fileset locations (one of them in the
other catalog), removals and returns of users, groups and roles, tables created on the
server only, and the enforcing host resolving group ``g`` unlike the model. After every
scoped sync and after the full one, the stand-in's engine is asked about every user of
the pool (removed ones included, by their mapped names, with the host's groups) and
every (access, resource) the model names: never wider than the evaluator; a narrower
answer is counted with or without a note. Hand-made Ranger state is drawn by the
backend's own adversary test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import ModelError
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from tests.adversary import MAPPINGS, Tally, histories, hostile_steps, mapping_names
from tests.backend_histories import GROUP
from tests.builders import Builder

from .histories import model_events
from .probe import Probe, probe
from .world import backend_for

pytestmark = pytest.mark.ranger

USERS = ("u1", "u2", "U3")
ROLES = ("r1", "r2")
SCHEMAS = ("s1", "s2")
TABLES = ("a", "b", "Secret")
CATALOGS = ("c", "k")
OBJECTS = (
    "catalog c",
    "catalog k",
    *(f"schema c.{s}" for s in SCHEMAS),
    "table c.s1.a",
    "table c.s2.b",
    "topic c.s1.events",
    "topic k.t.EVENTS",
    "fileset c.s2.files",
    "fileset c.s2.inner",
    "fileset k.t.lake",
)
UNREGISTERED = (
    "table c.s1.Secret",
    "table c.s1.A",
    "table c.s2.zz",
    "schema c.S1",
    "table c.s3.x",
    "topic c.s1.fresh",
    "topic k.t.Events",
    "table c.s1.{USER}",  # Ranger's token: a resource value matching the asking user's name
    "table c.s1.u2",  # a table named like a user
    "table c.s2.t*",
)
PRIVILEGES = (
    "USE_CATALOG",
    "USE_SCHEMA",
    "SELECT_TABLE",
    "MODIFY_TABLE",
    "CREATE_TABLE",
    "CONSUME_TOPIC",
    "READ_FILESET",
    "WRITE_FILESET",
)
steps = hostile_steps(
    roles=ROLES,
    users=USERS,
    objects=OBJECTS,
    unregistered=UNREGISTERED,
    privileges=PRIVILEGES,
    schemas=SCHEMAS,
    tables=TABLES,
    external=True,
    rename=True,
    grant_weight=3,
)


def start() -> Builder:
    b = Builder().users(*USERS).group(GROUP, "u1")
    b.catalog("c", backend="rg").catalog("k", backend="rg").schema("k.t")
    for role in ROLES:
        b.role(role)
    for schema in SCHEMAS:
        b.schema(f"c.{schema}")
    b.table("c.s1.a").table("c.s2.b").create("topic c.s1.events").create("topic k.t.EVENTS")
    b.create("fileset c.s2.files", properties={"location": "/data/files"})
    b.create("fileset c.s2.inner", properties={"location": "hdfs://nn:8020/data/files/inner/"})
    b.create("fileset k.t.lake", properties={"location": "/data"})
    b.allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", "USE_SCHEMA", "SELECT_TABLE")
    b.allow("r2", "catalog c", "USE_CATALOG", "USE_SCHEMA").allow("r2", "catalog k", "USE_CATALOG")
    b.allow("r2", "catalog k", "USE_SCHEMA", "CONSUME_TOPIC", "READ_FILESET")
    return b.grant_role("r1", users=["u2"], groups=[GROUP]).grant_role("r2", users=["U3"])


def check(
    standin: Standin, model: Model, mapping: str, host: dict[str, bool], extra: set[ObjectRef]
) -> Probe:
    """Every pool user (by the mapped name, with the host's groups) on both catalogs. A
    removed user whose server name is a current user's (the ``collide`` mapping) is that
    user on the server, and asked as that user only."""
    name = server_name(mapping)
    taken = {name(u) for u in model.users}
    pool = [u for u in (*USERS, "stranger") if u in model.users or name(u) not in taken]

    def groups(user: str) -> list[str]:
        held = set(model.user_groups.get(user, ()))
        if user in host:
            held = held | {GROUP} if host[user] else held - {GROUP}
        return sorted(held)

    total = Probe()
    for catalog in CATALOGS:
        got = probe(
            standin,
            model,
            catalog,
            tuple(pool),
            groups_of=groups,
            mapped=name,
            extra=extra,
        )
        total.checks += got.checks
        total.wider += got.wider
        total.narrower += got.narrower
    return total


def server_name(mapping: str) -> Callable[[str], str]:
    return lambda user: MAPPINGS[mapping](Principal.user(user))


def test_hostile_compile_histories_are_never_wider(capsys: pytest.CaptureFixture[str]) -> None:
    tally = Tally()

    @settings(max_examples=histories(150), deadline=None, suppress_health_check=list(HealthCheck))
    @given(mapping=mapping_names, history=st.lists(steps, min_size=1, max_size=6))
    def run(mapping: str, history: list[tuple[Any, ...]]) -> None:
        b, host, outside = start(), {}, set()
        with Standin() as standin:
            backend = backend_for(standin, map_principal=MAPPINGS[mapping])
            reconcile(backend, b.model, Scope.everything())
            tally.histories += 1
            for step in history:
                if step[0] == "external":
                    host[step[1]] = step[2]
                elif step[0] == "outside":
                    outside.add(ObjectRef.parse(f"table c.{step[1]}.{step[2]}"))
                scope = Scope.nothing()
                try:
                    for event in model_events(b.model, step):
                        b.model.apply(event)
                        scope = scope | scope_of(event)
                except ModelError:
                    continue
                for where in (scope, Scope.everything()):
                    plan, _ = reconcile(backend, b.model, where)
                    got = check(standin, b.model, mapping, host, outside)
                    notes = [*plan.notes, *plan.findings]
                    tally.record(got.checks, got.wider, got.narrower, notes, server_name(mapping))
                    assert got.wider == [], (mapping, history, step, where.describe(), got.wider[:5])

    run()
    with capsys.disabled():
        print("\n" + tally.line("ranger compile"))
    assert tally.wider == 0 and tally.checks > 0


def test_grant_to_a_role_nobody_holds_on_a_case_twin_is_never_wider() -> None:
    """Seed 2 at 450 histories: role r2 lost its only holder, then r2 is granted on
    ``c.S1``, an unregistered capitalised twin of ``c.s1``. The twins withhold each
    other's database from everyone; the scoped sync of that grant must reach ``c.s1``'s
    database even though the grant reaches no user directly."""
    steps = [("remove_user", "U3"), ("grant", "r2", "schema c.S1", "USE_SCHEMA", "ALLOW")]
    b = start()
    with Standin() as s:
        be = backend_for(s, map_principal=MAPPINGS["identity"])
        reconcile(be, b.model, Scope.everything())
        for step in steps:
            scope = Scope.nothing()
            for e in model_events(b.model, step):
                b.model.apply(e)
                scope = scope | scope_of(e)
            reconcile(be, b.model, scope)
            assert check(s, b.model, "identity", {}, set()).wider == [], step
