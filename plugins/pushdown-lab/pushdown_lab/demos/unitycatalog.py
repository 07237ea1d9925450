"""``pushdown demo-unitycatalog SPEC``: apply a spec to a Unity Catalog stand-in and ask
the server, as each user, what that user may do.

The command starts the stand-in (127.0.0.1, a free port; the open server is not served
by the Maven registry here, see docs/unitycatalog.md), creates the spec's catalogs,
schemas and tables there as the metastore admin and its users through SCIM, syncs each
catalog through the ``unitycatalog`` backend (plan, apply, read back), prints the plan,
then for each user the schemas and tables the server lets them load, as that user, and a
second plan (empty). The stand-in is gone when the command ends.
"""

from __future__ import annotations

import click
from pushdown_unitycatalog.backend import UnityCatalogBackend
from pushdown_unitycatalog.client import API, Refused, UnityCatalog

from pushdown.app.commands.output import escaped_lines
from pushdown.app.service.spec import load_spec
from pushdown.errors import PushdownError, SpecError
from pushdown.model.securables import METALAKE, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_lab.uc_standin import Standin


@click.command("demo-unitycatalog")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
def demo_unitycatalog(spec: str) -> None:
    """Apply SPEC to a Unity Catalog stand-in and show what each user may do, asked as that user."""
    try:
        _demo(spec)
    except SpecError as exc:  # a clear error, never a traceback
        lines = [escaped_lines(p) for p in exc.problems]
        raise click.ClickException("\n".join([*lines, f"{len(lines)} problem(s) in the spec"])) from None
    except (PushdownError, Refused) as exc:
        raise click.ClickException(escaped_lines(str(exc))) from None


def _demo(spec: str) -> None:
    model = load_spec(spec)
    catalogs = sorted(o.names[0] for o in model.children(METALAKE) if o.type is SecurableType.CATALOG)
    if not catalogs:
        raise click.ClickException(f"{spec}: no catalog; nothing to demonstrate")
    with Standin() as uc:
        admin = UnityCatalog(uc.url, uc.admin_token)
        for user in sorted(model.users):
            uc.add_user(user)
        for catalog in catalogs:
            _objects(admin, model, catalog)
            settings = {"url": uc.url, "token": uc.admin_token, "principals": sorted(model.users)}
            backend = UnityCatalogBackend(BackendContext("uc", settings, catalogs=frozenset({catalog})))
            click.echo(f"backend uc: Unity Catalog stand-in on {uc.url} for catalog {catalog}")
            plan, _ = reconcile(backend, model, Scope.everything())
            click.echo(plan.render())
            click.echo("applied; read back: in sync\n")
            click.echo("what each user may load, asked of the server as that user:")
            for user in sorted(model.users):
                click.echo(f"  {user}: {', '.join(_visible(uc, user, catalog)) or '(nothing)'}")
            again = planner.plan(backend, model, Scope.everything())
            click.echo(f"\nsecond plan: {again.render()}")


def _objects(admin: UnityCatalog, model: Model, catalog: str) -> None:
    admin.call("POST", API + "/catalogs", {"name": catalog})
    for obj in sorted(model.within(next(o for o in model.children(METALAKE) if o.names == (catalog,)))):
        names = [n.lower() for n in obj.names]
        if obj.type is SecurableType.SCHEMA:
            admin.call("POST", API + "/schemas", {"name": names[1], "catalog_name": names[0]})
        elif obj.type is SecurableType.TABLE:
            where = {"catalog_name": names[0], "schema_name": names[1]}
            admin.call("POST", API + "/tables", {"name": names[2], **where, "table_type": "MANAGED"})


def _visible(uc: Standin, user: str, catalog: str) -> list[str]:
    client = UnityCatalog(uc.url, uc.token_of(user))
    out = []
    try:
        schemas = client.schemas(catalog)
    except Refused:
        return []
    for schema in schemas:
        out.append(f"schema {catalog}.{schema}")
        out += [f"table {catalog}.{schema}.{t}" for t in client.tables(catalog, schema)]
    return out
