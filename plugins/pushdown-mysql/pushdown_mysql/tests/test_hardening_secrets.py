"""Secrets: no repr, log line, error or traceback carries any part of a password."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from pushdown_lab.mariadb import LocalMariaDB

from pushdown.app.cli import main
from pushdown.errors import BackendError
from pushdown_mysql.backend import MySQLBackend, settings_from
from pushdown_mysql.connection import ConnectionSettings

from .world import admin, backend_for

pytestmark = pytest.mark.mariadb

#: Cyrillic, CJK and an emoji: nothing of it fits latin-1.
WIDE = "пароль-密码-🔑-zq9x"
NARROW = "hunter2-latin1-only"


def parts(secret: str) -> list[str]:
    """Every non-ASCII character and every 4-character piece of the secret."""
    pieces = {secret[i : i + 4] for i in range(len(secret) - 3)}
    return sorted({ch for ch in secret if ord(ch) > 127} | pieces)


def leaks(secret: str, text: str) -> list[str]:
    return [p for p in parts(secret) if p in text]


@pytest.mark.parametrize("secret", [WIDE, NARROW])
def test_repr_and_str_of_connection_settings_hide_the_password(secret: str) -> None:
    settings = ConnectionSettings(host="db", port=3306, user="pushdown", password=secret)
    for text in (repr(settings), str(settings), f"{settings}", repr([settings]), repr({"s": settings})):
        assert leaks(secret, text) == []
    assert "password=<set>" in repr(settings)
    assert "password=<empty>" in repr(ConnectionSettings())


def test_the_password_is_sent_as_utf8_bytes() -> None:
    assert ConnectionSettings(password=WIDE).password == WIDE.encode("utf-8")
    assert ConnectionSettings(password=b"raw").password == b"raw"


@pytest.fixture
def wide_account(mariadb: LocalMariaDB) -> Iterator[str]:
    with admin(mariadb) as cur:
        cur.execute("DROP USER IF EXISTS 'pd_wide'@'%'")
        cur.execute("CREATE USER 'pd_wide'@'%%' IDENTIFIED BY %s", (WIDE,))
        cur.execute("GRANT SELECT ON mysql.* TO 'pd_wide'@'%'")
    yield "pd_wide"
    with admin(mariadb) as cur:
        cur.execute("DROP USER 'pd_wide'@'%'")


def test_a_password_outside_latin1_logs_in(mariadb: LocalMariaDB, wide_account: str) -> None:
    backend = backend_for(mariadb, user=wide_account, password=WIDE)
    try:
        assert backend.connection.query("SELECT CURRENT_USER()") == [("pd_wide@%",)]
    finally:
        backend.close()


@pytest.mark.parametrize("secret", [WIDE, "wrong-" + WIDE])
def test_a_refused_login_says_so_without_any_part_of_the_password(
    mariadb: LocalMariaDB, wide_account: str, secret: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    backend = backend_for(mariadb, user="pd_nobody" if secret == WIDE else wide_account, password=secret)
    try:
        with pytest.raises(BackendError) as info:
            backend.connection.query("SELECT 1")
    finally:
        backend.close()
    text = "".join(traceback.format_exception(info.value)) + caplog.text + repr(backend.connection.settings)
    assert "1045" in str(info.value) and "Access denied" in str(info.value)
    assert leaks(secret, text) == []
    assert "UnicodeEncodeError" not in text


def test_the_cli_never_shows_a_wide_password(
    mariadb: LocalMariaDB, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PD_WIDE_PASSWORD", "wrong-" + WIDE)
    (tmp_path / "pushdown.toml").write_text(
        f'[backends.mysql1]\nkind = "mysql"\nhost = "{mariadb.host}"\nport = {mariadb.port}\n'
        'user = "pd_wide"\npassword = { env = "PD_WIDE_PASSWORD" }\n'
    )
    (tmp_path / "spec.yaml").write_text("users: [ann]\ncatalogs:\n  c: {backend: mysql1}\n")
    for args in (["plan", "--spec", "spec.yaml"], ["apply", "--spec", "spec.yaml"], ["verify"], ["plugins"]):
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        out = result.stdout + result.stderr
        assert leaks("wrong-" + WIDE, out) == [], args
        assert "Traceback" not in out and "UnicodeEncodeError" not in out
        if args[0] != "plugins":
            assert result.exit_code == 1 and "Access denied" in out, out


def test_settings_from_a_context_hide_the_secret() -> None:
    from pushdown.reconcile.backend import BackendContext

    context = BackendContext("b", {"host": "h", "user": "u"}, secret=lambda key: WIDE)
    settings = settings_from(context)
    assert leaks(WIDE, repr(settings)) == [] and settings.password == WIDE.encode()
    backend = MySQLBackend(context)
    assert leaks(WIDE, repr(backend) + repr(backend.connection.settings)) == []
