"""One throwaway MariaDB for the whole session, and pushdown's least-privileged account."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pushdown_lab.mariadb import LocalMariaDB, ServerUnavailable, throwaway_mariadb

from pushdown_mysql.backend import MySQLBackend

from .world import PUSHDOWN, PUSHDOWN_PASSWORD, World, backend_for, setup_pushdown_account


@pytest.fixture(scope="session")
def mariadb() -> Iterator[LocalMariaDB]:
    try:
        with throwaway_mariadb() as server:
            setup_pushdown_account(server)
            yield server
    except ServerUnavailable as exc:
        if os.environ.get("CI"):  # CI installs mariadb-server: a missing server is a failure there
            pytest.fail(f"no MariaDB in CI: {exc}")
        pytest.skip(f"no MariaDB here: {exc}")


@pytest.fixture(scope="session")
def folding() -> Iterator[LocalMariaDB]:
    """A second throwaway MariaDB, installed and started with lower_case_table_names=1
    (started only by the tests that ask for it)."""
    try:
        with throwaway_mariadb(options=["--lower-case-table-names=1"]) as server:
            setup_pushdown_account(server)
            yield server
    except ServerUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"no MariaDB in CI: {exc}")
        pytest.skip(f"no MariaDB here: {exc}")


@pytest.fixture(scope="session")
def credentials() -> tuple[str, str]:
    return PUSHDOWN, PUSHDOWN_PASSWORD


@pytest.fixture
def world(mariadb: LocalMariaDB) -> Iterator[World]:
    """A model beside the server; what it created on the server is dropped afterwards."""
    w = World(mariadb)
    yield w
    w.cleanup()


@pytest.fixture
def backend(mariadb: LocalMariaDB) -> Iterator[MySQLBackend]:
    """The backend, connected as pushdown's least-privileged account."""
    b = backend_for(mariadb)
    yield b
    b.close()
