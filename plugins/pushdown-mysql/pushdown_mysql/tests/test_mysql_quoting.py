"""Quoting without the driver: identifiers in backticks, display strings escaped exactly as
pymysql's ``escape_string`` would (the driver is used here only as the reference)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pymysql.converters import escape_string

from pushdown_mysql.quoting import quote_ident, quote_string, template_ident, valid_ident


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("alice", "'alice'"),
        ("o'brien", "'o\\'brien'"),
        ('say "hi"', "'say \\\"hi\\\"'"),
        ("back\\slash", "'back\\\\slash'"),
        ("line\nbreak\r", "'line\\nbreak\\r'"),
        ("nul\x00ctrl-z\x1a", "'nul\\0ctrl-z\\Z'"),
        ("50%_ünï", "'50%_ünï'"),
    ],
)
def test_quote_string_escapes_what_a_string_literal_must(text: str, shown: str) -> None:
    assert quote_string(text) == shown


@given(st.text())
def test_quote_string_matches_the_drivers_escaping(text: str) -> None:
    assert quote_string(text) == "'" + escape_string(text) + "'"


def test_quote_ident_doubles_backticks_and_refuses_nul() -> None:
    assert quote_ident("crm") == "`crm`"
    assert quote_ident("a`b") == "`a``b`"
    assert template_ident("50%") == "`50%%`"
    with pytest.raises(ValueError, match="NUL"):
        quote_ident("a\x00b")


def test_valid_ident() -> None:
    assert valid_ident("orders") and not valid_ident("") and not valid_ident("trailing ")
    assert not valid_ident("x" * 65) and valid_ident("x" * 64)
