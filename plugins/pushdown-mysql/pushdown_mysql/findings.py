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
- grants on a managed account that pushdown's least-privileged account cannot revoke
  (it would need the privilege WITH GRANT OPTION at that level, or the role WITH ADMIN
  OPTION): wildcard (```s%`.*``), global (``*.*``) and role grants, and on a table or
  database a privilege outside :data:`~pushdown_mysql.mapping.GRANTABLE` (``TRIGGER``,
  ``EVENT``, ``SHOW VIEW``, …). Decided per privilege (:func:`stuck`): they are left out
  of the facts (so apply never tries and fails, and the privileges beside them that
  pushdown may revoke are revoked) and reported with the exact REVOKE to run. Where
  pushdown's account does hold what is needed, they stay facts and are revoked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from pushdown_mysql.diagnose import missing_for
from pushdown_mysql.facts import Account, ColumnGrant, Grant, RoleGrant, ServerFact, exact_db_name
from pushdown_mysql.quoting import quote_ident, quote_string
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
    if isinstance(fact, ColumnGrant):  # a table-level privilege is what revoking it takes
        fact = Grant(fact.account, fact.db, fact.table, fact.privilege)
    # a database-level fact carries its mysql.db pattern: the REVOKE names that pattern, and
    # the server judges it as a pattern (diagnose.pattern_covers), never as a database's name
    return missing_for(server, grant_statement("remove", [fact.account], [fact]))


def stuck(server: ServerRead, facts: Iterable[ServerFact]) -> tuple[frozenset[ServerFact], tuple[str, ...]]:
    """The managed facts pushdown may not revoke, and one finding per account and object.

    Decided per privilege, on every level: one REVOKE names every privilege an account
    loses on an object, and the server refuses it whole when pushdown's account lacks one
    of them (``TRIGGER``, ``EVENT``, ``SHOW VIEW``, … are outside
    :data:`~pushdown_mysql.mapping.GRANTABLE`). Left in the facts, such a privilege would
    make every sync fail on that statement and hold back the privileges beside it that
    pushdown may revoke; left out, those are revoked and it is reported."""
    out: set[ServerFact] = set()
    lacks: dict[tuple[Account, str], set[str]] = {}
    known: dict[object, tuple[str, ...]] = {}  # the answer depends on the object, not the account
    for fact in facts:
        if isinstance(fact, Grant | RoleGrant | ColumnGrant):
            key = (
                (fact.role, fact.role_host)
                if isinstance(fact, RoleGrant)
                else (fact.db, fact.table, fact.privilege)
            )
            missing = known.get(key)
            if missing is None:
                missing = known[key] = revocable(server, fact)
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
    grants = [f for f in facts if isinstance(f, Grant | ColumnGrant)]
    what = {(g.account, g.on()): _what(g) for g in grants}
    for (account, on), privileges in sorted(_grouped(grants).items()):
        privs = ", ".join(privileges)
        needs = ", ".join(sorted(lacks[(account, on)], key=lambda p: (p == "GRANT OPTION", p)))
        yield (
            f"{account} holds {privs} on {on} ({what[(account, on)]}whatever the model decides); "
            f"pushdown's account {me} may not revoke it (it would need {needs} on {on}); revoke it by hand: "
            f"REVOKE {privs} ON {on} FROM {account}"
        )


def _what(fact: Grant | ColumnGrant) -> str:
    """What a grant reaches beyond its object, for a finding (global and wildcard grants)."""
    if fact.db is None:
        return "a global grant: it reaches every database, "
    if isinstance(fact, Grant) and fact.table is None and exact_db_name(fact.db) is None:
        return "a wildcard grant: it reaches every database whose name matches, "
    return ""


def orphan(server: ServerRead, fact: ServerFact) -> bool:
    """A grant row whose account (or role) does not exist: written into a grant table by hand
    (or left behind by one), then loaded by ``FLUSH PRIVILEGES``. MariaDB and MySQL match
    ``mysql.db``, ``mysql.tables_priv`` and ``mysql.columns_priv`` rows by the login's user
    name and client host, not by account, so such a row still reaches a login (the
    anonymous user's ``''@'%'`` row every login). ``REVOKE`` cannot remove it: the server
    answers "no such grant" (1141) for an account that does not exist. ``server`` must be a
    read that holds the accounts of ``fact``'s user name (every full or scoped read does;
    a lean read-back does not)."""
    account = fact.account
    return not account.public and account not in server.accounts and account not in server.roles


def orphan_findings(server: ServerRead, facts: Iterable[ServerFact]) -> Iterator[str]:
    """One finding per orphan row (:func:`orphan`), with the statements that remove it.

    pushdown does not remove them itself: only ``DELETE`` on the grant tables and
    ``FLUSH PRIVILEGES`` (the ``RELOAD`` privilege) can, and an account holding those may
    rewrite any account's grants on the whole server, far past the least privileges
    pushdown needs (:mod:`pushdown_mysql.account`); so they are reported, never written."""
    rows: dict[tuple[Account, str, str], tuple[list[str], list[str]]] = {}
    for fact in sorted(facts, key=str):
        where, deletes = _orphan_row(server, fact)
        what = fact.role_sql() if isinstance(fact, RoleGrant) else fact.on()
        held, _ = rows.setdefault((fact.account, what, where), ([], deletes))
        held.append(f"role {what}" if isinstance(fact, RoleGrant) else _privilege(fact))
    for (account, on, where), (held, deletes) in sorted(rows.items()):
        yield (
            f"a row of {where} gives {', '.join(held)} on {on} to {account}, an account that does not "
            f"exist: the server matches that row by user name and client host, so it reaches a login "
            f"as {_login(account)} whatever the model decides, and REVOKE cannot remove it (1141: no "
            f"such grant); pushdown's account may not edit the grant tables: remove it by hand: "
            f"{'; '.join(deletes)}; FLUSH PRIVILEGES"
        )


def _login(account: Account) -> str:
    if account.user == ANONYMOUS:
        return f"any user from a host that matches {account.host!r}"
    return f"{account.user!r} from a host that matches {account.host!r}"


def _orphan_row(server: ServerRead, fact: ServerFact) -> tuple[str, list[str]]:
    """The grant table a fact is a row of, and the DELETEs that remove its row(s): one set per
    host as the rows spell it (the grant tables compare ``Host`` as bytes; the read lowers it)."""
    where, deletes = "", []
    for host in server.hosts_as_spelled(fact.account):
        where, more = _orphan_row_at(server, fact, host)
        deletes += more
    return where, deletes


def _orphan_row_at(server: ServerRead, fact: ServerFact, host: str) -> tuple[str, list[str]]:
    a = fact.account
    key = f"Host = {quote_string(host)} AND User = {quote_string(a.user)}"
    if isinstance(fact, RoleGrant):
        if server.dialect.mariadb:
            role = f"Role = {quote_string(fact.role)}"
            return "mysql.roles_mapping", [_delete("mysql.roles_mapping", f"{key} AND {role}")]
        edge = (
            f"TO_HOST = {quote_string(host)} AND TO_USER = {quote_string(a.user)} AND "
            f"FROM_USER = {quote_string(fact.role)} AND FROM_HOST = {quote_string(fact.role_host)}"
        )
        return "mysql.role_edges", [_delete("mysql.role_edges", edge)]
    if isinstance(fact, Grant) and fact.db is None:  # MySQL 8's dynamic privileges
        dynamic = f"HOST = {quote_string(host)} AND USER = {quote_string(a.user)}"
        return "mysql.global_grants", [_delete("mysql.global_grants", dynamic)]
    db = f"Db = {quote_string(fact.db or '')}"
    if isinstance(fact, Grant) and fact.table is None:
        return "mysql.db", [_delete("mysql.db", f"{key} AND {db}")]
    table = f"{key} AND {db} AND Table_name = {quote_string(fact.table or '')}"
    where = "mysql.columns_priv" if isinstance(fact, ColumnGrant) else "mysql.tables_priv"
    # a table's row and its column rows go together (the table row names the column ones)
    return where, [
        _delete("mysql.tables_priv", table),
        _delete("mysql.columns_priv", table),
    ]


def _delete(table: str, where: str) -> str:
    """A statement shown to a person in a finding (never run by pushdown); values are
    string literals (:func:`~pushdown_mysql.quoting.quote_string`)."""
    return f"DELETE FROM {table} WHERE {where}"  # noqa: S608 - shown, never run
