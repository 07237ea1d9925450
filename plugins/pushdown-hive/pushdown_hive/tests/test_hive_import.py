"""`pushdown import --backend` on a real Hive Metastore: random estates made by hand.

For each estate (users with hostile names; grants by the backend's grantor to users, managed roles, groups and
other roles; with and without grant option; on tables and databases; role memberships,
with admin option too; ALL to users): the imported spec, planned against the same
metastore, adds nothing and removes exactly what the import reported; after a full
authoritative apply, every user's privilege set on every object (the metastore's own
answer, roles and groups included) is a subset of what it was (never wider); with
``adopt = "additive"`` nothing is revoked.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from pushdown.app.service.spec import load_spec_text
from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.estate import adopt, estate_yaml
from pushdown.reconcile.planner import plan
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_hive.client import Grant, HiveObject, PrincipalType

from .world import BACKEND, CATALOG, World

USERS = ("ann", "b`o'b", "c d")
GROUPS = ("etl",)
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")


def bound() -> Model:
    model = Model()
    for event in ch.create_object(
        model, ObjectRef.of("catalog", (CATALOG,)), properties={"backend": BACKEND}
    ):
        model.apply(event)
    return model


def make_estate(world: World, seed: int) -> list[str]:
    rng = random.Random(seed)
    c = world.client
    dbs = [world.db(s) for s in ("sales", "hr")]
    tables = [(db, t) for db in dbs for t in ("orders", "pay")]
    for db in dbs:
        c.create_database(db)
    for db, t in tables:
        c.create_table(db, t, owner="etl")
    roles = [world.role_name(r) for r in ("readers", "writers")]
    for role in [*roles, "outsider_" + world.prefix]:
        c.create_role(role, owner=world.grantor)
    made: list[str] = []
    grants: list[Grant] = []
    for _ in range(rng.randint(6, 14)):
        kind = rng.randrange(10)
        user, role, (db, t) = rng.choice(USERS), rng.choice(roles), rng.choice(tables)
        on = HiveObject.of_table(db, t)
        to: tuple[str, PrincipalType] = (user, PrincipalType.USER)
        if kind in (1, 2):
            to = (role, PrincipalType.ROLE)
        option = kind == 3
        if kind == 4:
            to = (rng.choice(GROUPS), PrincipalType.GROUP)
        if kind == 5:
            to = ("outsider_" + world.prefix, PrincipalType.ROLE)
        if kind == 6:
            privileges: tuple[str, ...] = ("ALL",)
        elif kind == 7:
            on, privileges = HiveObject.database(db), (rng.choice(("CREATE", "SELECT")),)
        elif rng.random() < 0.5:
            privileges = PRIVILEGES
        else:
            privileges = (rng.choice(PRIVILEGES),)
        if kind == 8:
            if f"ROLE {role} TO {user}" in made:
                continue  # the metastore refuses a second grant of the role
            c.grant_role(
                role, user, PrincipalType.USER, grantor=world.grantor, grant_option=rng.random() < 0.3
            )
            made.append(f"ROLE {role} TO {user}")
            continue
        for p in privileges:
            g = Grant(on, to[0], to[1], p, grantor=world.grantor, grant_option=option)
            if g not in grants and all(
                (x.obj, x.principal, x.principal_type, x.privilege)
                != (g.obj, g.principal, g.principal_type, g.privilege)
                for x in grants
            ):
                grants.append(g)
                made.append(str(g))
    c.grant_privileges(grants)
    return made


def privilege_sets(world: World, users: set[str]) -> dict[tuple[str, str, str | None], frozenset[str]]:
    out = {}
    for db, table in world.objects():
        obj = HiveObject.database(db) if table is None else HiveObject.of_table(db, table)
        for user in sorted(users):
            out[(user, db, table)] = frozenset(world.client.get_privilege_set(obj, user, GROUPS).all)
    return out


@pytest.mark.parametrize("roles", [True, False])
@pytest.mark.parametrize("seed", range(1, 7))
def test_import_of_a_hand_made_metastore_estate_is_never_wider(
    hive_metastore: Any, seed: int, roles: bool
) -> None:
    world = World(hive_metastore)
    backend = world.backend(roles=roles)
    try:
        made = make_estate(world, seed)
        adopted = adopt(backend.estate(bound()))
        text = estate_yaml(adopted, f"backend {BACKEND}")
        spec = load_spec_text(text)
        users = set(USERS) | spec.users
        before = privilege_sets(world, users)
        first = plan(backend, spec, Scope.everything())
        assert first.adds == 0 and first.changes == 0, (made, text, first.render())
        assert {op.fact for op in first.ops} == set(adopted.revoked), (made, text, first.render())
        for fact in adopted.revoked:
            assert any(str(fact) in line for line in adopted.report)

        additive = world.backend(adopt="additive", roles=roles)
        try:
            held = plan(additive, spec, Scope.everything())
            assert held.empty, held.render()
            reconcile(additive, spec, Scope.everything())
        finally:
            additive.close()
        assert privilege_sets(world, users) == before  # nothing revoked

        reconcile(backend, spec, Scope.everything(), allow_mass_removal=True)
        after = privilege_sets(world, users)
        for key, now in after.items():
            assert now <= before[key], (key, sorted(now - before[key]), made, text)
        assert plan(backend, spec, Scope.everything()).empty
    finally:
        backend.close()
        world.cleanup()


def test_additive_keeps_a_grant_held_with_option_and_holds_back_its_plain_twin(hive_metastore: Any) -> None:
    """The metastore holds a privilege once, with or without its option: an additive plan
    that keeps the one with option cannot add the plain one, so holds it back too."""
    world = World(hive_metastore)
    db = world.schema("s")
    world.table("s", "t")
    world.user("ann")
    gates = [("catalog c", "USE_CATALOG", "ALLOW"), (f"schema c.{db}", "USE_SCHEMA", "ALLOW")]
    world.role("r", [*gates, (f"table c.{db}.t", "SELECT_TABLE", "ALLOW")], to=["ann"])
    on = HiveObject.of_table(db, "t")
    world.client.grant_privileges(
        [Grant(on, "ann", PrincipalType.USER, "SELECT", grantor=world.grantor, grant_option=True)]
    )
    backend = world.backend(adopt="additive", roles=False)
    try:
        done, applied = reconcile(backend, world.model, Scope.everything())
        assert done.empty and not applied
        assert any("held back + SELECT ON TABLE" in f for f in done.findings), done.findings
        held = world.client.list_privileges(on)
        assert [(g.principal, g.privilege, g.grant_option) for g in held if g.principal == "ann"] == [
            ("ann", "SELECT", True)
        ]
    finally:
        backend.close()
        world.cleanup()
