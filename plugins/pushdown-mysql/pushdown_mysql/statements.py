"""Turn plan operations into the fewest GRANT/REVOKE statements. Pure.

Operations on the same account and object with the same action share one statement
(``GRANT SELECT, INSERT ON `d`.`t` TO %s@%s``). Identifiers are backtick-quoted;
account names and hosts are always parameters. The plan's order is kept: every
removal statement runs before any addition (narrow before widening).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pushdown.reconcile.plan import Op
from pushdown_mysql.facts import RANK, Grant, RoleGrant
from pushdown_mysql.quoting import quote_string, template_ident


@dataclass(frozen=True)
class Statement:
    template: str
    args: tuple[str, ...]
    ops: int
    privileges: tuple[str, ...] = ()
    on: str = ""
    db: str | None = None
    table: str | None = None

    def display(self) -> str:
        shown = tuple(quote_string(a) for a in self.args)
        return self.template.replace("%%", "\x00").replace("%s", "{}").replace("\x00", "%").format(*shown)


def _on(g: Grant) -> str:
    if g.db is None:
        return "*.*"
    if g.table is None:
        return f"{template_ident(g.db)}.*"
    return f"{template_ident(g.db)}.{template_ident(g.table)}"


def grant_statement(action: str, grants: list[Grant]) -> Statement:
    first = grants[0]
    privileges = tuple(sorted({g.privilege for g in grants}, key=lambda p: (RANK.get(p, 99), p)))
    verb, to = ("GRANT", "TO") if action == "add" else ("REVOKE", "FROM")
    sql = f"{verb} {', '.join(privileges)} ON {_on(first)} {to} %s@%s"
    args = (first.account.user, first.account.host)
    return Statement(sql, args, len(grants), privileges, first.on(), first.db, first.table)


def role_statement(action: str, fact: RoleGrant) -> Statement:
    verb, to = ("GRANT", "TO") if action == "add" else ("REVOKE", "FROM")
    if fact.role_host:
        sql = f"{verb} %s@%s {to} %s@%s"
        args: tuple[str, ...] = (fact.role, fact.role_host, fact.account.user, fact.account.host)
    else:
        sql = f"{verb} {template_ident(fact.role)} {to} %s@%s"
        args = (fact.account.user, fact.account.host)
    return Statement(sql, args, 1, ("ROLE",), fact.role_sql())


def statements(ops: Iterable[Op]) -> list[Statement]:
    batches: dict[object, tuple[str, list[Grant | RoleGrant]]] = {}
    for i, op in enumerate(ops):
        fact = op.fact
        if isinstance(fact, RoleGrant):
            key: object = ("role", i)
        else:
            assert isinstance(fact, Grant)
            key = (op.action, fact.account, fact.db, fact.table)
        batches.setdefault(key, (op.action, []))[1].append(fact)
    out = []
    for action, facts in batches.values():
        if isinstance(facts[0], RoleGrant):
            out.append(role_statement(action, facts[0]))
        else:
            out.append(grant_statement(action, [f for f in facts if isinstance(f, Grant)]))
    return out
