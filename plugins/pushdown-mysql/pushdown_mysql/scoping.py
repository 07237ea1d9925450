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

from pushdown.reconcile.plan import Fact
from pushdown.reconcile.reach import reach_of
from pushdown.reconcile.scope import Resolved
from pushdown_mysql.compile import AccountNaming
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


def server_scope(scope: Resolved, catalog: str | None, naming: AccountNaming, fold: int = 0) -> ServerScope:
    """Per region, its accounts and the databases it reaches (:func:`reach_of`, a table
    widened to its database); a region that reaches nothing here is left out. ``fold``:
    the server's ``lower_case_table_names``; where it folds names, a schema ``c.S1`` is
    (also) the database ``s1``."""
    regions = []
    for region in scope.regions:
        mapped = None if region.users is None else (naming.try_account(u) for u in region.users)
        accounts = None if mapped is None else frozenset(a.user for a in mapped if a is not None)
        databases = reach_of(region.roots, catalog, tables=False).names
        if fold and databases is not None:
            databases = databases | {d.lower() for d in databases}
        if databases is not None and not databases:
            continue  # nothing of this server lies in the region
        regions.append(ServerRegion(accounts, databases))
    return ServerScope(tuple(regions))
