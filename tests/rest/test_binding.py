"""Issue 24, E1-E3 through ``pushdown serve`` as a process: binding a model object to
enforcement (which catalog a backend enforces, a fileset's location) is administration,
not registration. A caller who may only create refuses to bind, gets a 400 that says
why, and what every other principal holds on the backend after a full sync is unchanged."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from pushdown.app.service import AccessControl
from pushdown.app.settings import load_config

from .conftest import init_store, serving

M = "/api/metalakes/test"


class Door:
    """Requests to the served metalake as one user or another (Basic: the simple authenticator)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri

    def call(self, user: str, method: str, path: str, body: Any = None) -> httpx.Response:
        with httpx.Client(base_url=self.uri, auth=httpx.BasicAuth(user, "x"), timeout=30) as h:
            return h.request(method, path, json=body)

    def ok(self, user: str, method: str, path: str, body: Any = None) -> dict[str, Any]:
        r = self.call(user, method, path, body)
        assert r.status_code == 200, (method, path, r.status_code, r.text)
        return dict(r.json())

    def role(self, name: str, grants: list[tuple[str, str, list[str]]], to: str) -> None:
        objects = [
            {"fullName": full, "type": kind, "privileges": [{"name": p, "condition": "allow"} for p in privs]}
            for kind, full, privs in grants
        ]
        self.ok("admin", "POST", f"{M}/roles", {"name": name, "properties": {}, "securableObjects": objects})
        self.ok("admin", "PUT", f"{M}/permissions/users/{to}/grant", {"roleNames": [name]})


@contextmanager
def served(tmp: Path, backend: str) -> Iterator[tuple[Door, Path]]:
    config = tmp / "pushdown.toml"
    config.write_text(
        'store = "pd.db"\n[access]\nservice_admins = ["admin"]\n'
        f'[backends.demo]\nkind = "recording"\nstate = "demo.json"\n{backend}'
    )
    init_store(config)
    with serving(config, tmp / "serve.log") as server:
        door = Door(server.ready())
        door.ok("admin", "POST", "/api/metalakes", {"name": "test"})
        for user in ("ann", "mallory"):
            door.ok("admin", "POST", f"{M}/users", {"name": user})
        yield door, config


def held(config: Path) -> set[tuple[str, str, str]]:
    """What the backend holds after a full sync (what the workers push), synced here into
    a state file of the test's own (the service's workers write theirs meanwhile)."""
    cfg = load_config(str(config))
    demo = cfg.backends["demo"]
    state = config.parent / "check.json"
    mine = dataclasses.replace(demo, settings={**demo.settings, "state": str(state)})
    ac = AccessControl.open(dataclasses.replace(cfg, backends={"demo": mine}))
    try:
        results = ac.sync(full=True)
        assert all(r.error is None for r in results), [r.error for r in results]
    finally:
        ac.close()
    return {tuple(row) for row in json.loads(state.read_text())}  # type: ignore[misc]


def others(rows: set[tuple[str, str, str]], caller: str = "mallory") -> set[tuple[str, str, str]]:
    return {row for row in rows if row[0] != caller}


def _payroll(door: Door) -> None:
    """The administrator's catalog on the backend: ann reads its salaries."""
    door.ok("admin", "POST", f"{M}/catalogs", {"name": "payroll", "type": "RELATIONAL", "provider": "hive"})
    door.ok("admin", "POST", f"{M}/catalogs/payroll/schemas", {"name": "hr"})
    door.ok("admin", "POST", f"{M}/catalogs/payroll/schemas/hr/tables", {"name": "salaries", "columns": []})
    door.role("readers", [("catalog", "payroll", ["use_catalog", "use_schema", "select_table"])], to="ann")
    door.role("creators", [("metalake", "test", ["create_catalog"])], to="mallory")


def test_e1_a_catalog_registered_with_a_backend_property_binds_nothing(tmp_path: Path) -> None:
    with served(tmp_path, 'catalogs = ["payroll"]\n') as (door, config):
        _payroll(door)
        before = held(config)
        body = {"name": "mine", "type": "RELATIONAL", "provider": "hive", "properties": {"backend": "demo"}}
        r = door.call("mallory", "POST", f"{M}/catalogs", body)
        assert r.status_code == 400, r.text
        assert "configuration" in r.json()["message"] and "backend" in r.json()["message"]
        # the same registration without the binding is his to make, and enforced nowhere
        plain = {"name": "mine", "type": "RELATIONAL", "provider": "hive", "properties": {"Backend": "x"}}
        assert door.call("mallory", "POST", f"{M}/catalogs", plain).status_code == 400  # any case
        door.ok("mallory", "POST", f"{M}/catalogs", {**plain, "properties": {}})
        after = held(config)
        assert after == before
        assert not {row for row in after if row[0] == "mallory"}
        # a catalog whose name the configuration binds is the metalake's to register
        door.ok("admin", "DELETE", f"{M}/catalogs/payroll?force=true")
        squat = {"name": "payroll", "type": "RELATIONAL", "provider": "hive", "properties": {}}
        r = door.call("mallory", "POST", f"{M}/catalogs", squat)
        assert r.status_code == 400 and "metalake's owner" in r.json()["message"], r.text
        assert door.call("admin", "GET", f"{M}/catalogs/payroll").status_code == 404


def test_e3_a_second_catalog_bound_to_an_enforcing_backend_revokes_nobody(tmp_path: Path) -> None:
    with served(tmp_path, "") as (door, config):  # no catalogs configured: the admin binds by property
        ac = AccessControl.open(str(config))
        try:
            ac.as_admin().create_object("catalog payroll", "admin", {"backend": "demo"})
        finally:
            ac.close()
        door.ok("admin", "POST", f"{M}/catalogs/payroll/schemas", {"name": "hr"})
        door.ok("admin", "POST", f"{M}/catalogs/payroll/schemas/hr/tables", {"name": "salaries"})
        door.role("readers", [("catalog", "payroll", ["use_catalog", "use_schema", "select_table"])], "ann")
        door.role("creators", [("metalake", "test", ["create_catalog"])], to="mallory")
        before = held(config)
        assert ("ann", "load_table", "table payroll.hr.salaries") in before
        for key in ("backend", "BACKEND"):
            body = {"name": "second", "type": "RELATIONAL", "provider": "hive", "properties": {key: "demo"}}
            r = door.call("mallory", "POST", f"{M}/catalogs", body)
            assert r.status_code == 400, r.text
        after = held(config)
        assert others(after) == others(before) and after == before


def test_e2_a_fileset_location_outside_its_catalogs_roots_or_over_another_is_refused(tmp_path: Path) -> None:
    roots = 'catalogs = ["files"]\nlocations = { files = ["/lake/files"] }\n'
    with served(tmp_path, roots) as (door, config):
        base = f"{M}/catalogs/files/schemas"
        door.ok("admin", "POST", f"{M}/catalogs", {"name": "files", "type": "FILESET", "provider": "hadoop"})
        for schema in ("team", "finance"):
            door.ok("admin", "POST", base, {"name": schema})
        ledger = {"name": "ledger", "properties": {"location": "/lake/files/finance"}}
        door.ok("admin", "POST", f"{base}/finance/filesets", ledger)
        door.role(
            "readers",
            [
                ("catalog", "files", ["use_catalog"]),
                ("schema", "files.finance", ["use_schema", "read_fileset"]),
            ],
            "ann",
        )
        door.role(
            "teamwork",
            [
                ("catalog", "files", ["use_catalog"]),
                ("schema", "files.team", ["use_schema", "create_fileset"]),
            ],
            "mallory",
        )
        before = held(config)
        refused = [
            "/finance",
            "hdfs://nn:8020/finance",
            "hdfs:/finance",
            "webhdfs://nn/lake/files/team/x",
            "viewfs://c/lake/files/team/x",
            "/lake/files/team/../finance",
            "/lake/files/finance",
            "/lake/files/finance/",
            "/lake/files/Finance/x",
            "hdfs://other/lake/files/finance/sub",
            "/lake",
            "/lake/files",
            "/lake/files%2Ffinance",
        ]
        for location in refused:
            for props in ({"location": location}, {"Location": location}, {"storageLocation": location}):
                r = door.call("mallory", "POST", f"{base}/team/filesets", {"name": "f", "properties": props})
                assert r.status_code == 400, (location, props, r.text)
            body = {"name": "f", "storageLocation": location}
            assert door.call("mallory", "POST", f"{base}/team/filesets", body).status_code == 400, location
        # an authorized registration inside the roots, over nobody else's, is his
        door.ok(
            "mallory",
            "POST",
            f"{base}/team/filesets",
            {"name": "f", "properties": {"location": "/lake/files/team/f"}},
        )
        # a refusal reveals nothing to a caller who may not create there at all
        r = door.call(
            "mallory", "POST", f"{base}/finance/filesets", {"name": "g", "properties": {"location": "/x"}}
        )
        assert r.status_code == 403
        after = held(config)  # beside what the new fileset brings, nobody else's changed
        assert {row for row in others(after) if row[2] != "fileset files.team.f"} == others(before)
