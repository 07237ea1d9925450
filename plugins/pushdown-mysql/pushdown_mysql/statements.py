"""Turn plan operations into the fewest GRANT/REVOKE statements. Pure.

Operations with the same action on the same object share one statement when they give
the same privileges: ``GRANT SELECT, INSERT ON `d`.`t` TO %s@%s, %s@%s`` names every
account that gets exactly that set there. Identifiers are backtick-quoted; account
names and hosts are always parameters. Every removal statement runs before any
addition (narrow before widening).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pushdown.reconcile.plan import Op
from pushdown_mysql.facts import RANK, Account, ColumnGrant, Grant, RoleGrant
from pushdown_mysql.quoting import quote_string, template_ident

#: Accounts named in one GRANT or REVOKE at most (MySQL accepts a list of them).
MAX_ACCOUNTS = 1000


@dataclass(frozen=True)
class Statement:
    template: str
    args: tuple[str, ...]
    ops: int
    privileges: tuple[str, ...] = ()
    on: str = ""
    db: str | None = None
    table: str | None = None
    accounts: tuple[Account, ...] = ()
    revoking: bool = False
    facts: tuple[Grant | RoleGrant | ColumnGrant, ...] = ()

    def display(self) -> str:
        shown = tuple(quote_string(a) for a in self.args)
        return self.template.replace("%%", "\x00").replace("%s", "{}").replace("\x00", "%").format(*shown)

    def split(self) -> list[Statement]:
        """The same change, one statement per account (to find which one is refused)."""
        out = []
        for account in self.accounts:
            mine = [f for f in self.facts if isinstance(f, Grant) and f.account == account]
            out.append(grant_statement("remove" if self.revoking else "add", [account], mine))
        return out

    def per_privilege(self) -> list[Statement]:
        """The same change for one account, one statement per privilege (to find which is refused)."""
        return [
            grant_statement("remove" if self.revoking else "add", list(self.accounts), [f])
            for f in self.facts
            if isinstance(f, Grant)
        ]


def _on(g: Grant) -> str:
    if g.db is None:
        return "*.*"
    if g.table is None:
        return f"{template_ident(g.db)}.*"
    return f"{template_ident(g.db)}.{template_ident(g.table)}"


def grant_statement(action: str, accounts: list[Account], grants: list[Grant]) -> Statement:
    """One GRANT (or REVOKE) of the same privileges on one object to several accounts."""
    first = grants[0]
    privileges = tuple(sorted({g.privilege for g in grants}, key=lambda p: (RANK.get(p, 99), p)))
    verb, to = ("GRANT", "TO") if action == "add" else ("REVOKE", "FROM")
    names = ", ".join("PUBLIC" if a.public else "%s@%s" for a in accounts)
    sql = f"{verb} {', '.join(privileges)} ON {_on(first)} {to} {names}"
    args = tuple(part for a in accounts if not a.public for part in (a.user, a.host))
    return Statement(
        sql, args, len(grants), privileges, first.on(), first.db, first.table,
        tuple(accounts), action == "remove", tuple(grants),
    )  # fmt: skip


def role_statement(action: str, fact: RoleGrant) -> Statement:
    verb, to = ("GRANT", "TO") if action == "add" else ("REVOKE", "FROM")
    account = fact.account
    holder, args = ("PUBLIC", ()) if account.public else ("%s@%s", (account.user, account.host))
    if fact.role_host:
        sql = f"{verb} %s@%s {to} {holder}"
        args = (fact.role, fact.role_host, *args)
    else:
        sql = f"{verb} {template_ident(fact.role)} {to} {holder}"
    revoking = action == "remove"
    return Statement(sql, args, 1, ("ROLE",), fact.role_sql(), None, None, (fact.account,), revoking)


def column_statement(action: str, fact: ColumnGrant) -> Statement:
    """``REVOKE SELECT (`c`) ON `d`.`t` FROM %s@%s`` (pushdown only ever revokes these)."""
    verb, to = ("GRANT", "TO") if action == "add" else ("REVOKE", "FROM")
    column = template_ident(fact.column)
    on = f"{template_ident(fact.db)}.{template_ident(fact.table)}"
    account = fact.account
    sql = f"{verb} {fact.privilege} ({column}) ON {on} {to} {'PUBLIC' if account.public else '%s@%s'}"
    args = () if account.public else (account.user, account.host)
    return Statement(
        sql, args, 1, (fact.privilege,), fact.on(), fact.db, fact.table,
        (account,), action == "remove", (fact,),
    )  # fmt: skip


def statements(ops: Iterable[Op]) -> list[Statement]:
    """The fewest statements: one per (action, object, privilege set), naming every
    account that gets exactly that set there. Every removal precedes every addition."""
    per_account: dict[tuple[str, Account, str | None, str | None], list[Grant]] = {}
    roles: list[tuple[str, RoleGrant]] = []
    columns: list[Statement] = []
    for op in ops:
        fact = op.fact
        if isinstance(fact, RoleGrant):
            roles.append((op.action, fact))
        elif isinstance(fact, ColumnGrant):
            columns.append(column_statement(op.action, fact))
        else:
            assert isinstance(fact, Grant)
            per_account.setdefault((op.action, fact.account, fact.db, fact.table), []).append(fact)
    shared: dict[tuple[str, str | None, str | None, frozenset[str]], list[tuple[Account, list[Grant]]]] = {}
    for (action, account, db, table), grants in per_account.items():
        privileges = frozenset(g.privilege for g in grants)
        shared.setdefault((action, db, table, privileges), []).append((account, grants))
    out = [role_statement(action, fact) for action, fact in roles if action == "remove"]
    out += sorted((c for c in columns if c.revoking), key=lambda c: c.display())
    for (action, _db, _table, _privs), holders in sorted(shared.items(), key=_removals_first):
        holders.sort()
        for i in range(0, len(holders), MAX_ACCOUNTS):
            chunk = holders[i : i + MAX_ACCOUNTS]
            grants = [g for _, gs in chunk for g in gs]
            out.append(grant_statement(action, [a for a, _ in chunk], grants))
    out += [role_statement(action, fact) for action, fact in roles if action != "remove"]
    out += [c for c in columns if not c.revoking]
    return out


Batch = tuple[str, str | None, str | None, frozenset[str]]


def _removals_first(item: tuple[Batch, object]) -> tuple[object, ...]:
    (action, db, table, privileges), _ = item
    return (action != "remove", db or "", table or "", sorted(privileges))
