"""MySQL 8 runs only in a container (testcontainers), when a Docker engine answers."""

from __future__ import annotations

import pytest
from pushdown_lab.mariadb import ServerUnavailable, container_server

from pushdown_mysql.readback import dialect_of

pytestmark = pytest.mark.mariadb


def test_mysql8_through_a_container() -> None:
    try:
        with container_server("mysql:8.4") as container:
            assert container.get_exposed_port(3306)
    except ServerUnavailable as exc:
        pytest.skip(f"MySQL 8 not tested here: {exc}")


def test_dialect_is_chosen_by_asking_the_server() -> None:
    assert dialect_of("10.11.19-MariaDB-0+deb12u1").mariadb
    mysql = dialect_of("8.4.3")
    assert not mysql.mariadb and "mysql.role_edges" in mysql.queries()
