"""One throwaway MariaDB for the whole session, and pushdown's least-privileged account."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pushdown_mysql.server import LocalMariaDB, ServerUnavailable, throwaway_mariadb

from .world import PUSHDOWN, PUSHDOWN_PASSWORD, setup_pushdown_account


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
def credentials() -> tuple[str, str]:
    return PUSHDOWN, PUSHDOWN_PASSWORD
