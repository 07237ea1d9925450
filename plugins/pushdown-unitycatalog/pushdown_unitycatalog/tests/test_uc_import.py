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
from pushdown.model.state import Model
from pushdown.reconcile.estate import adopt, estate_yaml
from pushdown.reconcile.planner import plan
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile

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
