"""`pushdown import --backend` on the Unity Catalog stand-in: random estates made by hand.

For each estate (USE CATALOG / USE SCHEMA, CREATE SCHEMA / CREATE TABLE, SELECT and
MODIFY on schemas and tables, privileges the model has no word for, grants on a function
and a volume, grants to a principal outside the fence): the imported spec, planned
against the same server, adds nothing and removes exactly what the import reported; after
a full authoritative apply, no user can load, list or create anything (asked as that user,
of the server itself) they could not before; with ``adopt = "additive"`` nothing is
revoked.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from pushdown.app.service.spec import load_spec_text
from pushdown.model import changes as ch
from pushdown.model.state import Model
from pushdown.reconcile.estate import adopt, estate_yaml
from pushdown.reconcile.planner import plan
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_unitycatalog.client import API

from .world import World

USERS = ("ann", "ben", "cat")
HELD = {"default": ["department", "employees"], "hr": ["pay"]}
PRIVILEGES = {
    "catalog": ("USE CATALOG", "CREATE SCHEMA", "SELECT", "CREATE FUNCTION"),
    "schema": ("USE SCHEMA", "CREATE TABLE", "SELECT", "MODIFY", "READ VOLUME"),
    "table": ("SELECT", "MODIFY"),
}


def make_estate(w: World, seed: int) -> list[str]:
    rng = random.Random(seed)
    for schema, tables in HELD.items():
        w.schema(schema)
        for t in tables:
            w.table(schema, t)
    w.server.add_user("zed")
    made = []
    for _ in range(rng.randint(6, 14)):
        user = rng.choice((*USERS, "zed"))
        kind = rng.choice(("catalog", "schema", "schema", "table", "table"))
        schema = rng.choice(sorted(HELD))
        name = {
            "catalog": "main",
            "schema": f"main.{schema}",
            "table": f"main.{schema}.{rng.choice(HELD[schema])}",
        }[kind]
        privileges = rng.sample(PRIVILEGES[kind], rng.randint(1, 2))
        if kind != "catalog" and rng.random() < 0.3:  # the gates a reader needs
            w.admin.update("catalog", "main", user, ["USE CATALOG"], [])
            w.admin.update("schema", f"main.{schema}", user, ["USE SCHEMA"], [])
        w.admin.update(kind, name, user, privileges, [])
        made.append(f"{privileges} on {kind} {name} to {user}")
    return made


def says(w: World) -> set[tuple[str, str, str]]:
    return {t for u in USERS for t in w.server_says(u, HELD)}


@pytest.mark.parametrize("seed", range(1, 11))
def test_import_of_a_hand_made_unity_catalog_estate_is_never_wider(uc_standin: Any, seed: int) -> None:
    w = World(uc_standin, Model(), "main", USERS)
    made = make_estate(w, seed)
    backend = w.backend()
    before = says(w)
    adopted = adopt(backend.estate(Model()))
    text = estate_yaml(adopted, "backend uc")
    spec = load_spec_text(text)
    first = plan(backend, spec, Scope.everything())
    assert first.adds == 0 and first.changes == 0, (made, text, first.render())
    assert {op.fact for op in first.ops} == set(adopted.revoked), (made, text, first.render())

    additive = w.backend(adopt="additive")
    assert plan(additive, spec, Scope.everything()).empty
    reconcile(additive, spec, Scope.everything())
    assert says(w) == before

    reconcile(backend, spec, Scope.everything(), allow_mass_removal=True)
    after = says(w)
    assert after <= before, (sorted(after - before), made, text)
    assert plan(backend, spec, Scope.everything()).empty


# -- name mappings: the import inverts the mapping the sync uses ----------------------------


def store_with(*users: str) -> Model:
    model = Model()
    for user in users:
        for event in ch.add_user(model, user):
            model.apply(event)
    return model


def mapped_world(server: Any, principals: tuple[str, ...]) -> World:
    """Catalog ``main``, schema ``s`` with tables ``t`` and ``u``; ``principals`` fenced."""
    w = World(server, Model(), "main", principals)
    w.schema("s")
    for table in ("t", "u"):
        w.table("s", table)
    return w


def give(w: World, principal: str, *tables: str) -> None:
    """SELECT on each of ``tables`` of ``main.s``, with the USE gates."""
    w.admin.update("catalog", "main", principal, ["USE CATALOG"], [])
    w.admin.update("schema", "main.s", principal, ["USE SCHEMA"], [])
    for table in tables:
        w.admin.update("table", f"main.s.{table}", principal, ["SELECT"], [])


def owned_by(w: World, principal: str, table: str) -> None:
    """``principal`` creates ``main.s.<table>`` itself (the server makes it the owner);
    its CREATE TABLE is taken back."""
    give(w, principal)
    w.admin.update("schema", "main.s", principal, ["CREATE TABLE"], [])
    body = {"name": table, "catalog_name": "main", "schema_name": "s", "table_type": "MANAGED"}
    w.as_user(principal).call("POST", API + "/tables", body)
    w.admin.update("schema", "main.s", principal, [], ["CREATE TABLE"])


def selects(spec: Model, user: str) -> set[str]:
    return {
        g.object.names[-1]
        for role in spec.roles_of(user)
        for g in spec.roles[role]
        if g.privilege.value == "SELECT_TABLE"
        and g.condition.value == "ALLOW"
        and g.object.type.value == "table"
    }


def import_mapped(backend: Any, store: Model) -> tuple[Any, Model, str]:
    """The import of ``backend`` against the store's users; its plan adds and changes
    nothing and removes exactly what the import reported."""
    adopted = adopt(backend.estate(store))
    text = estate_yaml(adopted, "backend uc")
    spec = load_spec_text(text, allow_empty=True)
    first = plan(backend, spec, Scope.everything())
    assert first.adds == 0 and first.changes == 0, (text, first.render())
    assert {op.fact for op in first.ops} == set(adopted.revoked), (text, first.render())
    return adopted, spec, text


def test_a_prefix_mapping_is_inverted_and_an_unmapped_principal_is_nobody(uc_standin: Any) -> None:
    """``pushdown_map_principal`` maps ann to ``uc_ann``: the server's ``uc_ann`` is model
    user ann; its plain ``ann`` (no model user maps to it) is imported as nobody, its grants
    reported and its table's ownership listed as outside. Fails on main: ``uc_ann`` was
    imported as a user ``uc_ann`` and ann got nothing."""
    w = mapped_world(uc_standin, ("ann", "uc_ann"))
    give(w, "uc_ann", "t")
    give(w, "ann", "u")
    owned_by(w, "ann", "o")
    backend = w.backend(map_principal=lambda p: "uc_" + p.name)
    adopted, spec, text = import_mapped(backend, store_with("ann"))
    assert spec.users == {"ann"} and selects(spec, "ann") == {"t"}, text
    plain = {f for f in adopted.revoked if f.principal == "ann"}
    assert plain and not {f for f in adopted.revoked if f.principal == "uc_ann"}, text
    for fact in plain:
        assert any(str(fact) in x and "no model user maps to principal 'ann'" in x for x in adopted.report), (
            text
        )
    outside = [x for x in adopted.report if x.startswith("left out (outside the fence")]
    assert any("owner of table main.s.o: no model user maps to principal 'ann'" in x for x in outside), text


def test_a_swapping_mapping_never_imports_one_principals_grants_as_anothers(uc_standin: Any) -> None:
    """A hostile mapping: ann maps to ``bob`` and bob to ``ann``. The server's ``bob``
    holds SELECT on t and u, its ``ann`` on t only: model user ann gets t and u (she is
    ``bob`` there), bob only t. Fails on main: ann got t only (the server's ann's grant) and
    the plan of the import revoked bob's SELECT on u."""
    w = mapped_world(uc_standin, ("ann", "bob"))
    give(w, "ann", "t")
    give(w, "bob", "t", "u")
    swap = {"ann": "bob", "bob": "ann"}
    backend = w.backend(map_principal=lambda p: swap.get(p.name, p.name))
    before = {t for u in ("ann", "bob") for t in w.server_says(u, {"s": ["t", "u"]})}
    adopted, spec, text = import_mapped(backend, Model())
    assert selects(spec, "ann") == {"t", "u"} and selects(spec, "bob") == {"t"}, text
    assert not adopted.revoked, text
    reconcile(backend, spec, Scope.everything())
    assert {t for u in ("ann", "bob") for t in w.server_says(u, {"s": ["t", "u"]})} == before
    assert plan(backend, spec, Scope.everything()).empty


def test_a_principal_two_model_users_map_to_is_imported_as_nobody(uc_standin: Any) -> None:
    """ann and bob both map to ``x`` (a sync withholds their grants): the server's ``x`` is
    neither of them, nor a new user ``x``; its grants are reported, its table's ownership
    listed as outside. Fails on main: ``x`` was imported as a model user ``x``."""
    w = mapped_world(uc_standin, ("x",))
    give(w, "x", "t")
    owned_by(w, "x", "o")
    two = {"ann": "x", "bob": "x"}
    backend = w.backend(map_principal=lambda p: two.get(p.name, p.name))
    adopted, spec, text = import_mapped(backend, store_with("ann", "bob"))
    assert not spec.users and not spec.owners, text
    assert adopted.revoked, text
    for fact in adopted.revoked:
        assert any(
            str(fact) in x and "model users ann, bob all map to principal 'x'" in x for x in adopted.report
        )
    assert any(
        "owner of table main.s.o: model users ann, bob all map to principal 'x'" in x for x in adopted.report
    )


def test_a_case_folding_mapping_imports_the_store_users_own_spelling(uc_standin: Any) -> None:
    """The mapping folds case (the store's Ann is ``ann`` on the server): the server's
    ``ann`` is model user Ann, not a new user ``ann`` beside her; its ``ANN``, which no model
    user maps to exactly, is imported as nobody and reported. Fails on main: users ``ann``
    and ``ANN`` were imported beside Ann."""
    w = mapped_world(uc_standin, ("ann", "ANN"))
    give(w, "ann", "t")
    give(w, "ANN", "u")
    backend = w.backend(map_principal=lambda p: p.name.lower())
    adopted, spec, text = import_mapped(backend, store_with("Ann"))
    assert spec.users == {"Ann"} and selects(spec, "Ann") == {"t"}, text
    other = {f for f in adopted.revoked if f.principal == "ANN"}
    assert other and other == set(adopted.revoked), text
    for fact in other:
        assert any(str(fact) in x and "no model user maps to principal 'ANN'" in x for x in adopted.report), (
            text
        )
