"""MySQL/MariaDB in the hostile environment (:mod:`tests.adversary`), on a real MariaDB.

Each history draws a name mapping (:data:`tests.adversary.MAPPINGS`: identity, lower,
realm, two users colliding on one account), grants, DENYs and owners on registered,
unregistered, capitalised and case-twin objects, removals and returns of users, the
group and roles, tables created and dropped in the model and on the server, tables
created on the server only (``outside``: found by the backend's own discovery, as the
dispatcher would), and hand-made state between syncs (:data:`HAND`, played as an
administrator on the account a pool user maps to): a table grant, a grant WITH GRANT
OPTION, a database grant, a column grant, a role with a default role, a grant ``TO
PUBLIC``, a grant on a table the model denies, a second account with the same user name
at a more specific host (a login from 127.0.0.1 is that account). A hand step is followed
by a sync scoped to what it touched.

After every scoped sync and after the full sync that follows, every user of the pool
(removed ones too) is checked through the account it maps to: what the server enforces
(:mod:`.enforced`: the grant tables read as an administrator with MariaDB's own rules,
proven on every :data:`LOGIN_EVERY`-th check to cover all that logging in and trying finds) against the
evaluator, per privilege and table, and per database for the database-level rights
(a database-level privilege is allowed when the operation is allowed on every table the
model names there and on a table nobody named yet). 0 wider is required.

Not drawn: external group resolution (MySQL has no groups: pushdown expands them to
users, so no host resolves them); hand-made state pushdown's least-privileged account may
not undo (global and wildcard grants, roles without ADMIN OPTION, a shadowing account at
another host): it is reported as a finding, never changed (test_mysql_narrowing,
test_hardening_guards).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.mariadb import LocalMariaDB

from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.account import govern_database
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.surface import ENTRIES, NOT_DRAWN
from tests.adversary import MAPPINGS, Tally, compare, histories, hostile_steps, mapping_names, model_changes
from tests.builders import Builder

from .adversary_world import Checker, close_admins, reset_server
from .adversary_world import _cursor as cursor
from .world import PASSWORD, PREFIX, PUSHDOWN, admin, backend_for, q

pytestmark = pytest.mark.mariadb

USERS = ("u1", "u2", "U3")
ROLES = ("r1", "r2")
SCHEMAS = ("s1", "s2")
TABLES = ("a", "b", "Secret", "zz")
BASE = (("s1", "a"), ("s2", "b"))
OBJECTS = ("catalog c", *(f"schema c.{s}" for s in SCHEMAS), "table c.s1.a", "table c.s2.b")
UNREGISTERED = ("table c.s1.Secret", "table c.s1.A", "table c.s2.zz", "schema c.S1", "table c.s3.x")
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE")

Hand = Callable[[Any, str], None]
NO_SUCH_TABLE = 1146


def _grant(sql: str, suffix: str = "") -> Hand:
    return lambda cur, user: cur.execute(sql.replace("%", "%%") + " TO %s@'%%'" + suffix, (user,))


def _role(cur: Any, user: str) -> None:
    cur.execute("CREATE ROLE IF NOT EXISTS adv_hr")
    cur.execute("GRANT SELECT, UPDATE ON `s1`.* TO adv_hr")
    cur.execute("GRANT adv_hr TO %s@'%%'", (user,))
    cur.execute("GRANT adv_hr TO %s@'%%' WITH ADMIN OPTION", (PUSHDOWN,))  # so pushdown may revoke it
    cur.execute("SET DEFAULT ROLE adv_hr FOR %s@'%%'", (user,))


def _nested_role(cur: Any, user: str) -> None:
    """A role holding a role that holds the privilege; held WITH ADMIN OPTION by the user."""
    cur.execute("CREATE ROLE IF NOT EXISTS adv_inner")
    cur.execute("CREATE ROLE IF NOT EXISTS adv_outer")
    cur.execute("GRANT SELECT, DELETE ON `s2`.* TO adv_inner")
    cur.execute("GRANT adv_inner TO adv_outer")
    cur.execute("GRANT adv_outer TO %s@'%%' WITH ADMIN OPTION", (user,))
    cur.execute("GRANT adv_outer TO %s@'%%' WITH ADMIN OPTION", (PUSHDOWN,))


def _public_role(admin: bool) -> Hand:
    """A role granted TO PUBLIC (active at every login); pushdown may revoke it or not."""
    role = "adv_pub" if admin else "adv_pub_kept"

    def hand(cur: Any, user: str) -> None:
        cur.execute(f"CREATE ROLE IF NOT EXISTS {role}")
        cur.execute(f"GRANT SELECT, UPDATE ON `s1`.* TO {role}")
        cur.execute(f"GRANT {role} TO PUBLIC")
        if admin:
            cur.execute(f"GRANT {role} TO %s@'%%' WITH ADMIN OPTION", (PUSHDOWN,))

    return hand


def _shadow(cur: Any, user: str) -> None:
    """The same user name at a more specific host: a login from 127.0.0.1 is that account."""
    cur.execute("CREATE USER IF NOT EXISTS %s@'127.0.0.1' IDENTIFIED BY %s", (user, PASSWORD))
    cur.execute("GRANT SELECT, UPDATE ON `s2`.* TO %s@'127.0.0.1'", (user,))


def _shadow_at(host: str, on: str) -> Hand:
    def hand(cur: Any, user: str) -> None:
        cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", (user, host, PASSWORD))
        cur.execute(f"GRANT SELECT, UPDATE ON {on} TO %s@%s", (user, host))

    return hand


def _anonymous(host: str, sql: str) -> Hand:
    """The anonymous user at ``host`` (its database rows match every user name)."""

    def hand(cur: Any, user: str) -> None:
        cur.execute("CREATE USER IF NOT EXISTS ''@%s", (host,))
        cur.execute(sql.replace("%", "%%") + " TO ''@%s", (host,))

    return hand


def _routine(kind: str, db: str, to_public: bool, privileges: str = "EXECUTE") -> Hand:
    """A definer-rights routine, and a grant on it to the user's account (WITH GRANT OPTION)
    or to PUBLIC."""
    name = "adv_p" if kind == "PROCEDURE" else "adv_f"
    body = "() " + ("" if kind == "PROCEDURE" else "RETURNS INT ") + "SQL SECURITY DEFINER "
    body += "SELECT 1" if kind == "PROCEDURE" else "RETURN 1"

    def hand(cur: Any, user: str) -> None:
        cur.execute(f"CREATE {kind} IF NOT EXISTS {q(db)}.{name}{body}")
        on = f"{privileges} ON {kind} {q(db)}.{name} TO "
        if to_public:
            cur.execute(f"GRANT {on}PUBLIC")
        else:
            cur.execute(f"GRANT {on}%s@'%%' WITH GRANT OPTION", (user,))

    return hand


def _other(cur: Any, user: str) -> None:
    """An account outside the fence, with grants of its own: pushdown leaves it alone."""
    cur.execute("CREATE USER IF NOT EXISTS adv_other@'%%' IDENTIFIED BY %s", (PASSWORD,))
    cur.execute("GRANT SELECT ON `s1`.* TO adv_other@'%'")


def _public(cur: Any, user: str) -> None:
    cur.execute("GRANT SELECT ON `s1`.`a` TO PUBLIC")


def _on_secret(cur: Any, user: str) -> None:
    cur.execute("CREATE TABLE IF NOT EXISTS `s1`.`Secret` (id INT) ENGINE=MEMORY")
    cur.execute("GRANT SELECT, DROP ON `s1`.`Secret` TO %s@'%%'", (user,))


#: hand-made state, one or more per entry of the authorization surface (``surface.ENTRIES``)
#: MariaDB can hold: (what, how, the object a sync must look at afterwards, surface keys)
HAND: tuple[tuple[str, Hand, str, tuple[str, ...]], ...] = (
    ("table grant", _grant("GRANT SELECT, INSERT, ALTER ON `s1`.`a`"), "table c.s1.a",
     ("table.tables_priv", "principal.named")),
    ("grant option", _grant("GRANT SELECT ON `s1`.`a`", " WITH GRANT OPTION"), "table c.s1.a",
     ("modifier.grant_option",)),
    ("database grant", _grant("GRANT SELECT, DELETE, DROP ON `s2`.*"), "schema c.s2", ("table.db",)),
    ("column grant", _grant("GRANT SELECT (id), UPDATE (id) ON `s2`.`b`"), "table c.s2.b",
     ("table.columns_priv", "modifier.column")),
    ("role", _role, "catalog c",
     ("table.roles_mapping", "principal.role", "table.default_roles", "table.global_priv")),
    ("PUBLIC", _public, "table c.s1.a", ("principal.public",)),
    ("grant on a denied table", _on_secret, "table c.s1.Secret", ("table.tables_priv",)),
    ("shadowing account", _shadow, "schema c.s2", ("principal.specific_host",)),
    ("nested role WITH ADMIN OPTION", _nested_role, "catalog c", ("principal.role", "modifier.admin_option")),
    ("role TO PUBLIC", _public_role(admin=True), "catalog c", ("principal.public", "table.roles_mapping")),
    ("role TO PUBLIC, kept", _public_role(admin=False), "catalog c", ("principal.public",)),
    ("shadow at localhost", _shadow_at("localhost", "`s1`.*"), "catalog c", ("principal.localhost",)),
    ("shadow at a pattern", _shadow_at("127.0.0.%", "`s1`.*"), "catalog c",
     ("principal.wildcard_host", "principal.specific_host")),
    ("anonymous database row", _anonymous("%", "GRANT SELECT, DELETE ON `s2`.*"), "catalog c",
     ("principal.anonymous", "table.db")),
    ("anonymous table row", _anonymous("%", "GRANT SELECT ON `s1`.`a`"), "catalog c",
     ("principal.anonymous", "table.tables_priv")),
    ("anonymous wildcard row", _anonymous("%", "GRANT SELECT ON `s%`.*"), "catalog c",
     ("principal.anonymous", "modifier.database_pattern")),
    ("anonymous at a nearer host", _anonymous("127.0.0.1", "GRANT SELECT, INSERT ON *.*"), "catalog c",
     ("principal.anonymous", "principal.specific_host", "table.user")),
    ("procedure EXECUTE", _routine("PROCEDURE", "s1", to_public=False), "catalog c",
     ("table.procs_priv", "modifier.routine_kind")),
    ("function TO PUBLIC", _routine("FUNCTION", "s2", True, "EXECUTE, ALTER ROUTINE"), "catalog c",
     ("table.procs_priv", "modifier.routine_kind", "principal.public")),
    ("proxy", _grant("GRANT PROXY ON 'root'@'localhost'"), "catalog c", ("table.proxies_priv",)),
    ("global grant", _grant("GRANT SELECT, SUPER, FILE, PROCESS, CREATE USER, SET USER ON *.*"), "catalog c",
     ("table.user", "table.global_priv", "modifier.global_privileges")),
    ("wildcard database grant", _grant("GRANT SELECT ON `s%`.*"), "catalog c",
     ("modifier.database_pattern",)),
    ("account outside the fence", _other, "catalog c", ("principal.other",)),
    ("global grant TO PUBLIC", lambda cur, user: cur.execute("GRANT SELECT, PROCESS ON *.* TO PUBLIC"),
     "catalog c", ("principal.public", "table.user", "modifier.global_privileges")),
)  # fmt: skip

steps = hostile_steps(
    roles=ROLES,
    users=USERS,
    objects=OBJECTS,
    unregistered=UNREGISTERED,
    privileges=PRIVILEGES,
    schemas=SCHEMAS,
    tables=TABLES,
    hand=len(HAND),
    rename=True,
)


def start() -> Model:
    b = Builder().users(*USERS).group("g", "u1").catalog("c", backend="mysql1")
    for schema in SCHEMAS:
        b.schema(f"c.{schema}")
    for d, t in BASE:
        b.table(f"c.{d}.{t}")
    b.role("r1", ("catalog c", "USE_CATALOG", "ALLOW"), ("schema c.s1", "USE_SCHEMA", "ALLOW"))
    b.allow("r1", "schema c.s1", "SELECT_TABLE")
    b.role("r2", ("catalog c", "USE_CATALOG", "ALLOW"), ("catalog c", "USE_SCHEMA", "ALLOW"))
    return b.grant_role("r1", users=["u2"], groups=["g"]).grant_role("r2", users=["U3"]).model


def accounts() -> list[str]:
    """Every account a pool user maps to under any mapping."""
    return sorted({PREFIX + m(Principal.user(u)) for m in MAPPINGS.values() for u in USERS})


@pytest.fixture(scope="module")
def arena(mariadb: LocalMariaDB, folding: LocalMariaDB) -> Iterator[dict[int, LocalMariaDB]]:
    """The two servers a history plays on, by ``lower_case_table_names``."""
    servers = {0: mariadb, 1: folding}
    for server in servers.values():
        prepare(server)
    yield servers
    close_admins()
    for server in servers.values():
        clear(server)


def prepare(server: LocalMariaDB) -> None:
    with admin(server) as cur:
        for user in accounts():
            cur.execute("DROP USER IF EXISTS %s@'%%'", (user,))
            cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (user, PASSWORD))
        for schema in SCHEMAS:
            cur.execute(f"DROP DATABASE IF EXISTS {q(schema)}")
            cur.execute(f"CREATE DATABASE {q(schema)}")
            sql, args = govern_database(PUSHDOWN, "%", schema)
            cur.execute(sql, args)


def clear(server: LocalMariaDB) -> None:
    reset_server(server, accounts(), SCHEMAS, BASE)
    with admin(server) as cur:
        for user in accounts():
            cur.execute("DROP USER IF EXISTS %s@'%%'", (user,))
        cur.execute("DROP ROLE IF EXISTS adv_hr")
        for schema in SCHEMAS:
            cur.execute(f"DROP DATABASE IF EXISTS {q(schema)}")
            cur.execute("REVOKE ALL PRIVILEGES ON " + q(schema) + ".* FROM %s@'%%'", (PUSHDOWN,))


def table_step(model: Model, cur: Any, step: tuple[Any, ...]) -> tuple[list[Any], Scope]:
    """A table created, dropped or renamed in the model and on the server together."""
    kind, schema, table, *rest = step
    obj = ObjectRef.of("table", ("c", schema, table))
    touched = Scope.of([obj, *(ObjectRef.of("table", ("c", schema, n)) for n in rest)])
    if kind == "create" and obj not in model.objects:
        cur.execute(f"CREATE TABLE IF NOT EXISTS {q(schema)}.{q(table)} (id INT) ENGINE=MEMORY")
        return ch.create_object(model, obj), touched
    if kind == "drop" and obj in model.objects:
        cur.execute(f"DROP TABLE IF EXISTS {q(schema)}.{q(table)}")
        return ch.drop_object(model, obj), touched
    if kind == "rename" and obj in model.objects and rest[0] != table:
        new = ObjectRef.of("table", ("c", schema, rest[0]))
        cur.execute(
            "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (schema, rest[0]),
        )
        if new in model.objects or cur.fetchall():
            return [], Scope.nothing()
        cur.execute(f"RENAME TABLE {q(schema)}.{q(table)} TO {q(schema)}.{q(rest[0])}")
        return ch.rename_object(model, obj, rest[0]), touched
    return [], Scope.nothing()


def play(
    model: Model, cur: Any, step: tuple[Any, ...], mapped: Callable[[str], str], tally: Tally
) -> Scope:
    """Play one step on the model and/or the server; the scope its sync looks at."""
    kind = step[0]
    if kind == "hand":
        _, how, obj, keys = HAND[step[1]]
        for key in keys:
            tally.draw(key)
        try:
            how(cur, PREFIX + mapped(USERS[step[1] % len(USERS)]))
        except pymysql.err.ProgrammingError as exc:
            if exc.args[0] != NO_SUCH_TABLE:
                raise
            return Scope.nothing()  # its table was dropped: nothing could be made by hand there
        return Scope.of([ObjectRef.parse(obj)])
    if kind == "outside":
        cur.execute(f"CREATE TABLE IF NOT EXISTS {q(step[1])}.{q(step[2])} (id INT) ENGINE=MEMORY")
        return Scope.nothing()  # no journal event: discovery must find it
    if kind in ("create", "drop", "rename"):
        events, touched = table_step(model, cur, step)
    else:
        events, touched = model_changes(model, step), Scope.nothing()
    for event in events:
        model.apply(event)
    return Scope.union([touched, *(scope_of(e) for e in events)])


def test_mysql_is_never_wider_than_the_evaluator_in_a_hostile_environment(
    arena: dict[int, LocalMariaDB], capsys: pytest.CaptureFixture[str]
) -> None:
    tally = Tally(surface=len(ENTRIES))
    checkers = {fold: Checker(server, USERS, fold=fold) for fold, server in arena.items()}
    backends: dict[tuple[int, str], MySQLBackend] = {}  # one per server and mapping, as a daemon keeps one

    @settings(
        max_examples=histories(300), deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    @given(
        mapping=mapping_names,
        fold=st.sampled_from((0, 0, 1)),
        history=st.lists(steps, min_size=1, max_size=4),
    )
    def run(mapping: str, fold: int, history: list[tuple[Any, ...]]) -> None:
        mapper = MAPPINGS[mapping]
        server, checker = arena[fold], checkers[fold]

        def mapped(user: str) -> str:
            return mapper(Principal.user(user))

        reset_server(server, accounts(), SCHEMAS, BASE)
        model = start()
        tally.draw("principal.named")
        if fold:
            tally.draw("setting.lower_case_table_names")
        backend = backends.get((fold, mapping))
        if backend is None:
            backend = backends[(fold, mapping)] = backend_for(server, map_principal=mapper)
        try:
            history_on(server, checker, backend, model, mapping, fold, history, mapped, tally)
        finally:
            # a fresh connection per history, as a CLI run has (MariaDB 10.11.19 crashed three
            # times freeing an internal temporary table of an information_schema query while
            # throwaway servers shared /tmp; not since each has a tmpdir of its own)
            backend.connection.drop()
            close_admins()

    try:
        run()
    finally:
        for backend in backends.values():
            backend.close()
    logins = sum(c.logins for c in checkers.values())
    over = sum(c.over for c in checkers.values())
    with capsys.disabled():
        print(
            "\n" + tally.line("mysql") + f"; {logins} login checks within the grant tables' answer "
            f"({over} over-approximated); {REPORTED[0]} findings acted on by hand"
        )
    assert tally.wider == 0 and tally.histories >= histories(300) and all(c.logins for c in checkers.values())
    assert {e.key for e in ENTRIES} - NOT_DRAWN - tally.drawn == set(), "surface entries never drawn"


#: "already gone" (a finding's statement run after another that made it moot)
GONE = {1141, 1147, 1403, 1396}


def follow(server: LocalMariaDB, findings: tuple[str, ...], tally: Tally) -> None:
    """A person acts on every finding: runs the statement it ends with (``by hand: …``).
    What pushdown only reports is then closed by that statement, or the check that follows
    finds it wider: a finding missing, or naming the wrong statement, fails the test."""
    with cursor(server) as cur:
        for finding in findings:
            if "by hand: " not in finding:
                continue
            fix = finding.rsplit("by hand: ", 1)[1]
            for statement in re.split(FIX_STATEMENTS, fix):  # a grant row's DELETEs, then FLUSH
                try:
                    cur.execute(statement)  # no arguments: the text is sent as it is
                except pymysql.err.MySQLError as exc:
                    if exc.args[0] not in GONE:
                        raise
            REPORTED[0] += 1


#: where a finding's fix of several statements splits (findings.orphan_findings)
FIX_STATEMENTS = r"; (?=DELETE FROM mysql\.|FLUSH PRIVILEGES$)"

#: findings a person acted on (printed with the counts)
REPORTED = [0]


def history_on(
    server: LocalMariaDB,
    checker: Checker,
    backend: MySQLBackend,
    model: Model,
    mapping: str,
    fold: int,
    history: list[tuple[Any, ...]],
    mapped: Callable[[str], str],
    tally: Tally,
) -> None:
    """Play one history: a full sync, then each step, its scoped sync and a full sync, each
    checked against the evaluator."""
    first, _ = reconcile(backend, model, Scope.everything())
    said = [*first.notes, *first.findings]  # a standing narrower answer keeps the note it had
    _, seen = backend.discover(model, None)
    tally.histories += 1
    # every entry of the surface is drawn: each history plays one hand-made state in turn,
    # besides those its steps draw
    for step in [("hand", tally.histories % len(HAND)), *history]:
        with cursor(server) as cur:
            try:
                scope = play(model, cur, step, mapped, tally)
            except ModelError:
                continue
        found, now = backend.discover(model, seen)
        for sync_scope in (scope | found, Scope.everything()):
            plan, _ = reconcile(backend, model, sync_scope, retries=0)
            seen = now
            follow(server, plan.findings, tally)
            enforced, evaluator, checks = checker.check(model, mapped)
            wider, narrower = compare(enforced, evaluator)
            said = list(dict.fromkeys([*said, *plan.notes, *plan.findings]))
            tally.record(checks, wider, narrower, said, mapped)
            assert wider == [], (mapping, fold, history, step, sync_scope.describe(), plan.render())
