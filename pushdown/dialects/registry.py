"""The dialects by name."""

from __future__ import annotations

from pushdown.dialects import cdap, databricks_hms, singdata, unity_catalog
from pushdown.dialects.data import Dialect
from pushdown.errors import ModelError

DIALECTS: dict[str, Dialect] = {
    d.name: d for d in (databricks_hms.DIALECT, unity_catalog.DIALECT, singdata.DIALECT, cdap.DIALECT)
}
#: the dialects with statements to read and write (CDAP has a table, not a grammar)
SQL_DIALECTS = ("databricks-hms", "unity-catalog", "singdata")


def dialect_named(name: str, *, sql: bool = False) -> Dialect:
    known = SQL_DIALECTS if sql else tuple(DIALECTS)
    if name not in known:
        raise ModelError(f"unknown dialect {name!r}; known: {', '.join(known)}")
    return DIALECTS[name]
