"""Name the privilege pushdown's own account lacks when the server refuses a statement.

To grant or revoke a privilege on an object, MySQL wants the granter to hold that
privilege on the object (globally, through a database pattern, or on the table)
together with GRANT OPTION at the same level. The snapshot read before apply holds
pushdown's own grant rows, so the missing ones can be named.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from pushdown_mysql.facts import Account, Grant
from pushdown_mysql.readback import ServerRead
from pushdown_mysql.statements import Statement


@lru_cache(maxsize=65536)
def pattern_matches(pattern: str, db: str) -> bool:
    """MySQL's database-pattern match: ``_`` one character, ``%`` any run, ``\\`` escapes."""
    regex = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            regex.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        regex.append("." if ch == "_" else ".*" if ch == "%" else re.escape(ch))
        i += 1
    return re.fullmatch("".join(regex), db, flags=re.DOTALL) is not None


def _tokens(pattern: str) -> list[tuple[str, int]]:
    """A pattern as written, byte by byte in UTF-8 (the server compares bytes: its ``_``
    takes one byte, never a whole multibyte character): ``("esc", b)`` for ``\\b``,
    ``("one", "_")``, ``("many", "%")``, ``("lit", b)`` for any other byte."""
    raw = pattern.encode("utf-8", "surrogatepass")
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(raw):
        b = raw[i]
        if b == 0x5C and i + 1 < len(raw):  # backslash
            out.append(("esc", raw[i + 1]))
            i += 2
            continue
        out.append(("one" if b == 0x5F else "many" if b == 0x25 else "lit", b))
        i += 1
    return out


@lru_cache(maxsize=65536)
def pattern_covers(row: str, target: str) -> bool:
    """Whether a ``mysql.db`` row's pattern covers a database-level statement's target.

    ``GRANT``/``REVOKE … ON `x`.*`` names a pattern, not a database: the server matches
    the row against the target *as written*, so a wildcard in the target is matched only by
    a wildcard in the row (an exact row never covers a wildcard target, which reaches
    databases the row does not). Found by experiment against MariaDB
    (``test_mysql_first_pattern``): a row's escaped character matches the same escaped
    character only, a plain one the same plain one; a row's ``_`` matches one token of the
    target other than ``%`` (a plain or escaped byte, or ``_``); a row's ``%`` any run of
    tokens. Bytes, not characters: a row's ``_`` does not cover a multibyte character.
    Known narrower than the server: after a ``%`` the server may match a row's plain
    character against the target's escaped one (``%a`` covers ``\\a``); that is answered
    "not covered" (the statement is reported instead of sent)."""
    want, have = _tokens(row), _tokens(target)

    @cache
    def match(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(have)
        kind, ch = want[i]
        if kind == "many":
            return any(match(i + 1, k) for k in range(j, len(have) + 1))
        if j == len(have):
            return False
        if kind == "one":
            return have[j][0] != "many" and match(i + 1, j + 1)
        return have[j] == (kind, ch) and match(i + 1, j + 1)

    return match(0, 0)


def _levels(own: frozenset[Grant], db: str | None, table: str | None) -> list[set[str]]:
    """The privilege sets pushdown holds at each level that covers ``db.table`` (``db`` a
    database's name when ``table`` is given, the statement's pattern otherwise).

    The server takes a login's database privileges from one ``mysql.db`` row: the first whose
    pattern matches, in its own order (the most specific first), never the union of them.
    Only what every matching row holds is counted, so whichever row the server picks holds
    it (narrower than the server when the rows differ: then pushdown reports, never writes)."""
    levels = [{g.privilege for g in own if g.db is None}]
    if db is not None:
        patterns = {g.db for g in own if g.db is not None and g.table is None}
        matching = [
            {g.privilege for g in own if g.db == p and g.table is None}
            for p in patterns
            if (pattern_covers(str(p), db) if table is None else pattern_matches(str(p), db))
        ]
        if matching:
            levels.append(set.intersection(*matching))
        if table is not None:
            levels.append({g.privilege for g in own if g.db == db and g.table == table})
    return levels


def missing_for(snap: ServerRead, statement: Statement) -> tuple[str, ...]:
    """What pushdown lacks to run ``statement``: its privileges, and ``GRANT OPTION``."""
    own = snap.own_grants
    levels = _levels(own, statement.db, statement.table)
    held = set().union(*levels)
    missing = [p for p in statement.privileges if p not in held and p != "ROLE"]
    if not any("GRANT OPTION" in lv for lv in levels):
        missing.append("GRANT OPTION")
    return tuple(missing)


#: Refusals MariaDB words like a failed login although the connection is fine
#: (1045 for a global REVOKE, 1698 for a role).
LOOKS_LIKE_LOGIN = frozenset({1045, 1698})


def refusal(snap: ServerRead | None, me: Account, statement: Statement, code: int) -> str:
    """Why the server refused ``statement``, in words a person can act on."""
    aside = (
        " (the server words this like a failed login, but pushdown is connected: it is a refusal)"
        if code in LOOKS_LIKE_LOGIN
        else ""
    )
    if "ROLE" in statement.privileges:
        return (
            f"pushdown's account {me} may not change role {statement.on} (it would need the role WITH "
            f"ADMIN OPTION); do it by hand: {statement.display()}{aside}; "
        )
    missing = missing_for(snap, statement) if snap is not None else ()
    lacks = ", ".join(missing) or "a privilege"
    needs = ", ".join(statement.privileges)
    return (
        f"pushdown's account {me} lacks {lacks} on {statement.on} (to change {needs} there it "
        f"needs each of them WITH GRANT OPTION){aside}; "
    )
