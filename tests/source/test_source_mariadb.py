"""The proof on a real MariaDB: ``pushdown serve`` plays the Gravitino server (a process of
its own, driven through the official client), a ``pushdown daemon`` follows it (``[source]``
with a 1 s interval, behind a proxy) and enforces its model on MariaDB. A role granted
there becomes a MariaDB grant equal to the evaluator's decision over the source's own
model; a second plan is empty; the source killed in the middle of a read changes nothing
and ``pushdown status`` says so; restarted, the next interval carries the change."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gravitino import Catalog
from gravitino.api.authorization.privileges import SelectTable, UseCatalog, UseSchema
from gravitino.api.authorization.securable_objects import SecurableObjects

from ..daemon.conftest import DaemonProcess
from ..daemon.test_daemon_mariadb import get
from ..rest.conftest import PUSHDOWN, ROOT, admin_client, client, init_store, serving, wait_for
from ..rest.test_client_mariadb import (
    DB,
    TABLES,
    USERS,
    model_of,
    model_selects,
    prepare_server,
    server_selects,
)
from .conftest import proxy

pytestmark = pytest.mark.mariadb
PASSWORD_ENV = "PD_SOURCE_TEST_PASSWORD"


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from pushdown_lab.mariadb import ServerUnavailable, throwaway_mariadb
    from pushdown_mysql.tests.world import PUSHDOWN_PASSWORD, setup_pushdown_account

    try:
        with throwaway_mariadb() as s:
            setup_pushdown_account(s)
            os.environ[PASSWORD_ENV] = PUSHDOWN_PASSWORD
            yield s
    except ServerUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no MariaDB in CI: {exc}")
        pytest.skip(f"no MariaDB here: {exc}")


def pushdown(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [*PUSHDOWN, "--config", str(config), *args],
        capture_output=True,
        text=True,
        cwd=config.parent,
        env=env,
        timeout=120,
        check=False,
    )


def status(config: Path) -> dict[str, Any]:
    done = pushdown(config, "status", "--json")
    assert done.returncode in (0, 2), done.stderr
    return dict(json.loads(done.stdout)["source"])


def test_a_role_granted_through_the_gravitino_client_becomes_a_mariadb_grant(
    server: Any, tmp_path: Path
) -> None:
    prepare_server(server)
    gdir, fdir = tmp_path / "gravitino", tmp_path / "follower"
    gdir.mkdir()
    fdir.mkdir()
    gconfig = gdir / "pushdown.toml"
    gconfig.write_text('store = "g.db"\n[access]\nservice_admins = ["admin"]\n')
    init_store(gconfig)
    with serving(gconfig, gdir / "serve.log") as serve, proxy(serve.ready()) as front:
        admin_client(front.upstream, "admin").create_metalake("test", "the source", {})
        c = client(front.upstream, "admin")
        for u in USERS:
            c.add_user(u)
        c.create_catalog("c", Catalog.Type.RELATIONAL, "jdbc-mysql", "", {"pushdown.backend": "mysql1"})
        import httpx

        with httpx.Client(
            base_url=f"{front.upstream}/api/metalakes/test/catalogs/c", auth=httpx.BasicAuth("admin", "x")
        ) as h:
            assert h.post("/schemas", json={"name": DB}).status_code == 200
            for t in TABLES:
                assert h.post(f"/schemas/{DB}/tables", json={"name": t}).status_code == 200
        catalog = SecurableObjects.of_catalog("c", [UseCatalog.allow(), UseSchema.allow()])
        schema = SecurableObjects.of_schema(catalog, DB, [SelectTable.allow()])
        t3 = SecurableObjects.of_table(
            SecurableObjects.of_schema(catalog, DB, []), "t3", [SelectTable.deny()]
        )
        c.create_role("reader", {}, [catalog, schema, t3])

        fconfig = fdir / "pushdown.toml"
        fconfig.write_text(
            f'store = "pd.db"\n[backends.mysql1]\nkind = "mysql"\nhost = "{server.host}"\n'
            f'port = {server.port}\nuser = "pushdown"\npassword = {{ env = "{PASSWORD_ENV}" }}\n'
            f'[source]\nkind = "gravitino"\nuri = "{front.uri}"\nmetalake = "test"\nuser = "admin"\n'
            'interval = "1s"\ntimeout = "5s"\ncatalog_property = "pushdown.backend"\n'
            '[daemon]\ninterval = "5m"\npoll = "200ms"\nbackoff_min = "200ms"\nbackoff_max = "2s"\n'
            'lease_ttl = "5s"\n'
        )
        init_store(fconfig)
        daemon = DaemonProcess(fconfig, fdir / "daemon.log")
        try:
            source_db, follow_db = gdir / "g.db", fdir / "pd.db"

            def enforced(want: set[tuple[str, str]]) -> bool:
                oracle = model_selects(model_of(source_db))  # the source's own model decides
                return oracle == want and server_selects(server) == oracle

            wait_for(lambda: status(fconfig).get("last_good") is not None, 60, "the first read")
            assert server_selects(server) == set()
            c.grant_roles_to_user(["reader"], "ann")
            granted = {("pd_ann", t) for t in ("t0", "t1", "t2")}
            wait_for(lambda: enforced(granted), 60, "the grant reaches MariaDB")
            assert model_selects(model_of(follow_db)) == granted
            plan = pushdown(fconfig, "plan")
            assert plan.returncode == 0, plan.stdout + plan.stderr  # a second plan is empty

            refused = pushdown(fconfig, "apply", "--spec", str(ROOT / "examples" / "demo.yaml"))
            assert refused.returncode == 1 and "the model follows gravitino" in refused.stderr

            # the source killed in the middle of a read that would carry a change
            front.rule = lambda n, m, p: "drop"  # hold the follower off while the change is made
            c.grant_roles_to_user(["reader"], "bob")
            killed_at: list[float] = []

            def kill(n: int, path: str) -> None:
                if path.endswith("/roles") and not killed_at:
                    serve.proc.send_signal(signal.SIGKILL)
                    serve.proc.wait(10)
                    killed_at.append(time.time())

            front.before = kill
            front.rule = lambda n, m, p: None
            wait_for(lambda: bool(killed_at), 60, "a read reaches the roles")

            def says_unreachable() -> bool:
                s = status(fconfig)
                return s["error_kind"] == "unreachable" and (s["last_error_at"] or 0) > killed_at[0]

            wait_for(says_unreachable, 60, "the status says the source is unreachable")
            code, body = get(daemon.port(), "/readyz")
            assert code == 503 and "source: the last read was not used" in body
            assert server_selects(server) == granted  # nothing lost, nothing widened
            assert model_selects(model_of(follow_db)) == granted
            assert daemon.alive()

            # restarted on the same store, the next interval carries bob's grant
            front.before = lambda n, p: None
            with serving(gconfig, gdir / "serve2.log") as again:
                front.upstream = again.ready()
                both = granted | {("pd_bob", t) for t in ("t0", "t1", "t2")}
                wait_for(lambda: enforced(both), 60, "bob's grant reaches MariaDB")
                wait_for(lambda: get(daemon.port(), "/readyz")[0] == 200, 60, "ready again")
                assert not status(fconfig)["error_kind"] or status(fconfig)["last_good"] > killed_at[0]
                shown = pushdown(fconfig, "status")
                assert "last good read" in shown.stdout and "role granted" in shown.stdout
        finally:
            daemon.stop()
