"""The reference's curl examples, run as written with the real ``curl`` against ``pushdown
serve`` (a child process), each answering with the documented shape.

``data/reference_curls.sh`` holds the 26 commands of the reference's "Operations"
section, unchanged; only ``http://localhost:8090`` becomes the test server's address.
curl sends no Authorization header, so the caller is ``anonymous``: the config makes it
the service admin, and it creates metalake ``test`` (so it owns it). Before each
command the state it needs is put in place through the library, acting as the
configured administrator (the objects are registered with ``anonymous`` as their owner,
as if it had created them). The status is read through curl's own config file
(``CURL_HOME/.curlrc``: silent, the status code written after the body), so the
command line itself is the reference's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pushdown.app.service import AccessControl
from pushdown.app.settings import AccessSettings
from pushdown.journal.store import Store
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef

from .conftest import ServeProcess, init_store, serving

DATA = Path(__file__).parent / "data"
CURLS = DATA / "reference_curls.sh"
PLACE = "http://localhost:8090"
TABLE = ObjectRef.parse("table catalog1.schema1.table1")

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="needs the curl binary")


def commands() -> list[str]:
    blocks = CURLS.read_text().split("\n\n")
    out = [b.strip() for b in blocks if b.strip().startswith("curl ")]
    assert all(PLACE in c for c in out)
    return out


@dataclass(frozen=True)
class Expect:
    """What one command needs in place, and the documented answer's key (and value)."""

    needs: dict[str, bool]  # "user1" / "group1" / "role1" present (True) or absent (False)
    key: str
    check: Callable[[Any], bool] = lambda value: value is not None


R1 = {"role1": True}
EXPECTED: list[Expect] = [
    Expect({"user1": False}, "user", lambda u: u["name"] == "user1"),
    Expect({"user1": True}, "names", lambda n: set(n) == {"anonymous", "user1"}),
    Expect({"user1": True}, "users", lambda us: {u["name"] for u in us} == {"anonymous", "user1"}),
    Expect({"user1": True}, "user", lambda u: u["name"] == "user1" and "audit" in u),
    Expect({"user1": True}, "removed", lambda v: v is True),
    Expect({"group1": False}, "group", lambda g: g["name"] == "group1"),
    Expect({"group1": True}, "names", lambda n: n == ["group1"]),
    Expect({"group1": True}, "groups", lambda gs: [g["name"] for g in gs] == ["group1"]),
    Expect({"group1": True}, "group", lambda g: g["name"] == "group1"),
    Expect({"group1": True}, "removed", lambda v: v is True),
    Expect(
        {"role1": False},
        "role",
        lambda r: (
            r["securableObjects"]
            == [
                {
                    "fullName": "catalog1.schema1.table1",
                    "type": "table",
                    "privileges": [{"name": "select_table", "condition": "allow"}],
                }
            ]
        ),
    ),
    Expect(R1, "names", lambda n: n == ["role1"]),
    Expect(R1, "names", lambda n: n == ["role1"]),  # role1 holds a grant on catalog1
    Expect(R1, "names", lambda n: n == []),  # ... and none on catalog1.schema1
    Expect(R1, "role", lambda r: r["name"] == "role1"),
    Expect(R1, "dropped", lambda v: v is True),
    Expect(R1, "role", lambda r: _privs(r, "catalog1.schema1") == ["select_table"]),
    Expect(R1, "role", lambda r: _privs(r, "catalog1.schema1.table1") == ["select_table"]),
    Expect(R1, "role", lambda r: _privs(r, "catalog1.schema1") == []),
    Expect(R1, "role", lambda r: _privs(r, "catalog1.schema1.table1") == []),
    Expect({"user1": True, **R1}, "user", lambda u: u["roles"] == ["role1"]),
    Expect({"user1": True, **R1}, "user", lambda u: u["roles"] == []),
    Expect({"group1": True, **R1}, "group", lambda g: g["roles"] == ["role1"]),
    Expect({"group1": True, **R1}, "group", lambda g: g["roles"] == []),
    Expect({}, "owner", lambda o: o == {"name": "anonymous", "type": "user"}),
    Expect({"user1": True}, "set", lambda v: v is True),
]
#: the state the revokes and the listing of catalog1's roles start from
HOLDS = {12: "catalog", 18: "schema", 19: "table", 21: "user", 23: "group"}


def _privs(role: dict[str, Any], full_name: str) -> list[str]:
    return [
        p["name"] for o in role["securableObjects"] if o["fullName"] == full_name for p in o["privileges"]
    ]


@dataclass
class Reference:
    server: ServeProcess
    uri: str
    lib: AccessControl
    curl_home: Path

    def put_in_place(self, index: int, needs: dict[str, bool]) -> None:
        lib, model = self.lib, self.lib.model
        for ref in TABLE.path[1:]:  # catalog1, catalog1.schema1, catalog1.schema1.table1
            if ref not in lib.model.objects:
                lib.create_object(ref, creator="anonymous")
        for name, wanted in needs.items():
            model = lib.model
            if name == "user1" and (name in model.users) != wanted:
                (lib.add_user if wanted else lib.remove_user)(name)
            if name == "group1" and (name in model.groups) != wanted:
                (lib.add_group if wanted else lib.remove_group)(name)
            if name == "role1" and (name in model.roles) != wanted:
                if wanted:
                    lib.create_role(name)
                else:
                    lib.delete_role(name)
        if needs.get("role1"):  # a role starts with no grants and no holders
            model = lib.model
            for grant in sorted(model.roles["role1"]):
                lib.revoke_privileges("role1", grant.object, [grant.privilege], grant.condition)
            for user in sorted(model.role_users.get("role1", ())):
                lib.revoke_role("role1", Principal.user(user))
            for group in sorted(model.role_groups.get("role1", ())):
                lib.revoke_role("role1", Principal.group(group))
        held = HOLDS.get(index)
        if held in ("catalog", "schema", "table"):
            on = {"catalog": TABLE.path[1], "schema": TABLE.path[2], "table": TABLE}[held]
            lib.grant_privileges("role1", on, ["SELECT_TABLE"])
        elif held == "user":
            lib.grant_role("role1", Principal.user("user1"))
        elif held == "group":
            lib.grant_role("role1", Principal.group("group1"))

    def run(self, command: str) -> tuple[int, dict[str, Any]]:
        line = command.replace(PLACE, self.uri)
        env = {**os.environ, "CURL_HOME": str(self.curl_home), "HOME": str(self.curl_home)}
        env = {k: v for k, v in env.items() if not k.lower().endswith("_proxy")}
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        body, _, status = done.stdout.rpartition("\n")
        return int(status), json.loads(body)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    tmp = tmp_path_factory.mktemp("curls")
    config = tmp / "pushdown.toml"
    config.write_text('store = "pd.db"\n[access]\nservice_admins = ["anonymous"]\n')
    init_store(config)
    home = tmp / "curl"
    home.mkdir()
    (home / ".curlrc").write_text('silent\nshow-error\nwrite-out = "\\n%{http_code}"\n')
    with serving(config, tmp / "serve.log") as server:
        uri = server.ready()
        made = httpx.post(f"{uri}/api/metalakes", json={"name": "test"})  # no header: anonymous
        assert made.status_code == 200, made.text
        assert made.json()["metalake"]["audit"]["creator"] == "anonymous"
        lib = AccessControl(Store(tmp / "pd.db"), access=AccessSettings(("anonymous",))).as_admin("library")
        try:
            yield Reference(server, uri, lib, home)
        finally:
            lib.close()


def test_the_data_holds_the_reference_commands() -> None:
    got = commands()
    assert len(got) == len(EXPECTED) == 26
    text = CURLS.read_text()
    assert "Apache" in text.split("\ncurl", 1)[0] and (DATA / "LICENSE-apache-gravitino.txt").exists()
    assert sum("/users/" in c and c.split()[-1].endswith(("/users/", "?details=true")) for c in got) == 2


@pytest.mark.parametrize("index", range(26), ids=lambda i: f"curl{i + 1:02d}")
def test_each_reference_curl_answers_as_documented(reference: Reference, index: int) -> None:
    command, expect = commands()[index], EXPECTED[index]
    reference.put_in_place(index, expect.needs)
    status, body = reference.run(command)
    assert status == 200, body
    assert body.get("code") == 0, body
    assert expect.key in body, body
    assert expect.check(body[expect.key]), body
