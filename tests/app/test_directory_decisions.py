"""One model, one answer: a user whom only the directory plugin
(``pushdown_resolve_group_members``) puts in a group is decided alike by
``AccessControl.authorize``, ``pushdown explain``, the REST service's check, the report
and what a real MariaDB enforces after a sync — allowed where the group's role allows,
denied where its DENY denies, and denied everywhere once the directory drops the member."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.app.service import AccessControl
from pushdown.host.hookspecs import hookimpl
from pushdown.host.plugins import Hooks
from pushdown.model.directory import EnforcedView, enforced
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

from ..rest.inprocess import site

pytestmark = pytest.mark.mariadb
PASSWORD_ENV = "PD_DIRECTORY_TEST_PASSWORD"
DB = "dirdb"
TABLES = ("t0", "t1", "t2")
ACCOUNTS = ("ann", "zed")


class Directory:
    """The directory plugin: it alone says zed is an analyst."""

    def __init__(self) -> None:
        self.members: dict[str, list[str]] = {"analysts": ["zed"]}

    @hookimpl
    def pushdown_resolve_group_members(self, group: str) -> list[str] | None:
        return self.members.get(group)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from pushdown_lab.mariadb import ServerUnavailable, throwaway_mariadb
    from pushdown_mysql.account import least_privileges
    from pushdown_mysql.tests.world import (
        PASSWORD,
        PREFIX,
        PUSHDOWN,
        PUSHDOWN_PASSWORD,
        setup_pushdown_account,
    )

    try:
        with throwaway_mariadb() as s:
            setup_pushdown_account(s)
            os.environ[PASSWORD_ENV] = PUSHDOWN_PASSWORD
            conn = s.connect()
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE `{DB}`")
                for t in TABLES:
                    cur.execute(f"CREATE TABLE `{DB}`.`{t}` (id INT)")
                for sql, args in least_privileges(PUSHDOWN, "%", [DB])[-1:]:
                    cur.execute(sql, args)
                for u in ACCOUNTS:
                    cur.execute("CREATE USER %s@%s IDENTIFIED BY %s", (PREFIX + u, "%", PASSWORD))
            conn.close()
            yield s
    except ServerUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no MariaDB in CI: {exc}")
        pytest.skip(f"no MariaDB here: {exc}")


def reads(server: Any, user: str, table: str) -> bool:
    """Whether MariaDB lets ``user`` (logged in as its account) SELECT from ``table``."""
    import pymysql
    from pushdown_mysql.tests.world import PASSWORD, PREFIX

    conn = server.connect(PREFIX + user, PASSWORD)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM `{DB}`.`{table}`")
        return True
    except pymysql.err.OperationalError as exc:
        if exc.args[0] in (1142, 1044):  # command denied / access denied to the database
            return False
        raise
    finally:
        conn.close()


def _config(tmp: Path, server: Any) -> Path:
    path = tmp / "pushdown.toml"
    path.write_text(
        'store = "pd.db"\n[access]\nservice_admins = ["admin"]\n'
        f'[backends.mysql1]\nkind = "mysql"\nhost = "{server.host}"\nport = {server.port}\n'
        f'user = "pushdown"\npassword = {{ env = "{PASSWORD_ENV}" }}\n'
    )
    return path


def _model(ac: AccessControl) -> None:
    """ann (no role) and group analysts (no members in the model) holding reader: USE on
    catalog c, SELECT_TABLE on schema c.dirdb, DENY SELECT_TABLE on table t2."""
    catalog = ObjectRef.parse("catalog c")
    ac.create_object(catalog, properties={"backend": "mysql1"})
    ac.create_object(ObjectRef.parse(f"schema c.{DB}"))
    for t in TABLES:
        ac.create_object(ObjectRef.parse(f"table c.{DB}.{t}"))
    ac.add_user("ann")
    ac.add_group("analysts")
    ac.create_role("reader")
    ac.grant_privileges("reader", catalog, [Privilege.USE_CATALOG, Privilege.USE_SCHEMA], Condition.ALLOW)
    ac.grant_privileges(
        "reader", ObjectRef.parse(f"schema c.{DB}"), [Privilege.SELECT_TABLE], Condition.ALLOW
    )
    ac.grant_privileges(
        "reader", ObjectRef.parse(f"table c.{DB}.t2"), [Privilege.SELECT_TABLE], Condition.DENY
    )
    ac.grant_role("reader", "group analysts")


def _answers(
    ac: AccessControl, uri: str, config: Path, server: Any, user: str, table: str
) -> dict[str, bool]:
    import httpx

    name = f"c.{DB}.{table}"
    explained = CliRunner().invoke(main, ["--config", str(config), "explain", user, "load_table", name])
    assert explained.exit_code in (0, 3), explained.output
    path = f"/api/metalakes/test/catalogs/c/schemas/{DB}/tables/{table}"
    with httpx.Client(base_url=uri, auth=httpx.BasicAuth(user, "x"), timeout=30) as h:
        status = h.get(path).status_code
    assert status in (200, 403), status
    return {
        "authorize": ac.authorize(user, "load_table", name).allowed,
        "explain": explained.exit_code == 0,
        "rest": status == 200,
        "mariadb": reads(server, user, table),
    }


def test_a_member_only_the_directory_names_is_decided_as_mariadb_enforces(
    server: Any, tmp_path: Path
) -> None:
    config = _config(tmp_path, server)
    directory = Directory()
    ac = AccessControl.open(str(config), hooks=Hooks.load(extra=[directory]), create_store=True)
    try:
        with site(tmp_path, core=ac) as s:
            _model(ac)  # every change syncs MariaDB (and records the directory's answer)
            assert "zed" not in ac.model.users and ac.model.external_members == {"analysts": {"zed"}}
            want = {"t0": True, "t1": True, "t2": False}
            for table, allowed in want.items():
                answers = _answers(ac, s.uri, config, server, "zed", table)
                assert answers == dict.fromkeys(answers, allowed), (table, answers)
                ann = _answers(ac, s.uri, config, server, "ann", table)
                assert ann == dict.fromkeys(ann, False), (table, ann)
            # the report decides on the same model
            report = CliRunner().invoke(
                main, ["--config", str(config), "report", "--out", str(tmp_path / "r"), "--format", "csv"]
            )
            assert report.exit_code == 0, report.output
            rows = "\n".join(p.read_text() for p in (tmp_path / "r").rglob("*.csv"))
            assert "zed" in rows

            # the directory drops zed: after the next sync nobody answers yes
            directory.members = {}
            ac.sync()
            for table in TABLES:
                answers = _answers(ac, s.uri, config, server, "zed", table)
                assert answers == dict.fromkeys(answers, False), (table, answers)
    finally:
        ac.close()


def test_the_decision_view_is_one_per_model_version_and_leaves_the_model_alone() -> None:
    model = Model(metalake="m")
    view = EnforcedView()
    assert view.of(model) is model  # the directory adds nobody: no copy at all
    model.groups["g"] = set()
    model.external_members = {"g": {"zed"}}
    model.version += 1
    first = view.of(model)
    assert first is not model and "zed" in first.users and "zed" in first.groups["g"]
    assert first.user_groups["zed"] == {"g"} and first.roles is model.roles  # shares the rest
    assert "zed" not in model.users and model.groups["g"] == set() and "zed" not in model.user_groups
    assert view.of(model) is first  # the same version: the same view
    model.version += 1
    assert view.of(model) is not first
    assert enforced(copy.deepcopy(model)).groups == first.groups
