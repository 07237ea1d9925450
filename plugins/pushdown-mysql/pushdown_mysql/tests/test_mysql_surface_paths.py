"""Grant rows whose principal can match a managed account's login, beyond the managed
account's own: roles granted TO PUBLIC (N3), routine and proxy grants (N4), the anonymous
user's rows and accounts (N5). Each is revoked where pushdown's account may, else reported
with the statement that closes it; the login shows the effect."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.facts import Account, Grant
from pushdown_mysql.readback import Dialect, parse_access, parse_global_priv, parse_users

from .world import PASSWORD, PUSHDOWN, World, admin

pytestmark = pytest.mark.mariadb
DIALECT = Dialect("mariadb")


@pytest.fixture
def crm(world: World, backend: MySQLBackend) -> Iterator[World]:
    """ann may read nothing in crm; its table `secret` holds what she must not see."""
    world.user("ann")
    world.schema("crm")
    world.table("crm", "secret")
    reconcile(backend, world.model, Scope.everything())
    yield world
    with admin(world.server) as cur:
        cur.execute("DROP ROLE IF EXISTS r_sal")
        cur.execute("DROP PROCEDURE IF EXISTS crm.get_sal")
        cur.execute("DROP FUNCTION IF EXISTS crm.count_sal")
        for host in ("%", "127.0.0.1", "localhost"):
            cur.execute("DROP USER IF EXISTS ''@%s", (host,))
        cur.execute("DELETE FROM mysql.roles_mapping WHERE User = 'PUBLIC'")
        cur.execute("DELETE FROM mysql.proxies_priv WHERE User LIKE 'pd\\_%'")
        cur.execute("FLUSH PRIVILEGES")


def _reads(world: World, sql: str, user: str = "pd_ann", password: str = PASSWORD) -> bool:
    with world.server.connect(user, password) as conn, conn.cursor() as cur:
        try:
            cur.execute(sql)
        except pymysql.err.MySQLError as exc:
            if exc.args[0] not in (1142, 1370, 1044):
                raise
            return False
        return True


def _by_hand(world: World, findings: tuple[str, ...], start: str) -> str:
    """The statement a finding says to run (after its last ``by hand: ``), run as an administrator."""
    (finding,) = [f for f in findings if start in f]
    statement = finding.rsplit("by hand: ", 1)[1]
    with admin(world.server) as cur:
        cur.execute(statement)
    return statement


def _run(world: World, *sql: str, args: Any = None) -> None:
    with admin(world.server) as cur:
        for s in sql:
            cur.execute(s, args)


def test_n3_role_granted_to_public_is_reported_or_revoked(crm: World, backend: MySQLBackend) -> None:
    """``GRANT r_sal TO PUBLIC``: every account holds the role's SELECT on crm.secret, active
    at login. It used to be read and dropped (an empty plan, no finding)."""
    _run(crm, "CREATE ROLE r_sal", "GRANT SELECT ON crm.secret TO r_sal", "GRANT r_sal TO PUBLIC")
    assert _reads(crm, "SELECT * FROM crm.secret")
    plan, _ = reconcile(backend, crm.model, Scope.everything())
    assert plan.ops == ()  # pushdown does not hold the role WITH ADMIN OPTION: reported
    assert _by_hand(crm, plan.findings, "holds role `r_sal`") == "REVOKE `r_sal` FROM PUBLIC"
    assert not _reads(crm, "SELECT * FROM crm.secret")

    _run(crm, "GRANT r_sal TO PUBLIC")
    _run(crm, "GRANT r_sal TO %s@'%%' WITH ADMIN OPTION", args=(PUSHDOWN,))
    plan, _ = reconcile(backend, crm.model, Scope.everything())
    assert [str(op) for op in plan.ops] == ["- ROLE `r_sal` TO PUBLIC"]
    assert not _reads(crm, "SELECT * FROM crm.secret")
    assert reconcile(backend, crm.model, Scope.everything())[0].ops == ()


def test_n4_routine_grant_is_reported(crm: World, backend: MySQLBackend) -> None:
    """EXECUTE on a definer-rights procedure (and function) reading crm.secret: ann reads it
    through CALL. ``mysql.procs_priv`` used to be never read."""
    _run(
        crm,
        "CREATE DEFINER=root@localhost PROCEDURE crm.get_sal() SQL SECURITY DEFINER SELECT * FROM crm.secret",
        "CREATE DEFINER=root@localhost FUNCTION crm.count_sal() RETURNS INT SQL SECURITY DEFINER "
        "RETURN (SELECT COUNT(*) FROM crm.secret)",
        "GRANT EXECUTE ON PROCEDURE crm.get_sal TO 'pd_ann'@'%'",
        "GRANT EXECUTE, ALTER ROUTINE ON FUNCTION crm.count_sal TO PUBLIC",
    )
    assert _reads(crm, "CALL crm.get_sal()") and _reads(crm, "SELECT crm.count_sal()")
    plan, _ = reconcile(backend, crm.model, Scope.everything())
    assert _by_hand(crm, plan.findings, "on PROCEDURE `crm`.`get_sal`") == (
        "REVOKE EXECUTE ON PROCEDURE `crm`.`get_sal` FROM 'pd_ann'@'%'"
    )
    _by_hand(crm, plan.findings, "on FUNCTION `crm`.`count_sal`")
    assert not _reads(crm, "CALL crm.get_sal()") and not _reads(crm, "SELECT crm.count_sal()")
    assert reconcile(backend, crm.model, Scope.everything())[0].findings == ()


def test_n4_proxy_grant_is_reported(crm: World, backend: MySQLBackend) -> None:
    """``GRANT PROXY ON root TO pd_ann``: ann may act as root through a proxying plugin.
    ``mysql.proxies_priv`` used to be never read."""
    _run(crm, "GRANT PROXY ON 'root'@'localhost' TO 'pd_ann'@'%'")
    # another account that may act as any user (the proxied user ''), pd_ann included
    _run(crm, "CREATE USER 'proxy_bob'@'%'", "GRANT PROXY ON ''@'%' TO 'proxy_bob'@'%'")
    try:
        plan, _ = reconcile(backend, crm.model, Scope.everything())
        statement = _by_hand(crm, plan.findings, "'pd_ann'@'%' holds PROXY ON 'root'@'localhost'")
        assert statement == "REVOKE PROXY ON 'root'@'localhost' FROM 'pd_ann'@'%'"
        statement = _by_hand(crm, plan.findings, "'proxy_bob'@'%' holds PROXY ON ''@'%'")
        assert statement == "REVOKE PROXY ON ''@'%' FROM 'proxy_bob'@'%'"
        assert reconcile(backend, crm.model, Scope.everything())[0].findings == ()
    finally:
        _run(crm, "DROP USER IF EXISTS 'proxy_bob'@'%'")


def test_n5_anonymous_database_row_is_revoked_or_reported(crm: World, backend: MySQLBackend) -> None:
    """A ``mysql.db`` row of ``''@'%'`` applies to every user name: ann, with her own password,
    read crm.secret. Rows of user ``''`` used to be never governed."""
    _run(crm, "CREATE USER ''@'%'", "GRANT SELECT ON crm.* TO ''@'%'", "GRANT SELECT ON `cr%`.* TO ''@'%'")
    assert _reads(crm, "SELECT * FROM crm.secret")
    plan, _ = reconcile(backend, crm.model, Scope.everything())
    assert [str(op) for op in plan.ops] == ["- SELECT ON `crm`.* TO ''@'%'"]
    # the wildcard row pushdown may not revoke: reported, with the statement
    statement = _by_hand(crm, plan.findings, "on `cr%`.* is granted to the anonymous account")
    assert statement == "REVOKE SELECT ON `cr%`.* FROM ''@'%'"
    assert not _reads(crm, "SELECT * FROM crm.secret")
    assert reconcile(backend, crm.model, Scope.everything())[0].ops == ()


def test_n5_anonymous_account_at_a_more_specific_host_is_reported(crm: World, backend: MySQLBackend) -> None:
    """``''@'127.0.0.1'`` is more specific than ``'pd_ann'@'%'``: a login as pd_ann from there
    is the anonymous account. The shadow check used to compare user names only."""
    _run(crm, "CREATE USER ''@'127.0.0.1'", "GRANT SELECT ON *.* TO ''@'127.0.0.1'")
    assert _reads(crm, "SELECT * FROM crm.secret", password="")  # pd_ann, no password: anonymous
    plan, _ = reconcile(backend, crm.model, Scope.everything())
    _by_hand(crm, plan.findings, "SELECT on *.* is granted to the anonymous account ''@'127.0.0.1'")
    assert _by_hand(crm, plan.findings, "the anonymous account ''@'127.0.0.1' shadows") == (
        "DROP USER ''@'127.0.0.1'"
    )
    assert not _reads(crm, "SELECT * FROM crm.secret")  # pd_ann with her password, herself again
    assert reconcile(backend, crm.model, Scope.everything())[0].findings == ()


def test_a_global_grant_to_public_is_reported(crm: World, backend: MySQLBackend) -> None:
    """``GRANT SELECT ON *.* TO PUBLIC`` (kept in ``mysql.user`` under the role PUBLIC): every
    login reads every table; pushdown's account may not revoke a global grant: reported."""
    _run(crm, "GRANT SELECT ON *.* TO PUBLIC")
    assert _reads(crm, "SELECT * FROM crm.secret")
    plan, _ = reconcile(backend, crm.model, Scope.everything())
    statement = _by_hand(crm, plan.findings, "SELECT on *.* is granted TO PUBLIC")
    assert statement == "REVOKE SELECT ON *.* FROM PUBLIC"
    assert not _reads(crm, "SELECT * FROM crm.secret")


def test_a_global_privilege_only_global_priv_holds_is_reported(crm: World, backend: MySQLBackend) -> None:
    """``SET USER`` (and the other admin privileges MariaDB 10.5+ added) has no column in the
    ``mysql.user`` view: only ``mysql.global_priv`` holds it. It used to be never read."""
    _run(crm, "GRANT SET USER, BINLOG ADMIN ON *.* TO 'pd_ann'@'%'")
    plan, _ = reconcile(backend, crm.model, Scope.everything())
    statement = _by_hand(crm, plan.findings, "'pd_ann'@'%' holds BINLOG ADMIN, SET USER on *.*")
    assert statement == "REVOKE BINLOG ADMIN, SET USER ON *.* FROM 'pd_ann'@'%'"
    assert reconcile(backend, crm.model, Scope.everything())[0].findings == ()


def test_global_priv_read_by_key_equals_the_user_view(crm: World) -> None:
    """MariaDB's accounts and global privileges come from one keyed read of
    ``mysql.global_priv``: the same accounts, roles and privileges as the ``mysql.user``
    view and the bits past its columns, for an account at two hosts, a role, the anonymous
    user and an account holding every global privilege."""
    _run(
        crm,
        "CREATE ROLE r_sal",
        "GRANT SELECT, RELOAD, SUPER, DELETE HISTORY, BINLOG MONITOR ON *.* TO r_sal",
        "CREATE USER 'pd_ann'@'localhost'",
        "GRANT PROCESS, SET USER, SLAVE MONITOR, GRANT OPTION ON *.* TO 'pd_ann'@'localhost'",
        "CREATE USER ''@'localhost'",
        "GRANT SHOW DATABASES, CREATE USER ON *.* TO ''@'localhost'",
    )
    names = frozenset({"pd_ann", "r_sal", "", PUSHDOWN, "root", "nobody"})
    columns = ", ".join(c for c, _ in DIALECT.user_columns())
    try:
        with admin(crm.server) as cur:
            sql, args = DIALECT.queries(names, frozenset({"crm"}), frozenset({"%"}))["mysql.global_priv"]
            cur.execute(sql, args)
            keyed = parse_global_priv(DIALECT, cur.fetchall())
            sql, args = DIALECT.queries()["mysql.global_priv"]
            cur.execute(sql, args)
            whole = parse_global_priv(DIALECT, [r for r in cur.fetchall() if r[0] in names])
            cur.execute(
                f"SELECT User, Host, is_role, {columns} FROM mysql.user WHERE User IN %s", (tuple(names),)
            )
            accounts, roles, grants = parse_users(DIALECT, cur.fetchall())
            cur.execute(
                "SELECT User, Host, JSON_VALUE(Priv, '$.access') FROM mysql.global_priv WHERE User IN %s",
                (tuple(names),),
            )
            grants |= parse_access(cur.fetchall())
    finally:
        _run(crm, "DROP USER IF EXISTS 'pd_ann'@'localhost'")
    assert keyed == whole == (accounts, roles, grants)
    assert Account("pd_ann", "localhost") in accounts and roles == {Account("r_sal", "")}
    assert Grant(Account("r_sal", ""), None, None, "DELETE HISTORY") in grants
    assert Grant(Account("pd_ann", "localhost"), None, None, "SET USER") in grants
    assert Grant(Account("", "localhost"), None, None, "CREATE USER") in grants
