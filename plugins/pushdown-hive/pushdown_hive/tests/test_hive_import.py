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
from collections.abc import Callable
from typing import Any

import pytest

from pushdown.app.service.spec import load_spec_text
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
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


def make_estate(world: World, seed: int, names: tuple[str, ...] = USERS) -> list[str]:
    """Grants to the metastore users ``names``; each table owned by one of them or ``etl``."""
    rng = random.Random(seed)
    owners = random.Random(-seed)  # apart: the grants of a seed stay what they were
    c = world.client
    dbs = [world.db(s) for s in ("sales", "hr")]
    tables = [(db, t) for db in dbs for t in ("orders", "pay")]
    for db in dbs:
        c.create_database(db)
    owned = {(db, t): owners.choice([*names, "etl"]) for db, t in tables}
    for (db, t), owner in owned.items():
        c.create_table(db, t, owner=owner)
    roles = [world.role_name(r) for r in ("readers", "writers")]
    for role in [*roles, "outsider_" + world.prefix]:
        c.create_role(role, owner=world.grantor)
    made: list[str] = []
    grants: list[Grant] = []
    for _ in range(rng.randint(6, 14)):
        kind = rng.randrange(10)
        user, role, (db, t) = rng.choice(names), rng.choice(roles), rng.choice(tables)
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
    for (db, t), owner in owned.items():  # what the backend compiles a model owner to, often
        g = Grant(HiveObject.of_table(db, t), owner, PrincipalType.USER, "ALL", grantor=world.grantor)
        if (
            owner != "etl"
            and owners.random() < 0.6
            and all((x.obj, x.principal, x.privilege) != (g.obj, g.principal, g.privilege) for x in grants)
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


#: name mappings (``pushdown_map_principal``), the configured store's users, and the
#: metastore user names the estate grants to: some a model user maps to, some none, some two
NAMINGS: dict[str, tuple[Callable[[Principal], str] | None, tuple[str, ...], tuple[str, ...]]] = {
    "plain": (None, (), USERS),
    "prefix": (lambda p: "hv_" + p.name, USERS, ("hv_ann", "hv_b`o'b", "ann", "c d")),
    "fold": (lambda p: p.name.lower(), ("Ann", "C d"), ("ann", "Ann", "c d", "b`o'b")),
    "clash": (lambda p: {"ann": "x", "bob": "x"}.get(p.name, p.name), ("ann", "bob"), ("x", "ann", "c d")),
}


@pytest.mark.parametrize(
    ("naming", "seed"),
    [("plain", s) for s in range(1, 7)] + [(n, s) for n in NAMINGS if n != "plain" for s in (1, 2, 3)],
)
@pytest.mark.parametrize("roles", [True, False])
def test_import_of_a_hand_made_metastore_estate_is_never_wider(
    hive_metastore: Any, naming: str, seed: int, roles: bool
) -> None:
    hook, store, names = NAMINGS[naming]
    world = World(hive_metastore)
    backend = world.backend(hook, roles=roles)
    try:
        made = make_estate(world, seed, names)
        adopted = adopt(backend.estate(store_with(*store)))
        text = estate_yaml(adopted, f"backend {BACKEND}")
        assert not adopted.wider, text  # the CLI would refuse to write it
        spec = load_spec_text(text, allow_empty=True)
        mapped = {u: (hook or (lambda p: p.name))(Principal.user(u)) for u in spec.users}
        users = set(names) | set(mapped.values())
        before = privilege_sets(world, users)
        first = plan(backend, spec, Scope.everything())
        assert first.adds == 0 and first.changes == 0, (made, text, first.render())
        assert {op.fact for op in first.ops} == set(adopted.revoked), (made, text, first.render())
        for fact in adopted.revoked:
            assert any(str(fact) in line for line in adopted.report)

        additive = world.backend(hook, adopt="additive", roles=roles)
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
        # never imported as someone else: each model user holds what its own metastore name held
        for user, name in mapped.items():
            assert name in names, (user, name, text)
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


# -- owners and name mappings ------------------------------------------------------------


def imported(backend: Any, store: Model) -> tuple[Any, Any, str]:
    """The import of what ``backend``'s metastore holds, against the configured ``store``."""
    adopted = adopt(backend.estate(store))
    text = estate_yaml(adopted, f"backend {BACKEND}")
    return adopted, load_spec_text(text, allow_empty=True), text


def store_with(*users: str) -> Model:
    model = bound()
    for user in users:
        for event in ch.add_user(model, user):
            model.apply(event)
    return model


def give(world: World, db: str, table: str | None, principal: str, *privileges: str) -> None:
    on = HiveObject.database(db) if table is None else HiveObject.of_table(db, table)
    world.client.grant_privileges(
        [Grant(on, principal, PrincipalType.USER, p, grantor=world.grantor) for p in privileges]
    )


def selects(spec: Model, user: str) -> set[str]:
    """The tables ``user``'s roles are given SELECT_TABLE on (dotted names)."""
    return {
        ".".join(g.object.names[1:])
        for role in spec.roles_of(user)
        for g in spec.roles[role]
        if g.privilege.value == "SELECT_TABLE" and g.condition.value == "ALLOW"
    }


def test_a_tables_metastore_owner_holding_all_is_imported_as_its_owner(hive_metastore: Any) -> None:
    """The table's owner on the metastore, holding ALL there by pushdown's grantor (what the
    backend compiles a model owner to), is the model's owner, with the gates it needs; another
    user's ALL on the same table is left out (the model has one owner), with the reason."""
    world = World(hive_metastore)
    db = world.db("s")
    world.client.create_database(db)
    world.client.create_table(db, "t", owner="ann")
    give(world, db, "t", "ann", "ALL")
    give(world, db, "t", "bob", "ALL")
    backend = world.backend(roles=False)
    try:
        adopted, spec, text = imported(backend, bound())
        table = ObjectRef.of("table", (CATALOG, db, "t"))
        assert spec.owners.get(table) == "ann", text
        assert adopted.model.owners.get(table) == "ann"
        (bob,) = [f for f in adopted.revoked if getattr(f, "principal", "") == "bob"]
        assert any(str(bob) in line and "one owner" in line for line in adopted.report), text
        first = plan(backend, spec, Scope.everything())
        assert first.adds == 0 and first.changes == 0, first.render()
        assert {op.fact for op in first.ops} == {bob}, first.render()
        before = privilege_sets(world, {"ann", "bob"})
        reconcile(backend, spec, Scope.everything(), allow_mass_removal=True)
        after = privilege_sets(world, {"ann", "bob"})
        assert after[("ann", db, "t")] == before[("ann", db, "t")] and "ALL" in after[("ann", db, "t")]
        assert all(now <= before[key] for key, now in after.items())
    finally:
        backend.close()
        world.cleanup()


def test_an_owner_the_metastore_holds_no_all_for_is_left_out_with_the_reason(hive_metastore: Any) -> None:
    """The metastore's owner of a table who holds only SELECT there: the model's owner would
    compile to ALL, which the metastore does not hold, so the owner is not imported (never
    wider) and the report says why; the SELECT is."""
    world = World(hive_metastore)
    db = world.db("s")
    world.client.create_database(db)
    world.client.create_table(db, "t", owner="ann")
    give(world, db, "t", "ann", "SELECT")
    backend = world.backend(roles=False)
    try:
        adopted, spec, text = imported(backend, bound())
        assert not spec.owners, text
        assert selects(spec, "ann") == {f"{db}.t"}, text
        line = [x for x in adopted.report if x.startswith(f"not imported: owner of `{db}`.`t`")]
        assert line and "ALL" in line[0] and "ann" in line[0], text
        assert plan(backend, spec, Scope.everything()).empty
    finally:
        backend.close()
        world.cleanup()


def test_database_role_and_unmanaged_owners_are_left_out_outside_the_fence(hive_metastore: Any) -> None:
    """A database's owner (the model's schema owner would own its tables, present and
    future), a table owned by a ROLE (Hive 3 on) and one owned by a user holding nothing in
    pushdown's fence are reported as left out, never imported."""
    world = World(hive_metastore)
    db = world.db("s")
    world.client.create_database(db, owner="ann")
    world.client.create_table(db, "t", owner="ann")
    world.client.create_table(db, "u", owner="etl")
    give(world, db, "t", "ann", "ALL")
    give(world, db, None, "ann", "CREATE")
    world.client.create_table(db, "v", owner="etl")
    row = world.client.get_table_objects(db, ["v"])[0]
    row.owner, row.ownerType = "analysts", int(PrincipalType.ROLE)
    world.client._call("alter_table", db, "v", row)
    # Hive 3 on keeps a table's owner type (a 2.3 metastore drops it: the owner is a user)
    by_role = getattr(world.client.get_table_objects(db, ["v"])[0], "ownerType", None) == int(
        PrincipalType.ROLE
    )
    backend = world.backend(roles=False)
    try:
        adopted, spec, text = imported(backend, bound())
        schema = ObjectRef.of("schema", (CATALOG, db))
        assert spec.owners == {ObjectRef.of("table", (CATALOG, db, "t")): "ann"}, text
        assert schema not in spec.owners
        outside = [x for x in adopted.report if x.startswith("left out (outside the fence")]
        assert any(f"owner of database `{db}`: USER 'ann'" in x for x in outside), text
        assert any(f"owner of table `{db}`.`u`: user 'etl'" in x for x in outside), text
        if by_role:
            assert any(f"owner of table `{db}`.`v`: ROLE 'analysts'" in x for x in outside), text
        assert plan(backend, spec, Scope.everything()).empty
    finally:
        backend.close()
        world.cleanup()


def test_a_prefix_mapping_is_inverted_and_an_unmapped_name_is_nobody(hive_metastore: Any) -> None:
    """``pushdown_map_principal`` maps ann to ``hv_ann``: the metastore's ``hv_ann`` is model
    user ann; its plain ``ann`` (no model user maps to it) is imported as nobody, reported."""
    world = World(hive_metastore)
    db = world.db("s")
    world.client.create_database(db)
    world.client.create_table(db, "t", owner="etl")
    world.client.create_table(db, "u", owner="etl")
    give(world, db, "t", "hv_ann", "SELECT")
    give(world, db, "u", "ann", "SELECT")
    backend = world.backend(map_principal=lambda p: "hv_" + p.name, roles=False)
    try:
        adopted, spec, text = imported(backend, store_with("ann"))
        assert spec.users == {"ann"}, text
        assert selects(spec, "ann") == {f"{db}.t"}, text
        (plain,) = [f for f in adopted.revoked if getattr(f, "principal", "") == "ann"]
        assert any(str(plain) in x and "no model user maps" in x for x in adopted.report), text
        first = plan(backend, spec, Scope.everything())
        assert first.adds == 0 and first.changes == 0, first.render()
        assert {op.fact for op in first.ops} == {plain}, first.render()
    finally:
        backend.close()
        world.cleanup()


def test_a_swapping_mapping_never_imports_one_users_grants_as_anothers(hive_metastore: Any) -> None:
    """A hostile mapping: ann maps to ``bob`` and bob to ``ann``. The metastore's ``bob``
    holds SELECT on t and u, its ``ann`` on t only: model user ann gets t and u (she is
    ``bob`` there), bob only t, and the plan of the import changes nothing."""
    swap = {"ann": "bob", "bob": "ann"}
    world = World(hive_metastore)
    db = world.db("s")
    world.client.create_database(db)
    world.client.create_table(db, "t", owner="etl")
    world.client.create_table(db, "u", owner="etl")
    give(world, db, "t", "ann", "SELECT")
    give(world, db, "t", "bob", "SELECT")
    give(world, db, "u", "bob", "SELECT")
    backend = world.backend(map_principal=lambda p: swap.get(p.name, p.name), roles=False)
    try:
        adopted, spec, text = imported(backend, bound())
        assert selects(spec, "ann") == {f"{db}.t", f"{db}.u"}, text
        assert selects(spec, "bob") == {f"{db}.t"}, text
        assert not adopted.revoked, text
        assert plan(backend, spec, Scope.everything()).empty
    finally:
        backend.close()
        world.cleanup()


def test_a_name_two_model_users_map_to_is_imported_as_nobody(hive_metastore: Any) -> None:
    """ann and bob both map to ``x`` (a sync withholds their grants): the metastore's ``x``
    is neither of them, nor a new user ``x``; its grant and membership are reported."""
    world = World(hive_metastore)
    db = world.db("s")
    world.client.create_database(db)
    world.client.create_table(db, "t", owner="x")
    give(world, db, "t", "x", "ALL")
    role = world.role_name("readers")
    world.client.create_role(role, owner=world.grantor)
    world.client.grant_role(role, "x", PrincipalType.USER, grantor=world.grantor)
    give_role = Grant(HiveObject.of_table(db, "t"), role, PrincipalType.ROLE, "SELECT", grantor=world.grantor)
    world.client.grant_privileges([give_role])
    mapping = {"ann": "x", "bob": "x"}
    for roles in (False, True):
        backend = world.backend(map_principal=lambda p: mapping.get(p.name, p.name), roles=roles)
        try:
            adopted, spec, text = imported(backend, store_with("ann", "bob"))
            assert not spec.users and not spec.owners, text
            assert any("all map to metastore user 'x'" in x for x in adopted.report), text
            first = plan(backend, spec, Scope.everything())
            assert first.adds == 0 and first.changes == 0, first.render()
        finally:
            backend.close()
    world.cleanup()


def test_a_case_folding_mapping_imports_the_store_users_own_spelling(hive_metastore: Any) -> None:
    """The mapping folds case (the store's Ann is ``ann`` on the metastore): the metastore's
    ``ann`` is model user Ann, not a new user ``ann`` beside her."""
    world = World(hive_metastore)
    db = world.db("s")
    world.client.create_database(db)
    world.client.create_table(db, "t", owner="etl")
    give(world, db, "t", "ann", "SELECT")
    backend = world.backend(map_principal=lambda p: p.name.lower(), roles=False)
    try:
        _, spec, text = imported(backend, store_with("Ann"))
        assert spec.users == {"Ann"}, text
        assert selects(spec, "Ann") == {f"{db}.t"}, text
        assert plan(backend, spec, Scope.everything()).empty
    finally:
        backend.close()
        world.cleanup()
