"""The reference's "Example" workflow end to end, each step over HTTP as the user the
reference names (Basic auth, the simple authenticator), and beside each step the same
call by a user the requirement table forbids it to: refused with 403, code 1008,
``ForbiddenException``, nothing written.

1. the service admin creates the metalake; 2. adds Manager; 3. makes Manager its owner;
4. Manager adds Staff; 5. creates role catalog_manager with CREATE_CATALOG; 6. grants it
to Staff; 7-9. Staff creates a Hive catalog, schema hive_db, table hive_table;
10-12. a MySQL catalog, schema mysql_db, table mysql_table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from pushdown.model.securables import METALAKE, ObjectRef

from .inprocess import Site, site

M = "/api/metalakes/test"


class Steps:
    def __init__(self, s: Site) -> None:
        self.s = s
        self.clients: dict[str, httpx.Client] = {}

    def http(self, user: str) -> httpx.Client:
        if user not in self.clients:
            self.clients[user] = self.s.http(user)
        return self.clients[user]

    def ok(self, user: str, method: str, path: str, body: Any = None) -> dict[str, Any]:
        r = self.http(user).request(method, path, json=body)
        assert r.status_code == 200, f"{user} {method} {path}: {r.status_code} {r.text}"
        out: dict[str, Any] = r.json()
        assert out["code"] == 0, out
        return out

    def refused(self, user: str, method: str, path: str, body: Any = None) -> str:
        before = self.s.seq()
        r = self.http(user).request(method, path, json=body)
        assert r.status_code == 403, f"{user} {method} {path}: {r.status_code} {r.text}"
        err = r.json()
        assert (err["code"], err["type"]) == (1008, "ForbiddenException"), err
        assert err["message"].startswith(f"{user} may not"), err
        assert self.s.seq() == before, f"{user} {method} {path}: refused, yet something was written"
        return str(err["message"])

    def close(self) -> None:
        for c in self.clients.values():
            c.close()


def catalog(name: str, provider: str) -> dict[str, Any]:
    return {"name": name, "type": "RELATIONAL", "provider": provider, "comment": name, "properties": {}}


def test_the_reference_workflow_as_its_users(tmp_path: Path) -> None:
    with site(tmp_path, metalake=None) as s:  # "admin" is the service admin (its config)
        w = Steps(s)
        try:
            _workflow(s, w)
        finally:
            w.close()


def _workflow(s: Site, w: Steps) -> None:
    # 1. the service admin creates the metalake; nobody else may
    w.refused("Manager", "POST", "/api/metalakes", {"name": "test"})
    made = w.ok("admin", "POST", "/api/metalakes", {"name": "test", "comment": "the example"})
    assert made["metalake"]["audit"]["creator"] == "admin"
    # 2. ... adds the user Manager (a stranger may not add users)
    w.refused("Manager", "POST", f"{M}/users", {"name": "Manager"})
    w.ok("admin", "POST", f"{M}/users", {"name": "Manager"})
    # 3. ... sets Manager as the metalake's owner (Manager may not take it)
    w.refused("Manager", "PUT", f"{M}/owners/metalake/test", {"name": "Manager", "type": "USER"})
    assert w.ok("admin", "PUT", f"{M}/owners/metalake/test", {"name": "Manager", "type": "USER"})["set"]
    owner = w.ok("Manager", "GET", f"{M}/owners/metalake/test")["owner"]
    assert owner == {"name": "Manager", "type": "user"}
    # 4. Manager adds Staff; the service admin, no longer the owner, may not add users
    w.refused("admin", "POST", f"{M}/users", {"name": "Staff"})
    w.ok("Manager", "POST", f"{M}/users", {"name": "Staff"})
    w.ok("Manager", "POST", f"{M}/users", {"name": "Nobody"})  # a user with nothing granted
    w.refused("Staff", "POST", f"{M}/users", {"name": "Friend"})
    # 5. Manager creates catalog_manager with CREATE_CATALOG on the metalake; Staff may not
    role = {
        "name": "catalog_manager",
        "properties": {},
        "securableObjects": [
            {
                "fullName": "test",
                "type": "metalake",
                "privileges": [{"name": "create_catalog", "condition": "allow"}],
            }
        ],
    }
    w.refused("Staff", "POST", f"{M}/roles", {**role, "name": "staff_role"})
    got = w.ok("Manager", "POST", f"{M}/roles", role)["role"]
    assert got["securableObjects"][0]["privileges"] == [{"name": "create_catalog", "condition": "allow"}]
    # before the grant, Staff may not create a catalog
    w.refused("Staff", "POST", f"{M}/catalogs", catalog("hive_catalog", "hive"))
    # 6. Manager grants the role to Staff; Staff may not grant it (to himself or anyone)
    grant = {"roleNames": ["catalog_manager"]}
    w.refused("Staff", "PUT", f"{M}/permissions/users/Staff/grant", grant)
    w.refused("Staff", "PUT", f"{M}/permissions/users/Nobody/grant", grant)
    assert w.ok("Manager", "PUT", f"{M}/permissions/users/Staff/grant", grant)["user"]["roles"] == [
        "catalog_manager"
    ]
    # 7-12. Staff creates each catalog, then a schema and a table in it; the others may not
    base = ""
    for cat, provider, db, table in (
        ("hive_catalog", "hive", "hive_db", "hive_table"),
        ("mysql_catalog", "jdbc-mysql", "mysql_db", "mysql_table"),
    ):
        w.refused("Nobody", "POST", f"{M}/catalogs", catalog(cat, provider))
        w.refused("outsider", "POST", f"{M}/catalogs", catalog(cat, provider))
        made = w.ok("Staff", "POST", f"{M}/catalogs", catalog(cat, provider))["catalog"]
        assert (made["name"], made["provider"], made["audit"]["creator"]) == (cat, provider, "Staff")
        base = f"{M}/catalogs/{cat}/schemas"
        w.refused("Nobody", "POST", base, {"name": db})
        assert w.ok("Staff", "POST", base, {"name": db})["schema"]["name"] == db
        tables = f"{base}/{db}/tables"
        w.refused("Nobody", "POST", tables, {"name": table, "columns": [{"name": "id"}]})
        assert w.ok("Staff", "POST", tables, {"name": table, "columns": [{"name": "id"}]})["table"]["name"]
        # the creator owns what he created
        assert w.ok("Staff", "GET", f"{M}/owners/table/{cat}.{db}.{table}")["owner"]["name"] == "Staff"
        # Nobody may not even see it; Staff and the metalake's owner may load it
        w.refused("Nobody", "GET", f"{tables}/{table}")
        w.ok("Staff", "GET", f"{tables}/{table}")
        w.ok("Manager", "GET", f"{tables}/{table}")
    # what each user sees at the end
    names = [i["name"] for i in w.ok("Staff", "GET", f"{M}/catalogs")["identifiers"]]
    assert names == ["hive_catalog", "mysql_catalog"]
    assert w.ok("Nobody", "GET", f"{M}/catalogs")["identifiers"] == []
    assert w.ok("Manager", "GET", f"{M}/users")["names"] == ["Manager", "Nobody", "Staff", "admin"]
    assert w.ok("Staff", "GET", f"{M}/users")["names"] == ["Staff"]
    assert w.ok("Staff", "GET", f"{M}/roles")["names"] == ["catalog_manager"]
    # Staff holds CREATE_CATALOG, not MANAGE_GRANTS: he may not grant roles; he owns his
    # catalogs, so he may grant privileges on them (the requirement table's grant privilege)
    w.refused("Staff", "PUT", f"{M}/permissions/users/Nobody/grant", grant)
    select = {"privileges": [{"name": "select_table", "condition": "allow"}]}
    on_table = f"{M}/permissions/roles/catalog_manager/table/hive_catalog.hive_db.hive_table/grant"
    w.refused("Nobody", "PUT", on_table, select)
    assert w.ok("Staff", "PUT", on_table, select)["role"]["name"] == "catalog_manager"
    model = s.ac.model
    assert model.owners[METALAKE] == "Manager"
    assert {str(o): model.owners.get(o) for o in model.objects} == {
        f"{kind} {name}": "Staff"
        for kind, name in (
            ("catalog", "hive_catalog"),
            ("schema", "hive_catalog.hive_db"),
            ("table", "hive_catalog.hive_db.hive_table"),
            ("catalog", "mysql_catalog"),
            ("schema", "mysql_catalog.mysql_db"),
            ("table", "mysql_catalog.mysql_db.mysql_table"),
        )
    }
    # the journal says who did each step
    authors = {e.actor for e in s.ac.store.history(limit=200) if e.actor is not None}
    assert authors >= {"admin", "Manager", "Staff"} and "Nobody" not in authors
    assert ObjectRef.parse("role catalog_manager") in model.owned_by.get("Manager", set())
