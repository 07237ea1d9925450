"""`pushdown import --backend`: random estates made by hand on a real MariaDB, imported.

For each estate: the imported spec, planned against the same server, adds nothing and
removes exactly what the import reported; a full authoritative apply of it leaves every
account with a subset of the grant rows it had (never wider); with ``adopt = "additive"``
the plan removes nothing and the server is left as it was.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pushdown_lab.mariadb import LocalMariaDB

from pushdown.app.cli import main
from pushdown.app.service.spec import load_spec_text
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.estate import adopt, estate_yaml
from pushdown.reconcile.planner import plan
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.facts import Grant

from .world import BACKEND, CATALOG, PREFIX, PUSHDOWN, PUSHDOWN_PASSWORD, World, admin, backend_for, do, q

pytestmark = pytest.mark.mariadb
ROOT = Path(__file__).resolve().parents[4]

USERS = ("ann", "b`o'b", "c_d")
DATABASES = ("sales", "h`r", "a_b")
TABLES = ("orders", "sal aries", "t`1")
MODIFY = ("SELECT", "INSERT", "UPDATE", "DELETE", "INDEX")
OWN = "SELECT, INSERT, UPDATE, DELETE, INDEX, ALTER, DROP, CREATE, TRIGGER"  # pushdown's own
ALONE = ("INSERT", "DROP", "TRIGGER", "UPDATE")
OTHER = "'app'@'%'"  # an account outside the fence


def bound() -> Model:
    from pushdown.model import changes as ch

    model = Model()
    do(model, ch.create_object(model, ObjectRef.of("catalog", (CATALOG,)), properties={"backend": BACKEND}))
    return model


def acct(user: str, host: str = "%") -> str:
    return "'" + (PREFIX + user).replace("\\", "\\\\").replace("'", "''") + "'@'" + host + "'"


def make_estate(server: LocalMariaDB, seed: int) -> list[str]:
    """Accounts, databases and grants made by hand: exact, partial, column, grant option,
    wildcard, global, role, PUBLIC, another host, an unmanaged account."""
    rng = random.Random(seed)
    done: list[str] = []
    with admin(server) as cur:

        def run(sql: str) -> None:
            cur.execute(sql)
            done.append(sql)

        for db in DATABASES:
            run(f"CREATE DATABASE {q(db)}")
            for table in TABLES:
                run(f"CREATE TABLE {q(db)}.{q(table)} (id INT, v INT)")
            run(f"GRANT {OWN} ON {q(db)}.* TO {q(PUSHDOWN)}@'%' WITH GRANT OPTION")
        for user in USERS:
            run(f"CREATE USER {acct(user)}")
        run(f"CREATE USER {acct(USERS[0], '10.%')}")
        run("CREATE USER 'app'@'%'")
        run("CREATE ROLE IF NOT EXISTS imp_role")
        for _ in range(rng.randint(6, 12)):
            user, db, table = rng.choice(USERS), rng.choice(DATABASES), rng.choice(TABLES)
            on_db, on_table = f"{q(db)}.*", f"{q(db)}.{q(table)}"
            kind = rng.randrange(12)
            if kind == 0:
                run(f"GRANT SELECT ON {on_db} TO {acct(user)}")
            elif kind == 1:
                run(f"GRANT {', '.join(MODIFY)} ON {on_db} TO {acct(user)}")
                for t in TABLES:
                    run(f"GRANT ALTER ON {q(db)}.{q(t)} TO {acct(user)}")
            elif kind == 2:
                run(f"GRANT SELECT ON {on_table} TO {acct(user)}")
            elif kind == 3:
                run(f"GRANT {', '.join(MODIFY)}, ALTER ON {on_table} TO {acct(user)}")
            elif kind == 4:
                run(f"GRANT {rng.choice(ALONE)} ON {on_table} TO {acct(user)}")
            elif kind == 5:
                run(f"GRANT SELECT (`v`) ON {on_table} TO {acct(user)}")
            elif kind == 6:
                run(f"GRANT SELECT ON {on_table} TO {acct(user)} WITH GRANT OPTION")
            elif kind == 7:
                run(f"GRANT SELECT ON `a%`.* TO {acct(user)}")
            elif kind == 8:
                run(f"GRANT PROCESS ON *.* TO {acct(user)}")
            elif kind == 9:
                run(f"GRANT imp_role TO {acct(user)}")
            elif kind == 10:
                run(f"GRANT CREATE, SELECT ON {on_db} TO {acct(user)}")
            else:
                run(f"GRANT SELECT ON {on_table} TO {rng.choice(('PUBLIC', acct(USERS[0], '10.%'), OTHER))}")
    return done


def drop_estate(server: LocalMariaDB) -> None:
    with admin(server) as cur:
        for user in USERS:
            cur.execute(f"DROP USER IF EXISTS {acct(user)}")
        cur.execute(f"DROP USER IF EXISTS {acct(USERS[0], '10.%')}")
        cur.execute("DROP USER IF EXISTS 'app'@'%'")
        cur.execute("DROP ROLE IF EXISTS imp_role")
        for table in ("db", "tables_priv", "columns_priv"):
            cur.execute(f"DELETE FROM mysql.{table} WHERE User = 'PUBLIC'")
        for db in DATABASES:
            cur.execute(f"DROP DATABASE IF EXISTS {q(db)}")
            cur.execute("DELETE FROM mysql.db WHERE Db = %s", (db.replace("_", "\\_"),))
        cur.execute("DELETE FROM mysql.db WHERE Db = 'a%'")
        cur.execute("FLUSH PRIVILEGES")


@pytest.fixture
def estate_server(mariadb: LocalMariaDB) -> Iterator[LocalMariaDB]:
    drop_estate(mariadb)
    yield mariadb
    drop_estate(mariadb)


def rows(backend: MySQLBackend) -> frozenset[object]:
    """Every grant row of every account but pushdown's own (PUBLIC's included)."""
    return frozenset(g for g in backend._read(None, None).grants if g.account.user != PUSHDOWN)


#: a hostile mapping: ann's account is ``pd_c_d`` and c_d's ``pd_ann``; b`o'b folds to no one
SWAP = {"ann": "c_d", "c_d": "ann", "b`o'b": "B`O'B"}


@pytest.mark.parametrize("create_on_database", [False, True])
@pytest.mark.parametrize(
    ("seed", "swap"), [(s, False) for s in range(1, 13)] + [(s, True) for s in range(1, 5)]
)
def test_import_of_a_hand_made_estate_is_never_wider_and_reports_what_it_leaves_out(
    estate_server: LocalMariaDB, seed: int, swap: bool, create_on_database: bool
) -> None:
    made = make_estate(estate_server, seed)
    hook = (lambda p: SWAP.get(p.name, p.name)) if swap else None
    backend = backend_for(estate_server, hook, create_on_database=create_on_database)
    try:
        adopted = adopt(backend.estate(bound()))
        text = estate_yaml(adopted, f"backend {BACKEND}")
        assert not adopted.wider, text  # the CLI would refuse to write it
        spec = load_spec_text(text)
        before = rows(backend)
        first = plan(backend, spec, Scope.everything())
        assert first.adds == 0 and first.changes == 0, (made, first.render())
        removed = {op.fact for op in first.ops}
        assert removed == set(adopted.revoked), (made, text, first.render())
        for fact in removed:  # each is in the report, by name
            assert any(str(fact) in line for line in adopted.report), (fact, adopted.report)
        imported = [
            g
            for g in before
            if isinstance(g, Grant) and g not in adopted.revoked and g.account.user.startswith(PREFIX)
        ]
        assert all(g.account.host == "%" for g in imported)

        additive = backend_for(estate_server, hook, adopt="additive", create_on_database=create_on_database)
        try:
            held = plan(additive, spec, Scope.everything())
            assert held.empty and len(held.findings) >= len(removed)
            reconcile(additive, spec, Scope.everything())
            assert rows(additive) == before  # nothing revoked
        finally:
            additive.close()

        reconcile(backend, spec, Scope.everything(), allow_mass_removal=True)
        after = rows(backend)
        assert after <= before, sorted(map(str, after - before))  # never wider
        assert before - after == {f for f in adopted.revoked if f in before}
        assert plan(backend, spec, Scope.everything()).empty
    finally:
        backend.close()


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def config(server: LocalMariaDB, adopt_mode: str | None) -> str:
    mode = f'adopt = "{adopt_mode}"\n' if adopt_mode else ""
    return (
        f'[backends.mysql1]\nkind = "mysql"\nhost = "{server.host}"\nport = {server.port}\n'
        f'user = "{PUSHDOWN}"\npassword = {{ env = "PD_TEST_MYSQL_PASSWORD" }}\ncatalogs = ["c"]\n{mode}'
    )


WALK = (
    "GRANT SELECT ON `crm`.* TO 'pd_ann'@'%'",
    "GRANT SELECT, INSERT, UPDATE, DELETE, INDEX, ALTER ON `crm`.`orders` TO 'pd_bob'@'%'",
    "GRANT SELECT (`id`) ON `crm`.`secret` TO 'pd_bob'@'%'",
    "GRANT DROP ON `crm`.`orders` TO 'pd_ann'@'%' WITH GRANT OPTION",
)


def test_the_adoption_walk_observe_import_additive_plan_authoritative(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/import.md's walk, on the CLI: hand-made grants, imported, applied additively
    (nothing revoked), then the switch to authoritative revokes exactly what was reported."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PD_TEST_MYSQL_PASSWORD", PUSHDOWN_PASSWORD)
    for user in ("ann", "bob"):
        world.user(user)
    world.schema("crm")
    world.table("crm", "orders")
    world.table("crm", "secret")
    with admin(world.server) as cur:
        for sql in WALK:
            cur.execute(sql)
    backend = backend_for(world.server)
    before = rows(backend)
    (tmp_path / "pushdown.toml").write_text(config(world.server, "additive"))
    code, spec, err = run("import", "--backend", "mysql1")
    assert code == 0, err
    (tmp_path / "estate.yaml").write_text(spec)
    code, additive_plan, _ = run("plan", "--spec", "estate.yaml")
    assert (
        code == 2
        and "nothing to do" in additive_plan
        and "an authoritative apply would revoke it" in additive_plan
    )
    code, applied, _ = run("apply", "--spec", "estate.yaml")
    assert code == 2 and "an authoritative apply would revoke it" in applied  # drift stays: findings
    assert rows(backend) == before  # additive: nothing revoked
    (tmp_path / "pushdown.toml").write_text(config(world.server, None))
    code, switch_plan, _ = run("plan")
    assert code == 2 and "0 to add, 3 to remove" in switch_plan
    code, switched, _ = run("apply")
    assert code == 0, switched
    after = rows(backend)
    assert after < before
    revoked = sorted(str(f) for f in before - after)
    assert revoked == [
        "DROP ON `crm`.`orders` TO 'pd_ann'@'%'",
        "GRANT OPTION ON `crm`.`orders` TO 'pd_ann'@'%'",
        "SELECT (`id`) ON `crm`.`secret` TO 'pd_bob'@'%'",
    ]
    assert all(f"left out (an authoritative apply revokes it): {r}" in err for r in revoked)
    code, verified, _ = run("verify")
    assert code == 0
    backend.close()
    transcript = [
        ("pushdown import --backend mysql1 > estate.yaml", err),
        ("cat estate.yaml", spec),
        ("pushdown plan --spec estate.yaml", additive_plan),
        ("pushdown apply --spec estate.yaml", applied),
        ("sed -i '/^adopt/d' pushdown.toml", ""),
        ("pushdown plan", switch_plan),
        ("pushdown apply", switched),
        ("pushdown verify", verified),
    ]
    shown = "".join(f"$ {command}\n{out}" for command, out in transcript)
    (tmp_path / "walk.txt").write_text(shown)
    doc = (ROOT / "docs" / "import.md").read_text()
    block = doc.split("<!-- adopt-walk -->")[-1].split("```")[1].split("\n", 1)[-1]
    assert shown == block, f"docs/import.md's walk differs; this run's is in {tmp_path / 'walk.txt'}"


def _ported(text: str) -> str:
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)


# -- name mappings: the import inverts the mapping the sync uses ----------------------------

MAPPED_DB = "imp_map"
#: the accounts the mapping tests make (dropped before and after each)
MAPPED_ACCOUNTS = ("pd_ann", "pd_bob", "pd_x", "db_ann", "db_Ann")


def drop_mapped(server: LocalMariaDB) -> None:
    with admin(server) as cur:
        for user in MAPPED_ACCOUNTS:
            cur.execute("DROP USER IF EXISTS %s@'%%'", (user,))
        cur.execute(f"DROP DATABASE IF EXISTS {q(MAPPED_DB)}")
        cur.execute("DELETE FROM mysql.db WHERE Db = %s", (MAPPED_DB.replace("_", "\\_"),))
        cur.execute("FLUSH PRIVILEGES")


@pytest.fixture
def mapped_server(mariadb: LocalMariaDB) -> Iterator[LocalMariaDB]:
    drop_mapped(mariadb)
    with admin(mariadb) as cur:
        cur.execute(f"CREATE DATABASE {q(MAPPED_DB)}")
        for table in ("t", "u"):
            cur.execute(f"CREATE TABLE {q(MAPPED_DB)}.{q(table)} (id INT)")
        cur.execute(f"GRANT {OWN} ON {q(MAPPED_DB)}.* TO {q(PUSHDOWN)}@'%' WITH GRANT OPTION")
    yield mariadb
    drop_mapped(mariadb)


def hand_grants(server: LocalMariaDB, grants: dict[str, tuple[str, ...]]) -> None:
    """account name -> the tables of ``imp_map`` it is given SELECT on (made at host %)."""
    with admin(server) as cur:
        for user, tables in grants.items():
            cur.execute("CREATE USER %s@'%%'", (user,))
            for table in tables:
                cur.execute(f"GRANT SELECT ON {q(MAPPED_DB)}.{q(table)} TO %s@'%%'", (user,))


def store_with(*users: str) -> Model:
    from pushdown.model import changes as ch

    model = bound()
    for user in users:
        do(model, ch.add_user(model, user))
    return model


def selects(spec: Model, user: str) -> set[str]:
    return {
        g.object.names[-1]
        for role in spec.roles_of(user)
        for g in spec.roles[role]
        if g.privilege.value == "SELECT_TABLE" and g.condition.value == "ALLOW"
    }


def import_mapped(backend: MySQLBackend, store: Model) -> tuple[Any, Model, str]:
    adopted = adopt(backend.estate(store))
    text = estate_yaml(adopted, f"backend {BACKEND}")
    spec = load_spec_text(text, allow_empty=True)
    first = plan(backend, spec, Scope.everything())
    assert first.adds == 0 and first.changes == 0, (text, first.render())
    assert {op.fact for op in first.ops} == set(adopted.revoked), (text, first.render())
    return adopted, spec, text


def test_a_swapping_mapping_never_imports_one_accounts_grants_as_anothers(
    mapped_server: LocalMariaDB,
) -> None:
    """ann maps to account ``pd_bob`` and bob to ``pd_ann``: pd_bob's grants are ann's."""
    hand_grants(mapped_server, {"pd_ann": ("t",), "pd_bob": ("t", "u")})
    swap = {"ann": "bob", "bob": "ann"}
    backend = backend_for(mapped_server, lambda p: swap.get(p.name, p.name))
    try:
        adopted, spec, text = import_mapped(backend, bound())
        assert selects(spec, "ann") == {"t", "u"} and selects(spec, "bob") == {"t"}, text
        assert not adopted.revoked, text
    finally:
        backend.close()


def test_an_account_two_model_users_map_to_is_imported_as_nobody(mapped_server: LocalMariaDB) -> None:
    """ann and bob both map to ``pd_x`` (the sync withholds their grants): pd_x is imported
    as neither of them, nor as a new user ``x``; its grant is reported."""
    hand_grants(mapped_server, {"pd_x": ("t",)})
    two = {"ann": "x", "bob": "x"}
    backend = backend_for(mapped_server, lambda p: two.get(p.name, p.name))
    try:
        adopted, spec, text = import_mapped(backend, store_with("ann", "bob"))
        assert not spec.users, text
        assert any("all map to account 'pd_x'@'%'" in line for line in adopted.report), text
    finally:
        backend.close()


def test_a_prefix_and_case_folding_mapping_imports_the_store_users_own_spelling(
    mapped_server: LocalMariaDB,
) -> None:
    """account_prefix ``db_`` and a mapping that folds case: ``db_ann`` is the store's Ann;
    ``db_Ann``, which no model user maps to, is imported as nobody and reported."""
    hand_grants(mapped_server, {"db_ann": ("t",), "db_Ann": ("u",)})
    backend = backend_for(mapped_server, lambda p: p.name.lower(), account_prefix="db_")
    try:
        adopted, spec, text = import_mapped(backend, store_with("Ann"))
        assert spec.users == {"Ann"} and selects(spec, "Ann") == {"t"}, text
        (other,) = [f for f in adopted.revoked if f.account.user == "db_Ann"]
        assert any(str(other) in line and "no model user maps" in line for line in adopted.report), text
    finally:
        backend.close()
