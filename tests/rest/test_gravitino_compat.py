"""Gravitino compatibility where its client and web UI expect it (issue 24): the metalake's
``in-use`` property and alter metalake, filesets in the 1.3 shape (``storageLocations``),
the web UI's role override and a role's owner; and Gravitino's own Python-client
integration tests (v1.3.0) against ``pushdown serve`` when they can be had."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gravitino import MetalakeChange
from gravitino.exceptions import base as gx

from pushdown.model.privileges import Privilege
from pushdown.model.securables import ObjectRef

from .conftest import ROOT, admin_client
from .inprocess import Site, site

M = "/api/metalakes/test"
TABLE = ObjectRef.parse("table cat.db.t")
SCHEMA = ObjectRef.parse("schema cat.db")


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Site]:
    with site(tmp_path) as running:
        ac = running.ac
        ac.add_user("ann")
        cat = ObjectRef.parse("catalog cat")
        ac.create_object(cat, creator="admin", properties={"pushdown.rest.type": "relational"})
        ac.create_object(SCHEMA, creator="admin")
        ac.create_object(TABLE, creator="admin")
        yield running


def test_a_loaded_metalake_is_in_use_and_a_create_may_not_say_otherwise(s: Site) -> None:
    admin = admin_client(s.uri, "admin")
    assert admin.load_metalake("test").properties() == {"in-use": "true"}
    with s.http("admin") as h:
        r = h.post("/api/metalakes", json={"name": "x", "properties": {"in-use": "false"}})
        assert r.status_code == 400 and "reserved" in r.json()["message"]


def test_the_owner_alters_the_metalake_all_updates_or_none(s: Site) -> None:
    before = s.seq()
    with pytest.raises(gx.ForbiddenException):
        admin_client(s.uri, "ann").alter_metalake("test", MetalakeChange.update_comment("mine"))
    admin = admin_client(s.uri, "admin")  # the creator: the metalake's owner
    with pytest.raises(gx.IllegalArgumentException, match="control character"):
        admin.alter_metalake("test", MetalakeChange.set_property("k", "v"), MetalakeChange.rename("a\u2028b"))
    with pytest.raises(gx.IllegalArgumentException, match="reserved"):
        admin.alter_metalake("test", MetalakeChange.set_property("in-use", "false"))
    assert admin.load_metalake("test").properties() == {"in-use": "true"}  # nothing applied
    changed = admin.alter_metalake(
        "test",
        MetalakeChange.rename("test"),
        MetalakeChange.update_comment("new"),
        MetalakeChange.set_property("a", "1"),
        MetalakeChange.set_property("b", "2"),
        MetalakeChange.remove_property("a"),
    )
    assert (changed.name(), changed.comment(), changed.properties()) == (
        "test",
        "new",
        {"b": "2", "in-use": "true"},
    )
    assert admin.alter_metalake("test", MetalakeChange.update_comment(None)).comment() is None
    assert admin.load_metalake("test").audit_info().last_modifier() == "admin"
    assert s.seq() == before  # comment and properties are not the model: nothing recorded to push
    renamed = admin.alter_metalake("test", MetalakeChange.rename("prod"))
    assert renamed.name() == "prod" and renamed.properties() == {"b": "2", "in-use": "true"}
    with pytest.raises(gx.NoSuchMetalakeException):
        admin.load_metalake("test")
    assert admin.load_metalake("prod").comment() is None
    assert s.ac.model.metalake == "prod"


def test_filesets_answer_and_accept_storage_locations(s: Site) -> None:
    base = f"{M}/catalogs/cat/schemas/db/filesets"
    with s.http("admin") as h:
        made = h.post(base, json={"name": "f1", "storageLocations": {"unknown": "/data/f1"}})
        assert made.status_code == 200, made.text
        assert made.json()["fileset"]["storageLocations"] == {"unknown": "/data/f1"}
        legacy = h.post(base, json={"name": "f2", "storageLocation": "/data/f2"}).json()["fileset"]
        assert (
            legacy["storageLocations"] == {"unknown": "/data/f2"} and legacy["storageLocation"] == "/data/f2"
        )
        assert h.get(f"{base}/f1").json()["fileset"]["storageLocations"] == {"unknown": "/data/f1"}
        before = s.seq()
        two = h.post(base, json={"name": "f3", "storageLocations": {"a": "/x", "b": "/y"}})
        assert (two.status_code, two.json()["code"]) == (405, 1006)
        differ = h.post(base, json={"name": "f4", "storageLocation": "/x", "storageLocations": {"a": "/y"}})
        assert differ.status_code == 400
        assert s.seq() == before


def _objects(role: dict[str, Any]) -> dict[str, list[str]]:
    return {o["fullName"]: sorted(p["name"] for p in o["privileges"]) for o in role["securableObjects"]}


def test_the_web_ui_overrides_a_role_s_privileges(s: Site) -> None:
    ac = s.ac
    ac.create_role("r1", owner="admin")
    ac.grant_privileges("r1", TABLE, [Privilege.MODIFY_TABLE])
    ac.grant_privileges("r1", SCHEMA, [Privilege.USE_SCHEMA])
    overrides = {
        "overrides": [
            {
                "fullName": "cat.db.t",
                "type": "TABLE",
                "privileges": [{"name": "SELECT_TABLE", "condition": "ALLOW"}],
            }
        ]
    }
    before = s.seq()
    with s.http("ann") as h:  # may neither grant nor revoke anything here
        r = h.put(f"{M}/permissions/roles/r1", json=overrides)
        assert (r.status_code, r.json()["code"]) == (403, 1008)
    assert s.seq() == before
    with s.http("admin") as h:
        r = h.put(f"{M}/permissions/roles/r1", json=overrides)
        assert r.status_code == 200, r.text
        assert _objects(r.json()["role"]) == {"cat.db.t": ["select_table"]}  # the schema's use_schema gone
        assert _objects(h.get(f"{M}/roles/r1").json()["role"]) == {"cat.db.t": ["select_table"]}
        assert h.put(f"{M}/permissions/roles/nobody", json=overrides).status_code == 404
        r = h.put(f"{M}/permissions/roles/r1", json={"overrides": []})
        assert r.status_code == 200 and r.json()["role"]["securableObjects"] == []


def test_the_owner_of_a_role_as_the_web_ui_asks(s: Site) -> None:
    s.ac.create_role("r1", owner="ann")
    with s.http("admin") as h:
        r = h.get(f"{M}/owners/role/r1")
        assert r.status_code == 200 and r.json()["owner"] == {"name": "ann", "type": "user"}


def _suite_source() -> Path | None:
    cache = Path(os.environ.get("PUSHDOWN_CACHE") or Path.home() / ".cache" / "pushdown")
    if (cache / "gravitino-client-tests-v1.3.0" / "tests" / "integration" / "test_user.py").exists():
        return cache
    source = os.environ.get("GRAVITINO_SOURCE")
    return Path(source) if source else None


@pytest.mark.skipif(
    _suite_source() is None,
    reason="Gravitino's client tests are not in the cache: set GRAVITINO_SOURCE to a clone of "
    "apache/gravitino, or run scripts/gravitino_client_suite.py once where GitHub answers",
)
def test_gravitino_s_own_client_tests_pass_against_pushdown_serve() -> None:
    source = os.environ.get("GRAVITINO_SOURCE")
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "gravitino_client_suite.py"),
            "--per-module",
            *(["--source", source] if source else []),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("gravitino client tests:"), done.stderr[-3000:]
    last = lines[-1]
    passed, total = (int(n) for n in last.split(": ")[1].split(" ")[0].split("/"))
    print(last)
    assert (passed, total) == (38, 38), done.stdout[-4000:]
