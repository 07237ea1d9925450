"""``pushdown demo-hive SPEC``: apply a spec to a throwaway Hive Metastore and show who
can do what there, read back with ``get_privilege_set``.

The command starts a private metastore (pyspark's jars, Derby in a temporary
directory, 127.0.0.1, a free port: :mod:`pushdown_lab.metastore`), creates what a real
deployment already has — the spec's databases and tables — records the spec in a
store of its own (in memory), applies the plan through the ``hive`` backend and prints, per user and table,
the privileges the metastore now answers for that user (with its groups). The
metastore and its data are deleted when the command ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import click
from pushdown_hive.backend import HiveBackend
from pushdown_hive.client import HiveObject, MetastoreClient
from pushdown_hive.mapping import ALL, CREATE, IMPLIED_BY_ALL

from pushdown.app.service import AccessControl
from pushdown.app.service.spec import load_spec
from pushdown.errors import PushdownError
from pushdown.journal.store import Store
from pushdown.model.securables import SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown_lab.metastore import MetastoreUnavailable, throwaway_metastore

COLUMNS = ("SELECT", "INSERT", "UPDATE", "DELETE", ALL)


def catalogs_by_backend(model: Model) -> dict[str, str]:
    """backend name -> the one catalog it enforces (the demo gives each its own metastore)."""
    out: dict[str, str] = {}
    for obj, props in sorted(model.objects.items()):
        if obj.type is SecurableType.CATALOG and "backend" in props:
            if props["backend"] in out:
                raise click.ClickException(
                    f"catalogs {out[props['backend']]} and {obj.names[0]} both name backend "
                    f"{props['backend']}; one metastore enforces one catalog"
                )
            out[props["backend"]] = obj.names[0]
    return out


def provision(client: MetastoreClient, model: Model, catalog: str) -> None:
    """What the metastore holds before pushdown: the catalog's databases and tables."""
    for obj in sorted(model.objects):
        if obj.names[:1] != (catalog,):
            continue
        if obj.type is SecurableType.SCHEMA:
            client.create_database(obj.names[1])
        elif obj.type is SecurableType.TABLE:
            client.create_table(obj.names[1], obj.names[2], owner="etl")


def who_can_do_what(client: MetastoreClient, model: Model, catalog: str) -> list[str]:
    """What each model user holds on each table (and CREATE on each database), as the
    metastore answers ``get_privilege_set`` for the user and its groups."""
    groups = {u: sorted(g for g, ms in model.groups.items() if u in ms) for u in model.users}
    rows = [f"{'user':10} {'table':28} " + " ".join(f"{c:6}" for c in COLUMNS) + " CREATE TABLE"]
    for db in sorted(client.get_all_databases()):
        if db == "default":
            continue
        tables = sorted(client.get_all_tables(db))
        for user in sorted(model.users):
            creates = CREATE in _held(client, HiveObject.database(db), user, groups[user])
            for table in tables:
                have = _held(client, HiveObject.of_table(db, table), user, groups[user])
                if ALL in have:
                    have |= IMPLIED_BY_ALL
                if not have and not creates:
                    continue
                marks = " ".join(f"{'yes' if p in have else '-':6}" for p in COLUMNS)
                name = f"{catalog}.{db}.{table}"
                rows.append(f"{user:10} {name:28} {marks} {'yes' if creates else '-'}")
    return rows


def _held(client: MetastoreClient, obj: HiveObject, user: str, groups: list[str]) -> set[str]:
    return {p.upper() for p in client.get_privilege_set(obj, user, groups).all}


@contextmanager
def _metastores(
    backends: dict[str, str], model: Model
) -> Iterator[dict[str, tuple[HiveBackend, MetastoreClient]]]:
    with ExitStack() as stack:
        made: dict[str, tuple[HiveBackend, MetastoreClient]] = {}
        for name, catalog in backends.items():
            try:
                hms = stack.enter_context(throwaway_metastore())
            except MetastoreUnavailable as exc:
                raise click.ClickException(f"cannot start a Hive Metastore here: {exc}") from None
            client = MetastoreClient(hms.host, hms.port)
            stack.callback(client.close)
            provision(client, model, catalog)
            settings = {"host": hms.host, "port": hms.port, "grantor": "pushdown"}
            backend = HiveBackend(BackendContext(name, settings))
            stack.callback(backend.close)
            made[name] = (backend, client)
            click.echo(
                f"backend {name}: throwaway Hive Metastore on {hms.host}:{hms.port} for catalog {catalog}"
            )
        yield made


@click.command("demo-hive")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
@click.pass_context
def demo_hive(ctx: click.Context, spec: str) -> None:
    """Apply SPEC to throwaway Hive Metastores and show who can do what, read back."""
    try:
        _demo(ctx, spec)
    except PushdownError as exc:  # a bad spec, a name the metastore refuses: said, not a traceback
        raise click.ClickException(str(exc)) from None


def _demo(ctx: click.Context, spec: str) -> None:
    model = load_spec(spec)
    backends = catalogs_by_backend(model)
    if not backends:
        raise click.ClickException(f"{spec}: no catalog names a backend; nothing to demonstrate")
    # a store of its own: the metastore is thrown away, so is what the demo recorded (the
    # working directory's store keeps the MySQL demo's state for backend "demo")
    store = Store(":memory:")
    failed = False
    try:
        with _metastores(backends, model) as made:
            ac = AccessControl(store, {n: b for n, (b, _) in made.items()}, push=False)
            result = ac.load_model(model)
            click.echo(f"spec {spec}: {len(result.events)} model change(s) recorded in a throwaway store")
            for sync in ac.sync(full=True):
                if sync.error is not None:
                    failed = True
                    click.echo(f"backend {sync.backend}: ERROR {sync.error}", err=True)
                    continue
                assert sync.plan is not None
                click.echo(sync.plan.render())
                click.echo(f"backend {sync.backend}: applied; read back: in sync\n")
                click.echo(f"who can do what on {sync.backend}, read back with get_privilege_set:")
                client = made[sync.backend][1]
                for line in who_can_do_what(client, ac.model, backends[sync.backend]):
                    click.echo("  " + line)
    finally:
        store.close()
    ctx.exit(1 if failed else 0)
