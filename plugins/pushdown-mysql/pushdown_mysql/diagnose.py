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


_ESCAPE, _ONE, _MANY = 0x5C, 0x5F, 0x25  # the bytes of ``\\``, ``_`` and ``%``


@lru_cache(maxsize=65536)
def pattern_covers(row: str, target: str) -> bool:
    """Whether a ``mysql.db`` row's pattern covers a database-level statement's target, as
    MariaDB judges a ``GRANT``/``REVOKE … ON `x`.*`` (which names a pattern, not a database).

    The rule, measured against the server (``test_mysql_first_pattern``: every pair of
    patterns of up to three characters over ``a``, ``b``, ``\\``, ``_``, ``%``, and of up to two
    tokens over letters, digits, a two-byte character, their escapes, ``\\\\``, a lone ``\\``,
    ``\\_`` and ``\\%``: 31,452 pairs, all agreeing). Both sides are UTF-8 bytes, compared
    left to right:

    - the row's escaped byte ``\\c`` wants ``\\c`` in the target (``\\a`` never covers ``a``,
      nor ``a`` ``\\a``); a plain byte wants the same byte; a trailing ``\\`` is a plain byte;
    - the row's ``_`` takes one byte of the target that is not ``%``, or an escape and the byte
      after it (one byte: ``_`` never covers a two-byte character);
    - the row's ``%`` first takes the target's ``%`` bytes, then each ``_`` and ``%`` that
      follows it in the row takes one byte or escape pair (a ``%`` here too: ``%__`` covers
      ``a%``) or a run of ``%``; a row that ends there covers whatever is left. Otherwise
      the next byte of the row is looked for, byte by byte, in the rest of the target, and
      the rest of the row matched from there: so a ``%`` may take an escape's ``\\`` alone
      (``%a`` covers ``\\a``).

    A NUL byte (no database name holds one) covers nothing."""
    want = row.encode("utf-8", "surrogatepass")
    have = target.encode("utf-8", "surrogatepass")
    if 0 in want or 0 in have:
        return False

    def one(j: int) -> int:
        """Past the target's token at ``j``: an escape pair, or one byte."""
        return j + 2 if have[j] == _ESCAPE and j + 1 < len(have) else j + 1

    @cache
    def match(i: int, j: int) -> bool:
        while i < len(want):
            b = want[i]
            if b == _MANY:
                return after_many(i + 1, j)
            if j == len(have):
                return False
            if b == _ONE:
                if have[j] == _MANY:
                    return False
                i, j = i + 1, one(j)
                continue
            if b == _ESCAPE and i + 1 < len(want):
                if have[j] != _ESCAPE or j + 1 == len(have):
                    return False
                i, j = i + 1, j + 1
            if want[i] != have[j]:
                return False
            i, j = i + 1, j + 1
        return j == len(have)

    def after_many(i: int, j: int) -> bool:
        while j < len(have) and have[j] == _MANY:
            j += 1
        while i < len(want) and want[i] in (_ONE, _MANY):
            if want[i] == _MANY:
                while j < len(have) and have[j] == _MANY:
                    j += 1
            elif j == len(have):
                return False
            else:
                j = one(j)
            i += 1
        if i == len(want):
            return True
        return any(have[k] == want[i] and match(i, k) for k in range(j, len(have)))

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
