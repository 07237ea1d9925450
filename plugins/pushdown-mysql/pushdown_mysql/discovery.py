"""Discover what changed on the server by other hands since the last sync: a summary of
the inventory, one row per database, in one query.

A table created by hand under a schema-level ALLOW is in no journal, yet where an
exception (a DENY on a sibling) forces table-level grants it needs grants of its own.
A full sync finds it; a scoped one (``apply --pending``, the library hook) only looks
where the journal points. So every sync first asks the server for
``(database, number of tables, sum of CRC32 of their names)`` (tables of every kind the
inventory lists: :data:`~pushdown_mysql.mapping.TABLE_TYPES`), compares that with
the summary its last converged sync kept (the store's meta, through the dispatcher:
the CLI runs in a fresh process every time) and widens the scope to the databases
whose row changed, appeared or went. Why this and not more:

- one query, one row per database, names only (no ``CREATE_TIME``, which makes the
  server open every table); no grant table is read for it, and the scope it adds is
  just the changed databases, so a one-table change costs what a change to that
  database costs;
- count plus an order-free checksum of the names sees a table created, dropped or
  renamed by hand; a collision only delays the grants to the next full sync;
- without a summary yet (the first sync ever) nothing is widened: the first ``apply``
  is a full one, and it records the summary.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.reconcile.scope import Scope
from pushdown_mysql.mapping import SYSTEM_DATABASES, TABLE_TYPES

SUMMARY_SQL = (
    "SELECT s.SCHEMA_NAME, COUNT(t.TABLE_NAME), COALESCE(SUM(CRC32(t.TABLE_NAME)), 0) "
    "FROM information_schema.SCHEMATA s LEFT JOIN information_schema.TABLES t "
    "ON t.TABLE_SCHEMA = s.SCHEMA_NAME AND t.TABLE_TYPE IN ("
    + ", ".join(f"'{t}'" for t in TABLE_TYPES)  # the inventory's kinds (constants of mapping.py)
    + ") GROUP BY s.SCHEMA_NAME"
)


def summary_of(catalog: str, rows: Iterable[tuple[Any, ...]]) -> str:
    databases = {str(db): [int(n), int(crc)] for db, n, crc in rows if db not in SYSTEM_DATABASES}
    return json.dumps({"catalog": catalog, "databases": databases}, sort_keys=True, ensure_ascii=False)


def changed(seen: str | None, now: str) -> Scope:
    """The schemas whose databases changed between two summaries of the same catalog."""
    if seen is None:
        return Scope.nothing()
    before, after = json.loads(seen), json.loads(now)
    if before.get("catalog") != after["catalog"]:
        return Scope.nothing()  # the catalog moved: its own journal event scoped that sync
    old, new = before.get("databases", {}), after["databases"]
    names = sorted(db for db in set(old) | set(new) if old.get(db) != new.get(db))
    return Scope.of(ObjectRef(SecurableType.SCHEMA, (after["catalog"], db)) for db in names)
