"""Quoting for MySQL text: identifiers in backticks, strings as query parameters.

Identifiers (databases, tables, MariaDB roles) cannot be query parameters, so they are
wrapped in backticks with every backtick doubled; the server then reads them verbatim.
Account names and hosts are always passed as query parameters: pymysql escapes them
with the connection's own rules (it honours ``NO_BACKSLASH_ESCAPES``). Statements
carry parameters, so a ``%`` inside a quoted identifier is doubled for pymysql's
``%``-formatting (:func:`template_ident`). :func:`quote_string` is for display only; it
escapes as pymysql's ``escape_string`` does (backslash escapes), without needing the driver.
"""

from __future__ import annotations

#: what a backslash-escaped MySQL string literal escapes (pymysql's table, the same characters)
_STRING_ESCAPES = str.maketrans(
    {"\x00": "\\0", "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z", '"': '\\"', "'": "\\'"}
)


def valid_ident(name: str) -> bool:
    """Whether MySQL can hold ``name`` as a database or table name at all."""
    return bool(name) and "\x00" not in name and name == name.rstrip(" ") and len(name) <= 64


def quote_ident(name: str) -> str:
    if "\x00" in name:
        raise ValueError(f"identifier {name!r} contains a NUL character")
    return "`" + name.replace("`", "``") + "`"


def template_ident(name: str) -> str:
    """``quote_ident`` for a statement template that also carries ``%s`` parameters."""
    return quote_ident(name).replace("%", "%%")


def quote_string(text: str) -> str:
    """A string literal, for showing a statement to a person (never for executing)."""
    return "'" + text.translate(_STRING_ESCAPES) + "'"
