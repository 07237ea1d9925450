"""Paths by which a Unity Catalog server could leave a managed principal more than the
model says without pushdown saying so: ownership of every securable the permissions API
cannot show (the catalog, functions, volumes, models, external locations, credentials),
an owner of the model spelt with capitals masking the server's owner, a token that sees
only its own grants, and listings that come in pages (the open server's 100 a page)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from pushdown.app.service.spec import load_spec_text
from pushdown.errors import BackendError
from pushdown.model.state import Model
from pushdown.reconcile.planner import resolve
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_unitycatalog.client import API, UnityCatalog

from .test_uc_sync import SEED, SEED_HELD, seed
from .world import World


def _findings(backend: Any, model: Model) -> tuple[str, ...]:
    return backend.read(model, resolve(backend, model, Scope.everything())).findings


def _made_by(server: Any, model: Model, maker: str, users: list[str]) -> World:
    """SEED's catalog ``main``, created by ``maker`` (who therefore owns it), not the admin."""
    w = World(server, model, "boot", users)
    w.catalog = "main"
    server.add_user(maker)
    w.admin.update("metastore", "any", maker, ["CREATE CATALOG"], [])
    UnityCatalog(server.url, server.token_of(maker)).call("POST", API + "/catalogs", {"name": "main"})
    w.admin.update("metastore", "any", maker, [], ["CREATE CATALOG"])
    for schema, tables in SEED_HELD.items():
        w.schema(schema)
        for t in tables:
            w.table(schema, t)
    return w


def test_a_catalog_a_managed_principal_owns_on_the_server_is_reported(uc_standin: Any) -> None:
    """ann created catalog main: her ownership passes every check in it (the open server's
    expressions all accept ``#catalog OWNER``), and the permissions API neither shows nor
    takes it away."""
    model = load_spec_text(SEED)
    w = _made_by(uc_standin, model, "ann", ["ann", "ben", "cat"])
    backend = w.backend()
    reconcile(backend, model, Scope.everything())
    wider, _ = w.compare(SEED_HELD)
    assert ("ann", "load_table", "main.hr.pay") in wider  # what the finding is about
    findings = _findings(backend, model)
    assert any(f.startswith("catalog main is owned on the server by ann") for f in findings), findings


def test_functions_volumes_models_and_storage_a_managed_principal_owns_are_reported(uc_standin: Any) -> None:
    """Ownership of a function, volume or registered model (EXECUTE, READ VOLUME…) or of an
    external location or credential (READ FILES…) is no privilege the permissions API
    lists: the owners come from the listings."""
    w = seed(uc_standin)
    uc_standin.add_leaf("function", "main.hr.f", owner="ann")
    uc_standin.add_leaf("volume", "main.default.v", owner="ann")
    uc_standin.add_leaf("registered_model", "main.hr.m", owner="ann")
    uc_standin.add_leaf("volume", "main.hr.theirs")  # the admin's: nothing to say
    uc_standin.add_storage("external_location", "lake", owner="ann")
    uc_standin.add_storage("credential", "key", owner="ann")
    backend = w.backend()
    reconcile(backend, w.model, Scope.everything())
    findings = _findings(backend, w.model)
    for what in (
        "function main.hr.f",
        "volume main.default.v",
        "registered_model main.hr.m",
        "external_location lake",
        "credential key",
    ):
        assert any(f.startswith(f"{what} is owned on the server by ann") for f in findings), (what, findings)
    assert not any("theirs" in f for f in findings)


CASED = """
metalake: m
users: [ann]
catalogs:
  main:
    backend: uc
    schemas:
      hr:
        tables:
          T: {owner: ann}
          t: {}
roles:
  gates:
    grants:
      - on: catalog main
        allow: [USE_CATALOG, USE_SCHEMA]
    to: [user ann]
"""


def test_an_owner_the_model_spells_with_capitals_does_not_hide_the_servers(uc_standin: Any) -> None:
    """The model makes ann the owner of table ``T`` (capitals: it gets nothing); the
    server's ``t`` is another table, which ann created and so owns. The model gives her the
    gates but nothing on ``t``: the server's ownership of it is wider, and must be reported."""
    model = load_spec_text(CASED)
    w = World(uc_standin, model, "main", ["ann"])
    w.schema("hr")
    w.admin.update("catalog", "main", "ann", ["USE CATALOG"], [])
    w.admin.update("schema", "main.hr", "ann", ["USE SCHEMA", "CREATE TABLE"], [])
    body = {"name": "t", "catalog_name": "main", "schema_name": "hr", "table_type": "MANAGED"}
    w.as_user("ann").call("POST", API + "/tables", body)
    backend = w.backend()
    reconcile(backend, model, Scope.everything())
    assert ("ann", "load_table", "main.hr.t") in w.compare({"hr": ["t"]})[0]  # wider: say so
    findings = _findings(backend, model)
    assert any(f.startswith("table main.hr.t is owned on the server by ann") for f in findings), findings


FILESET = """
metalake: m
users: [ann]
catalogs:
  main:
    backend: uc
    schemas:
      hr:
        filesets:
          t: {owner: ann}
roles:
  gates:
    grants:
      - on: catalog main
        allow: [USE_CATALOG, USE_SCHEMA]
    to: [user ann]
"""


def test_an_owner_of_another_kind_of_object_does_not_hide_the_servers(uc_standin: Any) -> None:
    """The model makes ann the owner of fileset ``main.hr.t``, not of a table: the server's
    table ``main.hr.t``, which ann created, is hers beyond the model."""
    model = load_spec_text(FILESET)
    w = World(uc_standin, model, "main", ["ann"])
    w.schema("hr")
    w.admin.update("catalog", "main", "ann", ["USE CATALOG"], [])
    w.admin.update("schema", "main.hr", "ann", ["USE SCHEMA", "CREATE TABLE"], [])
    body = {"name": "t", "catalog_name": "main", "schema_name": "hr", "table_type": "MANAGED"}
    w.as_user("ann").call("POST", API + "/tables", body)
    backend = w.backend()
    reconcile(backend, model, Scope.everything())
    assert ("ann", "load_table", "main.hr.t") in w.compare({"hr": ["t"]})[0]  # wider: say so
    findings = _findings(backend, model)
    assert any(f.startswith("table main.hr.t is owned on the server by ann") for f in findings), findings


def test_a_token_that_owns_the_catalog_but_not_the_metastore_says_what_it_cannot_see(
    uc_standin: Any,
) -> None:
    """The docs allow the catalog owner's token; the server shows it only its own grants on
    the metastore, external locations and credentials, so ann's CREATE CATALOG is invisible
    to it. The read must say the metastore was not checked, not read it as nothing there."""
    model = load_spec_text(SEED)
    w = _made_by(uc_standin, model, "keeper", ["ann", "ben", "cat"])
    w.admin.update("metastore", "any", "ann", ["CREATE CATALOG"], [])
    backend = w.backend(token=uc_standin.token_of("keeper"))
    reconcile(backend, model, Scope.everything())
    findings = _findings(backend, model)
    assert any("METASTORE" in f.upper() and "ann" in f for f in findings) or any(
        "metastore" in f and "not checked" in f for f in findings
    ), findings
    wider, _ = w.compare(SEED_HELD)
    assert wider == set()


def test_a_token_that_owns_nothing_reads_nothing_rather_than_see_nothing(uc_standin: Any) -> None:
    """A token of a user who may read everything but owns nothing: the server shows it
    only its own grants, so ann's hand-made SELECT looks absent and, once the model's
    grants are in place, the plan empty. The catalog must be left out and said so, never
    read as clean."""
    w = seed(uc_standin)
    reconcile(w.backend(), w.model, Scope.everything())
    uc_standin.add_user("reader")
    w.admin.update("catalog", "main", "reader", ["USE CATALOG", "USE SCHEMA", "SELECT"], [])
    w.admin.update("table", "main.hr.pay", "ann", ["SELECT"], [])
    backend = w.backend(token=uc_standin.token_of("reader"))
    plan, _ = reconcile(backend, w.model, Scope.everything(), dry_run=True)
    assert any(f.startswith("catalog main: the token owns neither") for f in plan.findings), plan.findings
    assert w.admin.permissions("table", "main.hr.pay").get("ann") == {"SELECT"}


def test_a_catalog_the_token_cannot_read_does_not_hold_back_the_others(uc_standin: Any) -> None:
    """keeper's token owns catalog main, not catalog more (the admin's): more is left out
    and said so; ann's hand-made SELECT in main is revoked all the same."""
    model = load_spec_text(SEED.replace("catalogs:\n", "catalogs:\n  more:\n    backend: uc\n"))
    w = _made_by(uc_standin, model, "keeper", ["ann", "ben", "cat"])
    w.admin.call("POST", API + "/catalogs", {"name": "more"})
    w.admin.update("table", "main.hr.pay", "ann", ["SELECT"], [])
    w.admin.update("catalog", "more", "ann", ["SELECT"], [])
    backend = w.backend(token=uc_standin.token_of("keeper"))
    backend.context.catalogs = frozenset()  # the catalogs' own backend property names it
    plan, _ = reconcile(backend, model, Scope.everything())
    assert any(f.startswith("catalog more: the token owns neither") for f in plan.findings), plan.findings
    assert "ann" not in w.admin.permissions("table", "main.hr.pay")
    assert w.admin.permissions("catalog", "more").get("ann") == {"SELECT"}  # unread: untouched


def test_what_a_managed_principal_holds_in_a_catalog_pushdown_does_not_enforce_is_reported(
    uc_standin: Any,
) -> None:
    """The server's other catalogs are not pushdown's, but its managed principals are:
    ann's USE CATALOG and SELECT on catalog ``other`` (which no model catalog names) let
    her read every table there, and cat owns catalog ``mine``. Every call of the open server
    inside a catalog asks for its USE CATALOG or its ownership (or the metastore admin), so
    the catalog-level grants and the owner are what must be read and reported."""
    w = seed(uc_standin)
    w.admin.call("POST", API + "/catalogs", {"name": "other"})
    w.admin.call("POST", API + "/schemas", {"name": "s", "catalog_name": "other"})
    w.admin.call("POST", API + "/tables", {"name": "t", "catalog_name": "other", "schema_name": "s"})
    w.admin.update("catalog", "other", "ann", ["USE CATALOG", "USE SCHEMA", "SELECT"], [])
    w.admin.update("metastore", "any", "cat", ["CREATE CATALOG"], [])
    w.as_user("cat").call("POST", API + "/catalogs", {"name": "mine"})
    w.as_user("ann").call("GET", API + "/tables/other.s.t")  # she reads it: wider than the model
    backend = w.backend()
    reconcile(backend, w.model, Scope.everything())
    findings = _findings(backend, w.model)
    assert any(f.startswith("GRANT SELECT ON CATALOG other TO ann") for f in findings), findings
    assert any(f.startswith("catalog mine is owned on the server by cat") for f in findings), findings
    assert w.admin.permissions("catalog", "other")["ann"] == {"USE CATALOG", "USE SCHEMA", "SELECT"}


def test_a_revoke_the_server_refuses_the_catalog_owner_is_a_failure_and_the_others_go_on(
    uc_standin: Any,
) -> None:
    """The open server lets only the metastore admin or a registered model's own owner
    change its grants (``PermissionService.updateRegisteredModelAuthorization``), not the
    catalog's owner: with the catalog owner's token, the revoke of ann's EXECUTE on a model
    is refused and said so, and the revoke on a function beside it still runs."""
    model = load_spec_text(SEED)
    w = _made_by(uc_standin, model, "keeper", ["ann", "ben", "cat"])
    uc_standin.add_leaf("registered_model", "main.hr.m")
    uc_standin.add_leaf("function", "main.hr.f")
    w.admin.update("registered_model", "main.hr.m", "ann", ["EXECUTE"], [])
    w.admin.update("function", "main.hr.f", "ann", ["EXECUTE"], [])
    backend = w.backend(token=uc_standin.token_of("keeper"))
    with pytest.raises(BackendError, match=r"registered_model main\.hr\.m for ann: refused"):
        reconcile(backend, model, Scope.everything(), retries=0)
    assert "ann" not in w.admin.permissions("function", "main.hr.f")
    assert w.admin.permissions("registered_model", "main.hr.m") == {"ann": {"EXECUTE"}}


def test_a_listing_that_never_ends_leaves_its_schema_out_and_the_others_go_on(uc_standin: Any) -> None:
    """A hostile server hands back the page token it was given, for ever: the listing is
    refused after the repeat (its schema left out, and said so), not followed until the
    sync is killed; ann's hand-made grant in a schema listed in one page is revoked."""
    uc_standin.page_size = 3  # the schemas come in one page, hr's four tables in two
    w = seed(uc_standin)
    for t in ("a", "b", "c"):
        w.table("hr", t)
    w.admin.update("table", "main.default.employees", "ann", ["SELECT"], [])
    reconcile(w.backend(), w.model, Scope.everything())  # a first sync, before the server turns
    w.admin.update("table", "main.default.department", "ann", ["MODIFY"], [])
    uc_standin.stuck_pages = True
    backend = w.backend()
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(reconcile(backend, w.model, Scope.everything())))
    worker.start()
    worker.join(60)
    assert done, "the sync followed the listing for a minute"
    plan, _ = done[0]
    assert any("schema main.hr" in f and "again" in f for f in plan.findings), plan.findings
    assert w.admin.permissions("table", "main.default.department")["ann"] == {"SELECT"}  # MODIFY revoked


def test_every_listing_is_read_to_its_last_page(uc_standin: Any) -> None:
    """The open server answers every list call a page at a time (``PagedListingHelper``:
    100 by default, the next token the last name, the authorization filter applied to the
    page afterwards). With pages of two, a hand-made grant on the last table, function and
    external location of a long listing is still seen."""
    uc_standin.page_size = 2
    w = seed(uc_standin)
    for name in ("x1", "x2", "x3", "x4"):
        w.schema(name)
    for t in ("a", "b", "c", "d", "e"):
        w.table("hr", t)
        uc_standin.add_leaf("function", f"main.hr.f{t}")
    for n in ("l1", "l2", "l3"):
        uc_standin.add_storage("external_location", n)
    w.admin.update("table", "main.hr.pay", "ann", ["SELECT"], [])
    w.admin.update("function", "main.hr.fe", "ann", ["EXECUTE"], [])
    w.admin.update("schema", "main.x4", "ann", ["USE SCHEMA"], [])
    w.admin.update("external_location", "l3", "ann", ["READ FILES"], [])
    assert len(w.admin.call("GET", API + "/tables", query={"catalog_name": "main", "schema_name": "hr"})[
        "tables"
    ]) == 2  # fmt: skip
    backend = w.backend()
    reconcile(backend, w.model, Scope.everything())
    assert "ann" not in w.admin.permissions("table", "main.hr.pay")
    assert "ann" not in w.admin.permissions("function", "main.hr.fe")
    assert "ann" not in w.admin.permissions("schema", "main.x4")
    findings = _findings(backend, w.model)
    assert any(f.startswith("GRANT READ FILES ON EXTERNAL LOCATION l3 TO ann") for f in findings), findings
    assert any("page_token" in q for _, _, q in uc_standin.queries)
    held = dict(SEED_HELD, hr=["a", "b", "c", "d", "e", "pay"])
    wider, _ = w.compare(held)
    assert wider == set()
