"""``pushdown demo SPEC``: apply a spec to a throwaway MariaDB and show who can do what.

The command starts a private MariaDB (temporary datadir, 127.0.0.1, a free port),
creates what a real deployment already has — the spec's databases and tables, an
account ``pd_<user>`` per model user, and pushdown's own least-privileged account —
then records the spec in the store, applies the plan through the ``mysql`` backend,
reads the grant tables back and prints, per user and table, what the server now lets
each account do. The server and its data are deleted when the command ends.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import click
from pushdown_mysql.account import least_privileges
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.facts import Grant, exact_db_name
from pushdown_mysql.quoting import quote_ident
from pushdown_mysql.readback import ServerRead

from pushdown.app.service import AccessControl
from pushdown.app.service.spec import load_spec
from pushdown.app.settings import load_config
from pushdown.journal.store import Store
from pushdown.model.securables import SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope
from pushdown_lab.mariadb import LocalMariaDB, throwaway_mariadb

PUSHDOWN_ACCOUNT = "pushdown"
COLUMNS = ("SELECT", "INSERT", "UPDATE", "DELETE", "ALTER", "DROP")


def catalogs_by_backend(model: Model) -> dict[str, str]:
    """backend name -> the one catalog it enforces (the demo gives each its own server)."""
    out: dict[str, str] = {}
    for obj, props in sorted(model.objects.items()):
        if obj.type is SecurableType.CATALOG and "backend" in props:
            if props["backend"] in out:
                raise click.ClickException(
                    f"catalogs {out[props['backend']]} and {obj.names[0]} both name backend "
                    f"{props['backend']}; one MySQL server enforces one catalog"
                )
            out[props["backend"]] = obj.names[0]
    return out


def provision(server: LocalMariaDB, model: Model, catalog: str, password: str) -> None:
    """What the server holds before pushdown: databases, tables, accounts. Root only."""
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE USER %s@%s IDENTIFIED BY %s", (PUSHDOWN_ACCOUNT, "%", password))
            databases = []
            for obj in sorted(model.objects):
                if obj.type is SecurableType.SCHEMA and obj.names[0] == catalog:
                    cur.execute(f"CREATE DATABASE {quote_ident(obj.names[1])}")
                    databases.append(obj.names[1])
                elif obj.type is SecurableType.TABLE and obj.names[0] == catalog:
                    db, table = (quote_ident(n) for n in obj.names[1:])
                    cur.execute(f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY)")
            for sql, args in least_privileges(PUSHDOWN_ACCOUNT, "%", databases):
                cur.execute(sql, args)
            for user in sorted(model.users):
                cur.execute("CREATE USER %s@%s ACCOUNT LOCK", ("pd_" + user, "%"))
    finally:
        conn.close()


def who_can_do_what(snap: ServerRead, catalog: str) -> list[str]:
    """A table of what each managed account may do, from the grant tables read back."""
    grants = [g for g in snap.grants if isinstance(g, Grant) and g.account.user.startswith("pd_")]
    rows = [f"{'user':10} {'table':28} " + " ".join(f"{c:6}" for c in COLUMNS) + " CREATE TABLE"]
    for account in sorted({g.account for g in grants}):
        held = [g for g in grants if g.account == account]
        for db, table in sorted(snap.inventory.tables):
            have = {g.privilege for g in held if _covers(g, db, table)}
            creates = any(_covers(g, db, None) and g.privilege == "CREATE" for g in held)
            if not have and not creates:
                continue
            marks = " ".join(f"{'yes' if p in have else '-':6}" for p in COLUMNS)
            user = account.user.removeprefix("pd_")
            rows.append(
                f"{user:10} {catalog + '.' + db + '.' + table:28} {marks} {'yes' if creates else '-'}"
            )
    return rows


def _covers(grant: Grant, db: str, table: str | None) -> bool:
    if grant.table is None:
        return grant.db is not None and exact_db_name(grant.db) == db
    return grant.db == db and grant.table == table


def _secret_of(password: str) -> Callable[[str], str | None]:
    return lambda key: password if key == "password" else None


@contextmanager
def _servers(backends: dict[str, str], model: Model) -> Iterator[dict[str, MySQLBackend]]:
    with ExitStack() as stack:
        made: dict[str, MySQLBackend] = {}
        for name, catalog in backends.items():
            server = stack.enter_context(throwaway_mariadb())
            password = secrets.token_urlsafe(18)
            provision(server, model, catalog, password)
            settings: dict[str, Any] = {"host": server.host, "port": server.port, "user": PUSHDOWN_ACCOUNT}
            context = BackendContext(name, settings, secret=_secret_of(password))
            made[name] = MySQLBackend(context)
            stack.callback(made[name].close)
            click.echo(
                f"backend {name}: throwaway MariaDB on {server.host}:{server.port} for catalog {catalog}"
            )
        yield made


@click.command()
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
@click.pass_context
def demo(ctx: click.Context, spec: str) -> None:
    """Apply SPEC to throwaway MariaDB servers and show who can do what, read back."""
    model = load_spec(spec)
    backends = catalogs_by_backend(model)
    if not backends:
        raise click.ClickException(f"{spec}: no catalog names a backend; nothing to demonstrate")
    store = Store(load_config(None).store)
    with _servers(backends, model) as made:
        ac = AccessControl(store, dict(made), push=False)
        result = ac.load_model(model)
        click.echo(f"spec {spec}: {len(result.events)} model change(s) recorded")
        failed = False
        for sync in ac.sync(full=True):
            if sync.error is not None:
                failed = True
                click.echo(f"backend {sync.backend}: ERROR {sync.error}", err=True)
                continue
            assert sync.plan is not None
            click.echo(sync.plan.render())
            backend = made[sync.backend]
            click.echo(f"backend {sync.backend}: applied; read back: in sync\n")
            click.echo(f"who can do what on {sync.backend}, read back from its grant tables:")
            everything = Scope.everything().resolve(ac.model)
            for line in who_can_do_what(backend.read(ac.model, everything).server, backends[sync.backend]):
                click.echo("  " + line)
        store.close()
    ctx.exit(1 if failed else 0)
