"""The backend against a real Ranger Admin (``docker/compose.yaml``: ``ranger`` and its
database), through testcontainers, when a Docker engine answers; skipped with that
reason otherwise (the stand-in's tests run everywhere)."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import RangerBackend

from .world import sales

pytestmark = pytest.mark.ranger
ROOT = Path(__file__).resolve().parents[4]
URL = "http://127.0.0.1:6080"
ADMIN = ("admin", os.environ.get("RANGER_ADMIN_PASSWORD", "rangerR0cks!"))
SERVICES = ("ranger-db", "ranger-zk", "ranger-solr", "ranger")
CONFIGS = {
    "hive": {"username": "hive", "password": "hive", "jdbc.url": "jdbc:hive2://localhost:10000",
             "jdbc.driverClassName": "org.apache.hive.jdbc.HiveDriver"},
    "hdfs": {"username": "hdfs", "password": "hdfs", "fs.default.name": "hdfs://localhost:8020",
             "hadoop.security.authentication": "simple", "hadoop.security.authorization": "false"},
    "kafka": {"username": "kafka", "password": "kafka", "zookeeper.connect": "localhost:2181"},
}  # fmt: skip


def docker_engine() -> str | None:
    """Why no Docker engine answers, or ``None`` when one does (instant when none is there)."""
    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return "no Docker engine here (no DOCKER_HOST, no /var/run/docker.sock)"
    try:
        import docker  # type: ignore[import-not-found,unused-ignore]

        client = docker.from_env()
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # any failure means: no engine to use
        return f"the Docker engine does not answer ({type(exc).__name__})"
    return None


@pytest.fixture(scope="module")
def ranger_admin() -> Iterator[str]:
    why = docker_engine()
    if why is not None:
        pytest.skip(f"a real Ranger Admin runs only in a container: {why}")
    try:
        from testcontainers.compose import DockerCompose  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        pytest.skip("the testcontainers package is not installed (pip install 'pushdown-ranger[docker]')")
    # compose interpolates every service's required secrets, even of services not started
    required = (
        "RANGER_DB_PASSWORD",
        "MARIADB_ROOT_PASSWORD",
        "MYSQL_ROOT_PASSWORD",
        "PUSHDOWN_MYSQL_PASSWORD",
    )
    for var in required:
        os.environ.setdefault(var, secrets.token_urlsafe(16))
    with DockerCompose(str(ROOT / "docker"), compose_file_name="compose.yaml", services=list(SERVICES)):
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{URL}/service/public/v2/api/servicedef", auth=ADMIN, timeout=5).ok:
                    break
            except requests.RequestException:
                pass
            time.sleep(5)
        else:
            pytest.fail("Ranger Admin did not answer on 127.0.0.1:6080 within 10 minutes")
        for name, configs in CONFIGS.items():
            body: dict[str, Any] = {"name": name, "type": name, "configs": configs}
            requests.post(f"{URL}/service/public/v2/api/service", json=body, auth=ADMIN, timeout=30)
        yield URL


def test_apply_converges_and_a_no_op_sync_is_the_version_check(ranger_admin: str) -> None:
    context = BackendContext("rg", {"url": ranger_admin, "user": ADMIN[0]}, secret=lambda k: ADMIN[1])
    backend = RangerBackend(context)
    world = sales().deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    reconcile(backend, world.model, Scope.everything())
    before = backend.api.calls.total
    assert backend.plan(world.model, Scope.everything()).empty
    assert backend.api.calls.total - before == 2
