"""A managed account's hand-made row mixing privileges pushdown may revoke with one it may
not (it holds only :data:`~pushdown_mysql.mapping.GRANTABLE` WITH GRANT OPTION): the
revocable ones must still go."""

from __future__ import annotations

import pytest

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin

pytestmark = pytest.mark.mariadb


@pytest.mark.parametrize("on", ["`crm`.`secret`", "`crm`.*"])
def test_a_revocable_privilege_beside_one_pushdown_may_not_revoke_is_revoked(
    world: World, backend: MySQLBackend, on: str
) -> None:
    world.user("ann")  # the model gives ann nothing
    world.schema("crm")
    world.table("crm", "secret")
    with admin(world.server) as cur:
        cur.execute(f"GRANT SELECT, TRIGGER ON {on} TO 'pd_ann'@'%'")
    plan, _ = reconcile(backend, world.model, Scope.everything())  # no error: TRIGGER is reported
    assert any(f"REVOKE TRIGGER ON {on} FROM 'pd_ann'@'%'" in f for f in plan.findings), plan.findings
    with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match="1142"):
            cur.execute("SELECT * FROM `crm`.`secret`")
    again, _ = reconcile(backend, world.model, Scope.everything())  # converged: nothing left to run
    assert not again.ops and again.findings == plan.findings


def test_a_deny_revokes_the_granted_privilege_beside_a_hand_made_one_pushdown_may_not_revoke(
    world: World, backend: MySQLBackend
) -> None:
    world.user("ann")
    world.schema("crm")
    world.table("crm", "secret")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("table c.crm.secret", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann"],
    )
    reconcile(backend, world.model, Scope.everything())
    with admin(world.server) as cur:
        cur.execute("GRANT TRIGGER ON `crm`.`secret` TO 'pd_ann'@'%'")
    world.role("deny", [("table c.crm.secret", "SELECT_TABLE", "DENY")], to=["ann"])
    plan, _ = reconcile(backend, world.model, Scope.everything())
    assert any("REVOKE TRIGGER ON `crm`.`secret`" in f for f in plan.findings), plan.findings
    with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match="1142"):
            cur.execute("SELECT * FROM `crm`.`secret`")


def test_a_column_privilege_pushdown_may_not_revoke_is_reported_and_the_others_revoked(
    world: World, backend: MySQLBackend
) -> None:
    """Column grants go one statement each; one pushdown's account may not revoke
    (``REFERENCES``, outside what it holds WITH GRANT OPTION) is reported, not refused every sync."""
    world.user("ann")  # the model gives ann nothing
    world.schema("crm")
    world.table("crm", "secret")
    with admin(world.server) as cur:
        cur.execute("GRANT SELECT (id), REFERENCES (id) ON `crm`.`secret` TO 'pd_ann'@'%'")
    plan, _ = reconcile(backend, world.model, Scope.everything())  # no PermanentBackendError
    assert any("REVOKE REFERENCES (`id`) ON `crm`.`secret` FROM 'pd_ann'@'%'" in f for f in plan.findings)
    with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match=r"1142|1143"):
            cur.execute("SELECT id FROM `crm`.`secret`")
    again, _ = reconcile(backend, world.model, Scope.everything())
    assert not again.ops


@pytest.mark.parametrize("accounts", [10, 100])
def test_what_pushdown_may_revoke_is_asked_once_per_object_and_privilege(
    accounts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every managed grant is checked (not only wildcard, global and role ones), so the check
    runs once per object and privilege, whatever the number of accounts holding it: counted
    at two estates ten times apart."""
    from pushdown_mysql import findings
    from pushdown_mysql.compile import ServerObjects
    from pushdown_mysql.facts import Account, Grant
    from pushdown_mysql.readback import Dialect, ServerRead

    me = Account("pushdown", "%")
    tables = [f"t{i}" for i in range(20)]
    own = {Grant(me, "crm", None, p) for p in ("SELECT", "GRANT OPTION")}
    held = {
        Grant(Account(f"pd_u{a}", "%"), "crm", t, p)
        for a in range(accounts)
        for t in tables
        for p in ("SELECT", "TRIGGER")
    }
    server = ServerRead(
        Dialect("mariadb"), me, ServerObjects(frozenset({"crm"}), frozenset(("crm", t) for t in tables)),
        frozenset({me, *(g.account for g in held)}), frozenset(), frozenset(own | held),
    )  # fmt: skip
    calls = [0]
    real = findings.revocable

    def counted(server: ServerRead, fact: object) -> tuple[str, ...]:
        calls[0] += 1
        return real(server, fact)  # type: ignore[arg-type]

    monkeypatch.setattr(findings, "revocable", counted)
    out, said = findings.stuck(server, held)
    assert out == {g for g in held if g.privilege == "TRIGGER"}  # SELECT stays a fact: revoked
    assert len(said) == accounts * len(tables)
    assert calls[0] == 2 * len(tables)  # per object and privilege, not per account


@pytest.mark.parametrize("on", ["`crm`.`secret`", "`crm`.*"])
def test_a_refused_revoke_of_several_privileges_still_revokes_the_ones_the_server_allows(
    world: World, backend: MySQLBackend, on: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were the check of what pushdown may revoke wrong, one REVOKE would name SELECT (which
    pushdown's account holds WITH GRANT OPTION) and TRIGGER (which it does not): the server
    refuses it whole. It is run again privilege by privilege: SELECT goes, TRIGGER is
    reported refused, alone."""
    from pushdown.errors import PermanentBackendError
    from pushdown_mysql import findings

    world.user("ann")  # the model gives ann nothing
    world.schema("crm")
    world.table("crm", "secret")
    with admin(world.server) as cur:
        cur.execute(f"GRANT SELECT, TRIGGER ON {on} TO 'pd_ann'@'%'")
    monkeypatch.setattr(findings, "revocable", lambda server, fact: ())  # a wrong pre-filter
    with pytest.raises(PermanentBackendError) as refused:
        reconcile(backend, world.model, Scope.everything(), retries=0)
    message = str(refused.value)
    assert f"REVOKE TRIGGER ON {on} FROM 'pd_ann'@'%'" in message, message
    assert "REVOKE SELECT" not in message, message
    assert "1 statement(s) refused; the other 1 of 2 operation(s) were applied" in message, message
    with admin(world.server) as cur:
        cur.execute("SHOW GRANTS FOR 'pd_ann'@'%'")
        shown = [row[0] for row in cur.fetchall()]
    assert any(f"GRANT TRIGGER ON {on} TO" in g for g in shown), shown  # refused: stays, reported
    assert not any("SELECT" in g for g in shown), shown  # allowed: revoked
