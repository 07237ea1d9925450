"""Translate a resolved model scope into server terms: which accounts and databases.

Each region (model users × object subtrees) becomes (accounts × databases): a user
becomes its account name, a schema of the enforced catalog becomes its database, a
table widens to its database (database-level grants are decided over all of its
tables), and the metalake or any catalog (this backend's or one it may just have
stopped enforcing) becomes every database. ``None`` means "all".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Resolved
from pushdown_mysql.compile import Naming
from pushdown_mysql.facts import ColumnGrant, Grant, RoleGrant, exact_db_name


@dataclass(frozen=True)
class ServerRegion:
    accounts: frozenset[str] | None  # account user names; None: every managed account
    databases: frozenset[str] | None  # database names; None: every database, and global grants

    def covers(self, fact: Fact) -> bool:
        if not isinstance(fact, Grant | RoleGrant | ColumnGrant):
            return False
        if self.accounts is not None and fact.account.user not in self.accounts:
            return False
        if self.databases is None:
            return True
        if isinstance(fact, ColumnGrant):
            return fact.db in self.databases
        if isinstance(fact, RoleGrant) or fact.db is None:
            return False
        name = exact_db_name(fact.db) if fact.table is None else fact.db
        return name is not None and name in self.databases


@dataclass(frozen=True)
class ServerScope:
    regions: tuple[ServerRegion, ...]

    @property
    def accounts(self) -> frozenset[str] | None:
        """Every account any region names, or None when one covers every account."""
        out: set[str] = set()
        for r in self.regions:
            if r.accounts is None:
                return None
            out |= r.accounts
        return frozenset(out)

    @property
    def databases(self) -> frozenset[str] | None:
        out: set[str] = set()
        for r in self.regions:
            if r.databases is None:
                return None
            out |= r.databases
        return frozenset(out)

    def within(self) -> Callable[[Fact], bool]:
        regions = self.regions

        def within(fact: Fact) -> bool:
            return any(r.covers(fact) for r in regions)

        return within


def server_object(obj: ObjectRef, catalog: str | None) -> str | bool | None:
    """The database ``obj`` lies in; ``True`` for the whole server; ``None`` for nothing here."""
    if obj.type in (SecurableType.METALAKE, SecurableType.CATALOG):
        return True  # a catalog event may change which catalog this server enforces
    if obj.catalog is None or obj.catalog != catalog or len(obj.names) < 2:
        return None
    return obj.names[1]


def server_scope(scope: Resolved, catalog: str | None, naming: Naming, fold: int = 0) -> ServerScope:
    """``fold``: the server's ``lower_case_table_names``; where it folds names, a schema
    ``c.S1`` is (also) the database ``s1``."""
    regions = []
    for region in scope.regions:
        mapped = None if region.users is None else (naming.try_account(u) for u in region.users)
        accounts = None if mapped is None else frozenset(a.user for a in mapped if a is not None)
        databases: set[str] | None = set()
        for root in region.roots or ():
            where = server_object(root, catalog)
            if where is True:
                databases = None
                break
            if isinstance(where, str) and databases is not None:
                databases.add(where)
                if fold:
                    databases.add(where.lower())
        if region.roots is None:
            databases = None
        if databases is not None and not databases:
            continue  # nothing of this server lies in the region
        regions.append(ServerRegion(accounts, None if databases is None else frozenset(databases)))
    return ServerScope(tuple(regions))
