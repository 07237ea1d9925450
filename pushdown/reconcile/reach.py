"""What a scope reaches on a server that enforces one catalog: its databases, and the
tables where the scope is that narrow.

The backends that hold one catalog (MySQL, the Hive Metastore, Ranger's Hive service)
read only what a sync's scope reaches. The rule is the same for each, and it errs on
reading more, never less:

- the metalake, or any catalog, reaches every database: a catalog event may change
  which catalog the server enforces (or that it enforces none), and every grant there
  with it;
- a schema of the enforced catalog reaches its database, every table;
- a table (any leaf) reaches that table, or its whole database when the backend asks
  for databases only (its database-level grants are decided over all of its tables);
- an object of another catalog reaches nothing here.

``one_catalog`` is the other half of "one server enforces one catalog": the catalog a
backend enforces, or a clear error when more than one names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pushdown.errors import ConfigError
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.reconcile.scope import Resolved

#: per database, ``None`` for every table or the names of some tables
Tables = frozenset[str] | None


@dataclass(frozen=True)
class Reach:
    """Databases a scope reaches (``None``: every database of the server)."""

    databases: Mapping[str, Tables] | None

    @classmethod
    def everything(cls) -> Reach:
        return cls(None)

    @classmethod
    def nothing(cls) -> Reach:
        return cls({})

    @property
    def names(self) -> frozenset[str] | None:
        """The databases reached, or ``None`` for every one."""
        return None if self.databases is None else frozenset(self.databases)

    def covers(self, db: str, table: str | None = None) -> bool:
        """Whether the scope reaches ``db`` (and, when given, ``table`` in it)."""
        if self.databases is None:
            return True
        if db not in self.databases:
            return False
        tables = self.databases[db]
        return tables is None or table is None or table in tables

    def __or__(self, other: Reach) -> Reach:
        if self.databases is None or other.databases is None:
            return Reach.everything()
        out = dict(self.databases)
        for db, tables in other.databases.items():
            mine = out.get(db, frozenset())
            out[db] = None if mine is None or tables is None else mine | tables
        return Reach(out)


def reach_of(roots: Iterable[ObjectRef] | None, catalog: str | None, *, tables: bool = True) -> Reach:
    """What object subtrees ``roots`` (``None``: everything) reach of ``catalog``'s server;
    ``tables=False`` widens a table to its database."""
    if roots is None:
        return Reach.everything()
    out: dict[str, Tables] = {}
    for root in roots:
        if root.type in (SecurableType.METALAKE, SecurableType.CATALOG):
            return Reach.everything()
        if catalog is None or root.names[0] != catalog or len(root.names) < 2:
            continue
        db = root.names[1]
        if root.type is SecurableType.SCHEMA or len(root.names) < 3 or not tables:
            out[db] = None
        elif out.get(db, frozenset()) is not None:
            out[db] = (out.get(db) or frozenset()) | {root.names[2]}
    return Reach(out)


def scope_reach(scope: Resolved, catalog: str | None, *, tables: bool = True) -> Reach:
    """The union of what each of the scope's regions reaches."""
    out = Reach.nothing()
    for region in scope.regions:
        out = out | reach_of(region.roots, catalog, tables=tables)
    return out


def one_catalog(backend: str, server: str, catalogs: Iterable[str]) -> str | None:
    """The one catalog ``catalogs`` (those naming the backend) hold, ``None`` for none; a
    :class:`ConfigError` when several name one ``server`` (say "MySQL server")."""
    named = sorted(set(catalogs))
    if len(named) > 1:
        raise ConfigError(
            f"backend {backend}: one {server} enforces one catalog, but {', '.join(named)} name it; "
            "give each catalog its own backend"
        )
    return named[0] if named else None
