"""A test world: a model and a Unity Catalog stand-in holding the same catalog, the
backend pointed at it, and the proof: every user asks the server itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pushdown.decide.evaluator import Evaluator
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown_unitycatalog.backend import UnityCatalogBackend
from pushdown_unitycatalog.client import API, Refused, UnityCatalog

Triple = tuple[str, str, str]


class World:
    def __init__(self, server: Any, model: Model, catalog: str, users: Iterable[str]) -> None:
        self.server, self.model, self.catalog = server, model, catalog
        self.users = sorted(users)
        self.admin = UnityCatalog(server.url, server.admin_token)
        for u in self.users:
            server.add_user(u)
        self.admin.call("POST", API + "/catalogs", {"name": catalog})

    def backend(
        self, *, map_principal: Callable[[Principal], str] | None = None, **settings: Any
    ) -> UnityCatalogBackend:
        values = {
            "url": self.server.url,
            "token": self.server.admin_token,
            "principals": self.users,
            **settings,
        }
        mapping = {} if map_principal is None else {"map_principal": map_principal}
        context = BackendContext("uc", values, catalogs=frozenset({self.catalog}), **mapping)
        return UnityCatalogBackend(context)

    def schema(self, name: str) -> None:
        self.admin.call("POST", API + "/schemas", {"name": name, "catalog_name": self.catalog})

    def table(self, schema: str, name: str) -> None:
        body = {"name": name, "catalog_name": self.catalog, "schema_name": schema, "table_type": "MANAGED"}
        self.admin.call("POST", API + "/tables", body)

    def as_user(self, user: str) -> UnityCatalog:
        return UnityCatalog(self.server.url, self.server.token_of(user))

    def server_says(self, user: str, schemas: dict[str, list[str]]) -> set[Triple]:
        """What the server lets ``user`` do, asked as ``user``: load each schema and table,
        list them, create a table (dropped again)."""
        uc, out = self.as_user(user), set()
        c = self.catalog
        for schema, tables in schemas.items():
            if _ok(uc, "GET", f"{API}/schemas/{c}.{schema}"):
                out.add((user, "load_schema", f"{c}.{schema}"))
            for t in tables:
                if _ok(uc, "GET", f"{API}/tables/{c}.{schema}.{t}"):
                    out.add((user, "load_table", f"{c}.{schema}.{t}"))
            seen = {t for t in tables if (user, "load_table", f"{c}.{schema}.{t}") in out}
            if _listed(uc, c, schema) - seen:
                raise AssertionError(f"{user} lists tables in {schema} that getting one by one hides")
            body = {"name": "probe_new", "catalog_name": c, "schema_name": schema, "table_type": "MANAGED"}
            if _ok(uc, "POST", API + "/tables", body):
                out.add((user, "create_table", f"{c}.{schema}"))
                self.admin.call("DELETE", f"{API}/tables/{c}.{schema}.probe_new")
        return out

    def model_says(self, user: str, schemas: dict[str, list[str]]) -> set[Triple]:
        ev, out, c = Evaluator(self.model), set(), self.catalog
        for schema, tables in schemas.items():
            if ev.authorize(user, "load_schema", ObjectRef.parse(f"schema {c}.{schema}")).allowed:
                out.add((user, "load_schema", f"{c}.{schema}"))
            for t in tables:
                if ev.authorize(user, "load_table", ObjectRef.parse(f"table {c}.{schema}.{t}")).allowed:
                    out.add((user, "load_table", f"{c}.{schema}.{t}"))
            new = ObjectRef.parse(f"table {c}.{schema}.probe_new")
            if ev.authorize(user, "create_table", new).allowed:
                out.add((user, "create_table", f"{c}.{schema}"))
        return out

    def compare(self, schemas: dict[str, list[str]]) -> tuple[set[Triple], set[Triple]]:
        """(wider, narrower): what the server allows and the model does not, and back."""
        wider: set[Triple] = set()
        narrower: set[Triple] = set()
        for u in self.users:
            server, model = self.server_says(u, schemas), self.model_says(u, schemas)
            wider |= server - model
            narrower |= model - server
        return wider, narrower


def _ok(uc: UnityCatalog, method: str, path: str, body: Any = None) -> bool:
    try:
        uc.call(method, path, body)
    except Refused as exc:
        if exc.status in (403, 404):
            return False
        raise
    return True


def _listed(uc: UnityCatalog, catalog: str, schema: str) -> set[str]:
    try:
        return set(uc.tables(catalog, schema))
    except Refused as exc:
        if exc.status in (403, 404):
            return set()
        raise
