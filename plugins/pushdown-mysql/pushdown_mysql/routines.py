"""Grant rows no model decision maps to: routine grants (``mysql.procs_priv``) and proxy
grants (``mysql.proxies_priv``), read on every snapshot and reported where they reach a
managed login.

- ``EXECUTE`` or ``ALTER ROUTINE`` on one procedure or function: a routine runs with its
  definer's rights (``SQL SECURITY DEFINER``, the default), so ``CALL`` reads and writes
  what the model may deny. The model decides nothing about routines: pushdown never grants
  one, and its least-privileged account may not revoke one (it would need ``EXECUTE`` or
  ``ALTER ROUTINE`` WITH GRANT OPTION): each is a finding with the exact REVOKE.
- ``PROXY ON x TO y``: ``y`` may log in as ``x`` (through a plugin that proxies), so ``y``
  holds all ``x`` holds. A proxy held by a login pushdown reaches, or one that lets any
  account but an administrator act as a managed account (or as any user), is a finding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pushdown_mysql.facts import Account
from pushdown_mysql.quoting import quote_ident

#: administrators' accounts: their proxy rows (``root`` may proxy anyone) are the server's own
ADMINISTRATORS = frozenset({"root", "mariadb.sys", "mysql"})


@dataclass(frozen=True, order=True)
class RoutineGrant:
    """``privilege`` (``EXECUTE``, ``ALTER ROUTINE``, ``GRANT OPTION``) on one routine."""

    account: Account
    db: str
    kind: str  # PROCEDURE, FUNCTION, PACKAGE, PACKAGE BODY
    routine: str
    privilege: str

    def on(self) -> str:
        return f"{self.kind} {quote_ident(self.db)}.{quote_ident(self.routine)}"


@dataclass(frozen=True, order=True)
class ProxyGrant:
    """``account`` may act as ``proxied`` (``PROXY ON proxied TO account``)."""

    account: Account
    proxied: Account
    grant_option: bool


def parse_routines(rows: Iterable[tuple[Any, ...]]) -> set[RoutineGrant]:
    out: set[RoutineGrant] = set()
    for user, host, db, routine, kind, privs in rows:
        values = privs if isinstance(privs, set | frozenset) else str(privs or "").split(",")
        for name in (str(v).upper() for v in values if v):
            privilege = "GRANT OPTION" if name == "GRANT" else name
            account = Account(str(user), str(host).lower())
            out.add(RoutineGrant(account, str(db), str(kind), str(routine), privilege))
    return out


def parse_proxies(rows: Iterable[tuple[Any, ...]]) -> set[ProxyGrant]:
    return {
        ProxyGrant(Account(str(u), str(h).lower()), Account(str(pu), str(ph).lower()), bool(g))
        for u, h, pu, ph, g, *_ in rows
    }


def routine_findings(
    grants: Iterable[RoutineGrant], reaches: Callable[[Account], bool]
) -> Iterator[str]:
    """One finding per holder and routine whose holder reaches a managed login."""
    by: dict[tuple[Account, str], list[str]] = {}
    for g in sorted(grants):
        if reaches(g.account):
            by.setdefault((g.account, g.on()), []).append(g.privilege)
    for (account, on), privileges in sorted(by.items()):
        privs = ", ".join(privileges)
        yield (
            f"{privs} on {on} is granted to {account}: a routine runs with its definer's rights, so a "
            "login that reaches it reads and writes what the model may deny; the model decides nothing "
            "about routines and pushdown's account may not revoke it: revoke it by hand: "
            f"REVOKE {privs} ON {on} FROM {account}"
        )


def proxy_findings(proxies: Iterable[ProxyGrant], reaches: Callable[[Account], bool]) -> Iterator[str]:
    """A proxy held by a login pushdown reaches, or one that lets another account act as a
    managed one (or as any user: the proxied user ``''``); administrators' rows aside."""
    for p in sorted(proxies):
        if p.account.user in ADMINISTRATORS or not (reaches(p.account) or reaches(p.proxied)):
            continue
        option = " WITH GRANT OPTION" if p.grant_option else ""
        yield (
            f"{p.account} holds PROXY ON {p.proxied}{option}: a login as {p.account} may act as "
            f"{p.proxied} and hold all it holds, whatever the model decides; pushdown never grants a "
            f"proxy and may not revoke one: revoke it by hand: REVOKE PROXY ON {p.proxied} FROM {p.account}"
        )
