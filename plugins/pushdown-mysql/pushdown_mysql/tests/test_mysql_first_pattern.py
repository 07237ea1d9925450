"""What pushdown may revoke on a database, judged as the server judges it: MariaDB takes a
login's database privileges from the first ``mysql.db`` row whose pattern matches (the
most specific), never from the union of every matching row. A privilege held WITH GRANT
OPTION only through a less specific pattern does not let pushdown revoke it there."""

from __future__ import annotations

import pytest

from pushdown_mysql.facts import Account, Grant
from pushdown_mysql.findings import revocable
from pushdown_mysql.readback import Dialect, ServerObjects, ServerRead

from .world import World, admin

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


@pytest.mark.xfail(
    strict=True,
    reason="diagnose.pattern_matches matches pushdown's exact `a\\_b` row against the wildcard "
    "`a_b` as a name; the server matches a pattern's wildcards only with wildcards",
)
def test_revocable_agrees_with_the_server_on_a_wildcard_over_an_exact_grant(world: World) -> None:
    with admin(world.server) as cur:
        for a in (GRANTER, VICTIM):
            cur.execute(f"DROP USER IF EXISTS {a.sql()}")
            cur.execute(f"CREATE USER {a.sql()} IDENTIFIED BY 'granter-secret'")
        cur.execute(f"GRANT SELECT ON `a\\_b`.* TO {GRANTER.sql()} WITH GRANT OPTION")
        cur.execute(f"GRANT SELECT ON `a_b`.* TO {VICTIM.sql()}")
    try:
        with world.server.connect("pd_granter", "granter-secret") as conn, conn.cursor() as cur:
            try:
                cur.execute(f"REVOKE SELECT ON `a_b`.* FROM {VICTIM.sql()}")
                server_allows = True
            except Exception:  # refused: the wildcard reaches databases the exact row does not
                server_allows = False
        own = frozenset(
            {Grant(GRANTER, "a\\_b", None, "SELECT"), Grant(GRANTER, "a\\_b", None, "GRANT OPTION")}
        )
        fact = Grant(VICTIM, "a_b", None, "SELECT")
        server = ServerRead(
            Dialect("mariadb"), GRANTER, ServerObjects(frozenset(), frozenset()),
            frozenset({GRANTER, VICTIM}), frozenset(), own | {fact},
        )  # fmt: skip
        assert (revocable(server, fact) == ()) == server_allows, (revocable(server, fact), server_allows)
    finally:
        with admin(world.server) as cur:
            for a in (GRANTER, VICTIM):
                cur.execute(f"DROP USER IF EXISTS {a.sql()}")
