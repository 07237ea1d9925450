"""The Unity Catalog backend against a Unity Catalog server (the stand-in: the open
server is not served here): apply, read back, a second plan empty, and every user asking
the server itself, compared with the evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pushdown.app.service.spec import load_spec, load_spec_text
from pushdown.errors import BackendError
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_unitycatalog.client import API

from .world import World

ROOT = Path(__file__).resolve().parents[4]
DEMO = {"crm": ["orders", "customers", "salaries"]}


def demo(server: Any) -> World:
    w = World(server, load_spec(ROOT / "examples" / "demo.yaml"), "sales", ["alice", "bob", "carol", "dave"])
    w.schema("crm")
    for t in DEMO["crm"]:
        w.table("crm", t)
    return w


def test_demo_spec_applies_reads_back_and_a_second_plan_is_empty(uc_standin: Any) -> None:
    w = demo(uc_standin)
    backend = w.backend()
    plan, applied = reconcile(backend, w.model, Scope.everything())
    assert applied and plan.adds > 0 and plan.removes == 0
    again, _ = reconcile(backend, w.model, Scope.everything(), dry_run=True)
    assert again.empty, [str(op) for op in again.ops]
    held = {str(f) for f in backend.read(w.model, _full(backend, w)).facts}
    assert "GRANT SELECT ON TABLE sales.crm.orders TO alice" in held  # salaries denied: per table
    assert "GRANT SELECT ON SCHEMA sales.crm TO alice" not in held
    assert "GRANT MODIFY ON TABLE sales.crm.orders TO dave" in held


def test_the_server_decides_as_the_evaluator_for_every_user(uc_standin: Any) -> None:
    w = demo(uc_standin)
    reconcile(w.backend(), w.model, Scope.everything())
    wider, narrower = w.compare(DEMO)
    assert wider == set()
    # carol owns the catalog in the model, not on the server: the server lets her less
    assert {u for u, _, _ in narrower} <= {"carol"}, narrower


SEED = """
metalake: m
users: [admin, ann, ben, cat]
service_admins: [admin]
catalogs:
  main:
    backend: uc
    schemas:
      default:
        tables: [department, employees]
      hr:
        owner: cat
        tables: [pay]
roles:
  readers:
    grants:
      - on: catalog main
        allow: [USE_CATALOG]
      - on: schema main.default
        allow: [USE_SCHEMA]
      - on: table main.default.department
        allow: [SELECT_TABLE]
    to: [user ann]
  schema_wide:
    grants:
      - on: catalog main
        allow: [USE_CATALOG, USE_SCHEMA, SELECT_TABLE]
    to: [user ben]
  owners_gate:
    grants:
      - on: catalog main
        allow: [USE_CATALOG]
    to: [user cat]
"""
SEED_HELD = {"default": ["department", "employees"], "hr": ["pay"]}


def seed(server: Any) -> World:
    w = World(server, load_spec_text(SEED), "main", ["ann", "ben", "cat"])
    for schema, tables in SEED_HELD.items():
        w.schema(schema)
        for t in tables:
            w.table(schema, t)
    return w


def test_seed_003_examples_end_as_the_seed_says(uc_standin: Any) -> None:
    """Seed 003: SELECT on a table needs USE CATALOG and USE SCHEMA too; a catalog-level
    grant is inherited by every schema and table; an owner's rights."""
    w = seed(uc_standin)
    backend = w.backend()
    plan, _ = reconcile(backend, w.model, Scope.everything())
    assert any("cat owns schema main.hr" in n and "narrower" in n for n in plan.notes), plan.notes
    ann = w.server_says("ann", SEED_HELD)
    assert ann == {("ann", "load_schema", "main.default"), ("ann", "load_table", "main.default.department")}
    ben = w.server_says("ben", SEED_HELD)
    assert ("ben", "load_table", "main.hr.pay") in ben and (
        "ben",
        "load_table",
        "main.default.employees",
    ) in ben
    wider, narrower = w.compare(SEED_HELD)
    assert wider == set()
    assert {u for u, _, _ in narrower} <= {"cat"}, narrower
    again, _ = reconcile(backend, w.model, Scope.everything(), dry_run=True)
    assert again.empty, [str(op) for op in again.ops]


def test_a_schema_grant_only_where_every_table_decides_alike(uc_standin: Any) -> None:
    w = seed(uc_standin)
    backend = w.backend()
    reconcile(backend, w.model, Scope.everything())
    held = {str(f) for f in backend.read(w.model, _full(backend, w)).facts}
    assert "GRANT SELECT ON SCHEMA main.default TO ben" in held
    assert "GRANT SELECT ON SCHEMA main.hr TO ben" in held
    assert "GRANT SELECT ON TABLE main.default.department TO ann" in held
    assert not any("SCHEMA main.default TO ann" in h and "SELECT" in h for h in held)


def test_hand_made_grants_to_a_managed_principal_are_revoked(uc_standin: Any) -> None:
    w = seed(uc_standin)
    w.admin.update("catalog", "main", "ann", ["SELECT", "CREATE FUNCTION", "EXECUTE"], [])
    w.admin.update("schema", "main.hr", "ann", ["USE SCHEMA", "READ VOLUME"], [])
    w.admin.update("table", "main.hr.pay", "ann", ["MODIFY"], [])
    uc_standin.add_leaf("function", "main.hr.f")
    uc_standin.add_leaf("volume", "main.default.pay")  # named like a table elsewhere: its own securable
    w.admin.update("function", "main.hr.f", "ann", ["EXECUTE"], [])
    w.admin.update("volume", "main.default.pay", "ann", ["READ VOLUME"], [])
    backend = w.backend()
    plan, _ = reconcile(backend, w.model, Scope.everything())
    assert plan.removes >= 8
    assert "ann" not in w.admin.permissions("function", "main.hr.f")
    assert "ann" not in w.admin.permissions("volume", "main.default.pay")
    wider, _ = w.compare(SEED_HELD)
    assert wider == set()
    assert w.admin.permissions("catalog", "main").get("ann") == {"USE CATALOG"}


def test_grants_to_others_are_left_alone_and_reported(uc_standin: Any) -> None:
    w = seed(uc_standin)
    for other in ("zed", "ANN", "account users"):
        uc_standin.add_user(other)
    w.admin.update("table", "main.hr.pay", "zed", ["SELECT"], [])
    w.admin.update("table", "main.hr.pay", "ANN", ["SELECT"], [])
    w.admin.update("schema", "main.hr", "account users", ["USE SCHEMA"], [])
    w.admin.update("metastore", "any", "ann", ["CREATE CATALOG"], [])
    uc_standin.add_storage("external_location", "lake")
    w.admin.update("external_location", "lake", "ann", ["READ FILES"], [])
    backend = w.backend()
    reconcile(backend, w.model, Scope.everything())
    assert w.admin.permissions("table", "main.hr.pay").get("zed") == {"SELECT"}
    findings = backend.read(w.model, _full(backend, w)).findings
    assert any("ANN" in f and "case" in f for f in findings), findings
    assert any("account users" in f for f in findings), findings
    assert not any("zed" in f for f in findings)
    assert any(f.startswith("GRANT CREATE CATALOG ON METASTORE TO ann") for f in findings), findings
    assert any(f.startswith("GRANT READ FILES ON EXTERNAL LOCATION lake TO ann") for f in findings), findings
    assert w.admin.permissions("external_location", "lake") == {"ann": {"READ FILES"}}


def test_what_a_managed_principal_owns_on_the_server_is_reported(uc_standin: Any) -> None:
    """ann creates a table through hand-made grants: the grants are revoked, her
    ownership of the table cannot be, and the read says so."""
    w = seed(uc_standin)
    w.admin.update("catalog", "main", "ann", ["USE CATALOG"], [])
    w.admin.update("schema", "main.hr", "ann", ["USE SCHEMA", "CREATE TABLE"], [])
    body = {"name": "mine", "catalog_name": "main", "schema_name": "hr", "table_type": "MANAGED"}
    w.as_user("ann").call("POST", API + "/tables", body)
    backend = w.backend()
    reconcile(backend, w.model, Scope.everything())
    assert "ann" not in w.admin.permissions("schema", "main.hr")
    findings = backend.read(w.model, _full(backend, w)).findings
    assert any(f.startswith("table main.hr.mine is owned on the server by ann") for f in findings), findings
    assert not any("main.hr.pay" in f for f in findings)


def test_a_table_created_outside_the_model_is_decided_by_its_schema(uc_standin: Any) -> None:
    w = seed(uc_standin)
    backend = w.backend()
    reconcile(backend, w.model, Scope.everything())
    w.table("default", "later")  # not in the model: ben's catalog-wide SELECT reaches it
    reconcile(backend, w.model, Scope.everything())
    held = dict(SEED_HELD, default=[*SEED_HELD["default"], "later"])
    wider, _ = w.compare(held)
    assert wider == set()
    assert ("ben", "load_table", "main.default.later") in w.server_says("ben", held)
    assert ("ann", "load_table", "main.default.later") not in w.server_says("ann", held)


def test_a_refused_change_does_not_hold_back_the_revokes(uc_standin: Any) -> None:
    w = seed(uc_standin)
    w.admin.update("table", "main.hr.pay", "ann", ["SELECT"], [])
    backend = w.backend(principals=["ann", "ben", "cat", "ghost"])
    # ghost is fenced but not on the server: a grant to it is refused, the revokes go on
    from pushdown.model import changes as ch

    for event in ch.add_user(w.model, "ghost"):
        w.model.apply(event)
    for event in ch.grant_role(w.model, "schema_wide", ch.Principal.user("ghost")):
        w.model.apply(event)
    with pytest.raises(BackendError):
        reconcile(backend, w.model, Scope.everything(), retries=0)
    assert "ann" not in w.admin.permissions("table", "main.hr.pay")
    assert w.admin.permissions("catalog", "main").get("ben") == {"USE CATALOG"}


def test_a_scoped_sync_reads_only_the_schemas_it_reaches(uc_standin: Any) -> None:
    w = seed(uc_standin)
    backend = w.backend()
    reconcile(backend, w.model, Scope.everything())
    uc_standin.requests.clear()
    from pushdown.model.securables import ObjectRef

    plan, _ = reconcile(
        backend, w.model, Scope.of(objects=[ObjectRef.parse("table main.hr.pay")]), dry_run=True
    )
    assert plan.empty
    paths = {p for _, p, _ in uc_standin.requests}
    assert not any("main.default" in p for p in paths), paths
    assert f"{API}/permissions/table/main.hr.pay" in paths


def _full(backend: Any, w: World) -> Any:
    from pushdown.reconcile.planner import resolve

    return resolve(backend, w.model, Scope.everything())


TWO = """
metalake: m
users: [ann]
catalogs:
  main:
    backend: uc
    schemas: {s: {tables: [t]}}
  more:
    backend: uc
    schemas: {s: {tables: [t]}}
  Caps:
    backend: uc
    schemas: {s: {tables: [t]}}
roles:
  r:
    grants:
      - on: metalake m
        allow: [USE_CATALOG, USE_SCHEMA, SELECT_TABLE]
    to: [user ann]
"""


def test_every_catalog_naming_the_backend_is_enforced_and_capitals_are_not(uc_standin: Any) -> None:
    w = World(uc_standin, load_spec_text(TWO), "main", ["ann"])
    for catalog in ("more", "caps"):
        w.admin.call("POST", API + "/catalogs", {"name": catalog})
    for catalog in ("main", "more", "caps"):
        w.admin.call("POST", API + "/schemas", {"name": "s", "catalog_name": catalog})
        body = {"name": "t", "catalog_name": catalog, "schema_name": "s", "table_type": "MANAGED"}
        w.admin.call("POST", API + "/tables", body)
    backend = w.backend()
    backend.context.catalogs = frozenset()  # the catalogs' own backend property names it
    plan, _ = reconcile(backend, w.model, Scope.everything())
    assert any(n.startswith("catalog Caps: Unity Catalog keeps names in lower case") for n in plan.findings)
    ann = w.as_user("ann")
    assert ann.tables("main", "s") == ["t"] and ann.tables("more", "s") == ["t"]
    assert "ann" not in w.admin.permissions("catalog", "caps")
    again, _ = reconcile(backend, w.model, Scope.everything(), dry_run=True)
    assert again.empty, [str(op) for op in again.ops]
