"""Access paths that bypass the model, found in the one read of a snapshot.

Each finding is one sentence: what, where, why it matters and what a person must do.
They make ``pushdown plan`` and ``verify`` report drift (exit 2) even when pushdown
has nothing it may change:

- grants ``TO PUBLIC`` (MariaDB ≥ 10.11 keeps them under the role ``PUBLIC``): every
  account holds them, managed ones included; and the anonymous user's (``''@host``: its
  database rows match every user name), and those of a managed user name at another
  host. Those on a table or database pushdown governs, that its account may revoke, are
  revoked (:func:`in_reach`: they would make a managed login wider than the model); the
  others are reported (:func:`public_findings`). Their role memberships (``GRANT r TO
  PUBLIC``) are revoked like a managed account's, or reported (:func:`stuck`);
- a second account with a managed account's user name at another host
  (``pd_x@localhost`` shadows ``pd_x@%``), or an anonymous account at a host more
  specific than a managed account's: a login from there is that account;
- MySQL 8's ``mandatory_roles``: every account holds them;
- wildcard (```s%`.*``), global (``*.*``) and role grants on a managed account that
  pushdown's least-privileged account cannot revoke (it would need the privilege WITH
  GRANT OPTION at that level, or the role WITH ADMIN OPTION): they are left out of the
  facts (so apply never tries and fails) and reported with the exact REVOKE to run.
  Where pushdown's account does hold what is needed, they stay facts and are revoked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from pushdown_mysql.diagnose import missing_for
from pushdown_mysql.facts import Account, ColumnGrant, Grant, RoleGrant, ServerFact, exact_db_name
from pushdown_mysql.quoting import quote_ident
from pushdown_mysql.readback import ServerRead
from pushdown_mysql.statements import grant_statement

PUBLIC = "PUBLIC"
#: the anonymous user (``''@host``): its database rows match every user name
ANONYMOUS = ""


def _privilege(fact: Grant | ColumnGrant) -> str:
    if isinstance(fact, ColumnGrant):
        return f"{fact.privilege} ({quote_ident(fact.column)})"
    return fact.privilege


def _grouped(facts: Iterable[Grant | ColumnGrant]) -> dict[tuple[Account, str], list[str]]:
    out: dict[tuple[Account, str], list[str]] = {}
    for fact in sorted(facts, key=str):
        out.setdefault((fact.account, fact.on()), []).append(_privilege(fact))
    return out


def public_in_reach(server: ServerRead, fact: ServerFact) -> bool:
    """A grant TO PUBLIC on a table or database pushdown governs (the server shows it the
    database) that its account may revoke: pushdown revokes it like a managed grant."""
    return fact.account.public and in_reach(server, fact)


def in_reach(server: ServerRead, fact: ServerFact) -> bool:
    """A table, exact-database or column grant on a database pushdown governs, that its
    account may revoke."""
    if not isinstance(fact, Grant | ColumnGrant) or fact.db is None:
        return False
    db = fact.db if fact.table is not None else exact_db_name(fact.db)
    if db is None or db not in server.inventory.databases:
        return False
    if isinstance(fact, ColumnGrant):
        statement = grant_statement(
            "remove", [fact.account], [Grant(fact.account, db, fact.table, fact.privilege)]
        )
        return not missing_for(server, statement)
    return not revocable(server, fact)


def public_findings(held: Iterable[ServerFact]) -> Iterator[str]:
    """Grants of a principal that reaches a managed login (PUBLIC, the anonymous user, a
    managed user name at another host) that pushdown may not revoke: one finding each."""
    grants = [g for g in held if isinstance(g, Grant | ColumnGrant)]
    for (account, on), privileges in sorted(_grouped(grants).items()):
        privs = ", ".join(privileges)
        yield (
            f"{privs} on {on} is granted {_whom(account)}, whatever the model decides; pushdown's "
            f"account may not revoke it there: revoke it by hand: REVOKE {privs} ON {on} FROM {account}"
        )


def _whom(account: Account) -> str:
    if account.public:
        return "TO PUBLIC: every account on the server holds it, the ones pushdown manages included"
    if account.user == ANONYMOUS:
        return (
            f"to the anonymous account {account}: its database rows apply to every user name logging "
            f"in from a host that matches {account.host!r} (the managed accounts included), and a login "
            "from a host it matches more closely than a managed account's is that account"
        )
    return (
        f"to {account}, an account with a managed user name at another host: a login as "
        f"{account.user!r} from a host that matches {account.host!r} may be that account"
    )


def _more_specific(host: str, than: str) -> bool:
    """Whether MySQL tries ``host`` before ``than`` when it picks the account of a login:
    a host without wildcards first, then the longer literal prefix; ``%`` last."""
    wild = [i for i, ch in enumerate(host) if ch in "%_"]
    theirs = [i for i, ch in enumerate(than) if ch in "%_"]
    if not theirs:
        return False
    return not wild or wild[0] > theirs[0]


def shadow_findings(server: ServerRead, managed: Callable[[Account], bool]) -> Iterator[str]:
    """An account with a managed user name at another host, or an anonymous account at a
    host more specific than a managed account's: a login from there is that account."""
    by_user = {a.user: a for a in server.accounts if managed(a)}
    hosts = sorted({a.host for a in by_user.values()})
    for other in sorted(server.accounts):
        if other.user == ANONYMOUS:
            shadowed = [h for h in hosts if _more_specific(other.host, h)]
            if shadowed:
                yield (
                    f"the anonymous account {other} shadows every managed account at "
                    f"{', '.join(repr(h) for h in shadowed)}: a login as any of them from a host that "
                    f"matches {other.host!r} is the anonymous account (with its password, or none), not "
                    "the one pushdown keeps equal to the model; pushdown revokes its grants on the "
                    f"databases it governs, but never drops accounts: drop it by hand: DROP USER {other}"
                )
            continue
        mine = by_user.get(other.user)
        if mine is None or other == mine:
            continue
        how = "shadows" if _more_specific(other.host, mine.host) else "shares the user name of"
        yield (
            f"{other} {how} the managed account {mine}: a login as {other.user!r} from a host that "
            f"matches {other.host!r} may be that account, not the one pushdown keeps equal to the model; "
            "pushdown revokes its grants on the databases it governs, but never drops accounts: manage "
            f"that host instead (setting account_host), or drop it by hand: DROP USER {other}"
        )


def mandatory_findings(server: ServerRead) -> Iterator[str]:
    """MySQL 8's ``mandatory_roles``: every account holds them (pushdown cannot revoke a setting)."""
    if server.mandatory:
        yield (
            f"the server setting mandatory_roles = {server.mandatory!r} gives those roles to every "
            "account, the ones pushdown manages included, whatever the model decides (active at login "
            "where activate_all_roles_on_login is on, else after SET ROLE); pushdown never changes server "
            "settings: clear it by hand: SET PERSIST mandatory_roles = ''"
        )


def revocable(server: ServerRead, fact: ServerFact) -> tuple[str, ...]:
    """What pushdown's account lacks to revoke ``fact`` (empty: it may)."""
    if isinstance(fact, RoleGrant):
        return () if (fact.role, fact.role_host) in server.admin_roles else ("the role WITH ADMIN OPTION",)
    if isinstance(fact, ColumnGrant):
        return ()
    return missing_for(server, grant_statement("remove", [fact.account], [fact]))


def beyond_reach(fact: ServerFact) -> bool:
    """A wildcard, global or role grant: outside what pushdown's documented privileges cover."""
    if isinstance(fact, RoleGrant):
        return True
    if not isinstance(fact, Grant):
        return False
    return fact.db is None or (fact.table is None and exact_db_name(fact.db) is None)


def stuck(server: ServerRead, facts: Iterable[ServerFact]) -> tuple[frozenset[ServerFact], tuple[str, ...]]:
    """The managed facts pushdown may not revoke, and one finding per account and object."""
    out: set[ServerFact] = set()
    lacks: dict[tuple[Account, str], set[str]] = {}
    for fact in facts:
        if beyond_reach(fact):
            missing = revocable(server, fact)
            if missing:
                out.add(fact)
                on = fact.role_sql() if isinstance(fact, RoleGrant) else fact.on()
                lacks.setdefault((fact.account, on), set()).update(missing)
    return frozenset(out), tuple(_stuck_sentences(server.me, out, lacks))


def _stuck_sentences(
    me: Account, facts: set[ServerFact], lacks: dict[tuple[Account, str], set[str]]
) -> Iterator[str]:
    for role in sorted(f for f in facts if isinstance(f, RoleGrant)):
        holder = "PUBLIC (every account on the server)" if role.account.public else str(role.account)
        yield (
            f"{holder} holds role {role.role_sql()} (its privileges reach the account whatever the "
            f"model decides); pushdown's account {me} may not revoke it (it would need the role WITH "
            f"ADMIN OPTION): revoke it by hand: REVOKE {role.role_sql()} FROM {role.account}"
        )
    grants = [f for f in facts if isinstance(f, Grant)]
    for (account, on), privileges in sorted(_grouped(grants).items()):
        privs = ", ".join(privileges)
        what = (
            "a global grant: it reaches every database"
            if on == "*.*"
            else "a wildcard grant: it reaches every database whose name matches"
        )
        needs = ", ".join(sorted(lacks[(account, on)], key=lambda p: (p == "GRANT OPTION", p)))
        yield (
            f"{account} holds {privs} on {on} ({what}, whatever the model decides); pushdown's account "
            f"{me} may not revoke it (it would need {needs} on {on}); revoke it by hand: "
            f"REVOKE {privs} ON {on} FROM {account}"
        )
