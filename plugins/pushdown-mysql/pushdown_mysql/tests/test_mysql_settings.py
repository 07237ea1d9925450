"""The MySQL backend's settings: read through the core's Settings, so a library caller's
bad value is the same clear ConfigError as the CLI's, naming the backend and the key."""

from __future__ import annotations

import pytest

from pushdown.errors import ConfigError
from pushdown.reconcile.backend import BackendContext
from pushdown_mysql.backend import MySQLBackend


def backend(**settings: object) -> MySQLBackend:
    return MySQLBackend(BackendContext("m1", {"user": "pushdown", **settings}))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("port", "abc"),
        ("port", 70000),
        ("connect_timeout", "soon"),
        ("create_on_database", "perhaps"),
        ("account_host", ""),
        ("host", 3306),
    ],
)
def test_a_library_callers_bad_setting_is_a_config_error_naming_backend_and_key(
    key: str, value: object
) -> None:
    with pytest.raises(ConfigError, match=rf"backend m1: setting '{key}': "):
        backend(**{key: value})


def test_settings_given_as_text_are_read_as_toml_would_give_them() -> None:
    b = backend(port="3307", connect_timeout="2.5", create_on_database="yes", account_prefix="")
    assert b.connection.settings.port == 3307 and b.connection.settings.connect_timeout == 2.5
    assert b.create_on_database is True and b.naming.prefix == ""


def test_a_bad_password_setting_is_refused_without_repeating_it() -> None:
    with pytest.raises(ConfigError, match="setting 'password'") as caught:
        backend(password=12345678)
    assert "12345678" not in str(caught.value)


def test_the_user_is_required() -> None:
    with pytest.raises(ConfigError, match="backend m1: setting 'user' is required"):
        MySQLBackend(BackendContext("m1", {}))
