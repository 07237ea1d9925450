"""What pushdown may revoke on a database, judged as the server judges it: MariaDB takes a
login's database privileges from the first ``mysql.db`` row whose pattern matches (the
most specific), never from the union of every matching row. A privilege held WITH GRANT
OPTION only through a less specific pattern does not let pushdown revoke it there."""

from __future__ import annotations

import itertools

import pytest

from pushdown.model import changes as ch
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.diagnose import pattern_covers
from pushdown_mysql.facts import Account, Grant
from pushdown_mysql.findings import revocable
from pushdown_mysql.readback import Dialect, ServerObjects, ServerRead

from .world import World, admin, do, held

pytestmark = pytest.mark.mariadb

GRANTER = Account("pd_granter", "%")
VICTIM = Account("pd_victim", "%")


def test_revocable_agrees_with_the_server_on_overlapping_patterns(world: World) -> None:
    world.schema("crm")
    with admin(world.server) as cur:
        for a in (GRANTER, VICTIM):
            cur.execute(f"DROP USER IF EXISTS {a.sql()}")
            cur.execute(f"CREATE USER {a.sql()} IDENTIFIED BY 'granter-secret'")
        cur.execute(f"GRANT INSERT ON `c%`.* TO {GRANTER.sql()} WITH GRANT OPTION")
        cur.execute(f"GRANT SELECT ON `cr%`.* TO {GRANTER.sql()} WITH GRANT OPTION")
        cur.execute(f"GRANT INSERT ON `crm`.* TO {VICTIM.sql()}")
    try:
        with world.server.connect("pd_granter", "granter-secret") as conn, conn.cursor() as cur:
            try:
                cur.execute(f"REVOKE INSERT ON `crm`.* FROM {VICTIM.sql()}")
                server_allows = True
            except Exception:  # the server refuses (1044): `cr%` is the row it uses for crm
                server_allows = False
        own = frozenset(
            {
                Grant(GRANTER, "c%", None, "INSERT"),
                Grant(GRANTER, "c%", None, "GRANT OPTION"),
                Grant(GRANTER, "cr%", None, "SELECT"),
                Grant(GRANTER, "cr%", None, "GRANT OPTION"),
            }
        )
        fact = Grant(VICTIM, "crm", None, "INSERT")
        server = ServerRead(
            Dialect("mariadb"), GRANTER, ServerObjects(frozenset({"crm"}), frozenset()),
            frozenset({GRANTER, VICTIM}), frozenset(), own | {fact},
        )  # fmt: skip
        assert (revocable(server, fact) == ()) == server_allows, (revocable(server, fact), server_allows)
    finally:
        with admin(world.server) as cur:
            for a in (GRANTER, VICTIM):
                cur.execute(f"DROP USER IF EXISTS {a.sql()}")


def _server_allows(world: World, row: str, target: str) -> bool:
    """Whether pushdown's account, holding SELECT WITH GRANT OPTION on the pattern ``row``
    only, may ``REVOKE SELECT ON `target`.*`` from another account (asked of the server)."""
    with admin(world.server) as cur:
        for a in (GRANTER, VICTIM):
            cur.execute(f"DROP USER IF EXISTS {a.sql()}")
            cur.execute(f"CREATE USER {a.sql()} IDENTIFIED BY 'granter-secret'")
        cur.execute(f"GRANT SELECT ON `{row}`.* TO {GRANTER.sql()} WITH GRANT OPTION")
        cur.execute(f"GRANT SELECT ON `{target}`.* TO {VICTIM.sql()}")
    try:
        with world.server.connect("pd_granter", "granter-secret") as conn, conn.cursor() as cur:
            try:
                cur.execute(f"REVOKE SELECT ON `{target}`.* FROM {VICTIM.sql()}")
            except Exception:  # refused (1044): the row does not cover the target
                return False
        with admin(world.server) as cur:  # the server did revoke it
            cur.execute("SELECT COUNT(*) FROM mysql.db WHERE User = 'pd_victim' AND Db = %s", (target,))
            assert cur.fetchone()[0] == 0
        return True
    finally:
        with admin(world.server) as cur:
            for a in (GRANTER, VICTIM):
                cur.execute(f"DROP USER IF EXISTS {a.sql()}")


def _revocable(row: str, target: str) -> bool:
    own = frozenset({Grant(GRANTER, row, None, "SELECT"), Grant(GRANTER, row, None, "GRANT OPTION")})
    fact = Grant(VICTIM, target, None, "SELECT")
    server = ServerRead(
        Dialect("mariadb"), GRANTER, ServerObjects(frozenset(), frozenset()),
        frozenset({GRANTER, VICTIM}), frozenset(), own | {fact},
    )  # fmt: skip
    return revocable(server, fact) == ()


def test_revocable_agrees_with_the_server_on_a_wildcard_over_an_exact_grant(world: World) -> None:
    """pushdown holds the exact database ``a_b`` (stored escaped); a victim holds the wildcard
    ``a_b``, which reaches ``axb`` too: the server refuses the REVOKE, so pushdown must not
    send it (a refused statement would hold back the narrowings beside it)."""
    assert _server_allows(world, "a\\_b", "a_b") is False
    assert _revocable("a\\_b", "a_b") is False


#: mysql.db patterns as the server stores them: an exact name with ``_`` or ``%`` (escaped),
#: a plain name, wildcards ``_`` and ``%``, and a backslash in a name (escaped too).
PATTERNS = ("a\\_b", "a\\%b", "axb", "a_b", "a%", "a%b", "%", "a\\\\b")


@pytest.mark.parametrize("target", PATTERNS)
@pytest.mark.parametrize("row", PATTERNS)
def test_revocable_agrees_with_the_server_on_every_pattern_pair(world: World, row: str, target: str) -> None:
    """Experiment table: pushdown's account holds one database pattern WITH GRANT OPTION,
    another account holds SELECT on another; ``revocable()`` says what the server does."""
    allows = _server_allows(world, row, target)
    assert _revocable(row, target) == allows, (row, target, allows)


def test_a_wildcard_grant_over_a_governed_exact_name_is_reported_and_the_narrowing_beside_it_applied(
    world: World, backend: MySQLBackend
) -> None:
    """pushdown governs the database ``a_b`` (its row is the exact ``a\\_b``); ann holds the
    wildcard ``a_b`` by hand, which reaches ``axb`` too. Its REVOKE would be refused: it is
    reported with the statement to run, and ann's narrowing on crm goes through."""
    world.user("ann")
    world.schema("a_b")
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("table c.crm.orders", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann"],
    )
    reconcile(backend, world.model, Scope.everything())
    with admin(world.server) as cur:
        cur.execute("GRANT SELECT ON `a_b`.* TO 'pd_ann'@'%'")
    try:
        do(world.model, ch.delete_role(world.model, "reader"))
        plan, applied = reconcile(backend, world.model, Scope.everything(), retries=0)
        assert applied
        assert [str(op) for op in plan.ops] == ["- SELECT ON `crm`.`orders` TO 'pd_ann'@'%'"]
        assert any("`a_b`.*" in f and "REVOKE" in f for f in plan.findings), plan.findings
        assert not any("crm" in str(f) for f in held(backend))
    finally:
        with admin(world.server) as cur:
            cur.execute("REVOKE ALL PRIVILEGES ON `a_b`.* FROM 'pd_ann'@'%'")


#: Hostile pairs: UTF-8 names (the server compares bytes: a row's ``_`` is one byte, never a
#: two-byte character), a trailing backslash, an empty target, case, runs of ``%``.
HOSTILE = (
    ("_", "é"), ("a_", "aé"), ("é", "é"), ("_é", "xé"), ("%_", "ab"), ("%_", "a_"), ("%", ""),
    ("%", "%"), ("a\\", "a\\"), ("a%", "a\\"), ("\\%", "%"), ("%", "\\%"), ("A%", "ab"),
    ("a%", "AB"), ("%%", "ab"), ("%%_", "ab"), ("_%", "é"), ("%\\_", "a\\_"),
    # an escaped ordinary character is not the plain one, except that a ``%`` may take the
    # escape's backslash alone (``%a`` covers ``\\a``)
    ("%a", "\\a"), ("a", "\\a"), ("\\a", "a"), ("\\a", "\\a"), ("_", "\\a"), ("%a", "b\\a"),
    ("\\1", "1"), ("1", "\\1"), ("%1", "\\1"), ("\\1", "\\1"), ("\\é", "é"), ("é", "\\é"),
    ("%é", "\\é"), ("_", "\\é"), ("\\é", "\\é"), ("\\\\", "\\"), ("\\", "\\\\"), ("%\\", "a\\\\"),
    ("_", "\\\\"), ("%", "\\"), ("_", "\\"), ("a\\", "a\\\\"), ("a\\\\", "a\\"), ("%\\", "a\\"),
    # after ``%`` the server takes a ``%`` of the target for the row's ``_``
    ("%__", "a%"), ("%_", "%"),
)  # fmt: skip


@pytest.mark.parametrize(("row", "target"), HOSTILE)
def test_revocable_agrees_with_the_server_on_hostile_patterns(world: World, row: str, target: str) -> None:
    allows = _server_allows(world, row, target)
    assert _revocable(row, target) == allows, (row, target, allows)


def _server_table(world: World, rows: list[str], targets: list[str]) -> dict[tuple[str, str], bool]:
    """What the server answers for every ``(row, target)``: pushdown's account holds SELECT WITH
    GRANT OPTION on the pattern ``row`` only and REVOKEs SELECT on ``target`` from another
    account (one granter per row, one statement per target: 1044 is a refusal)."""
    out: dict[tuple[str, str], bool] = {}
    with admin(world.server) as cur:
        cur.execute(f"DROP USER IF EXISTS {VICTIM.sql()}")
        cur.execute(f"CREATE USER {VICTIM.sql()}")
        try:
            for row in rows:
                cur.execute(f"DROP USER IF EXISTS {GRANTER.sql()}")
                cur.execute(f"CREATE USER {GRANTER.sql()} IDENTIFIED BY 'granter-secret'")
                cur.execute(f"GRANT SELECT ON `{row}`.* TO {GRANTER.sql()} WITH GRANT OPTION")
                with world.server.connect("pd_granter", "granter-secret") as conn, conn.cursor() as mine:
                    for target in targets:
                        cur.execute(f"GRANT SELECT ON `{target}`.* TO {VICTIM.sql()}")
                        try:
                            mine.execute(f"REVOKE SELECT ON `{target}`.* FROM {VICTIM.sql()}")
                            out[row, target] = True
                        except Exception as exc:
                            assert exc.args[0] == 1044, exc  # refused, nothing else
                            out[row, target] = False
                            cur.execute(f"REVOKE SELECT ON `{target}`.* FROM {VICTIM.sql()}")
                        cur.execute("SELECT COUNT(*) FROM mysql.db WHERE User = 'pd_victim'")
                        assert cur.fetchone()[0] == 0  # revoked (by pushdown's account or after)
        finally:
            for a in (GRANTER, VICTIM):
                cur.execute(f"DROP USER IF EXISTS {a.sql()}")
    return out


def _spelled(alphabet: list[str], most: int) -> list[str]:
    return ["".join(p) for k in range(1, most + 1) for p in itertools.product(alphabet, repeat=k)]


@pytest.mark.parametrize(
    ("rows", "targets"),
    [
        # every pattern of up to two characters over a letter, the escape and the wildcards,
        # against every one of up to three over two letters, the escape and the wildcards
        (_spelled(["a", "\\", "_", "%"], 2), _spelled(["a", "b", "\\", "_", "%"], 3)),
        # escapes of a letter, a digit, a two-byte character, of ``\\`` and of the wildcards
        (_spelled(["a", "1", "é", "\\a", "\\1", "\\é", "\\\\", "_", "%", "\\"], 2),
         _spelled(["a", "\\a", "1", "\\1", "é", "\\é", "\\\\", "\\_", "%", "\\"], 2)),
    ],
    ids=["wildcards", "escapes"],
)  # fmt: skip
def test_pattern_covers_agrees_with_the_server_on_every_short_pattern_pair(
    world: World, rows: list[str], targets: list[str]
) -> None:
    """Wherever the two differ, a REVOKE pushdown sends would be refused (it holds back the
    narrowing beside it) or one the server allows would be reported instead of sent."""
    table = _server_table(world, rows, targets)
    wrong = {pair: allows for pair, allows in table.items() if pattern_covers(*pair) != allows}
    assert not wrong, (len(wrong), sorted(wrong.items())[:20])
