"""``pushdown explain``, ``report``, ``plugins`` and ``log``: reading the model, the plugins
and the journal."""

from __future__ import annotations

from pathlib import Path

import click

from pushdown.app.commands.base import SPEC, _errors, _open, _shown, main
from pushdown.app.commands.output import escaped_lines
from pushdown.app.service.spec import load_spec
from pushdown.app.service.storefile import open_store
from pushdown.app.settings import Config, redact
from pushdown.decide.evaluator import operation_named
from pushdown.decide.requirements import OPERATIONS
from pushdown.host.plugins import Hooks


@main.command()
@click.argument("user", required=False)
@click.argument("operation", required=False)
@click.argument("target", required=False)
@click.option("--other", default=None, help="The second object of operations that take one (e.g. a tag).")
@SPEC
@click.option("--list", "list_ops", is_flag=True, help="List every operation and what it targets.")
@click.pass_context
def explain(
    ctx: click.Context,
    user: str | None,
    operation: str | None,
    target: str | None,
    other: str | None,
    spec: str | None,
    list_ops: bool,
) -> None:
    """Say whether USER may perform OPERATION on TARGET, and why.

    TARGET is the object's dotted name (its type follows from the operation), e.g.
    `pushdown explain alice load_table sales.crm.orders`. Exit 0 when allowed, 3 when denied.
    """
    if list_ops:
        for op in OPERATIONS.values():
            target_kind = op.target if isinstance(op.target, str) else op.target.value
            click.echo(f"{op.name:36} {target_kind:12} ({op.api})")
        return
    if not (user and operation and target):
        raise click.UsageError("explain needs USER OPERATION TARGET (or --list)")
    with _errors():
        if spec is not None:
            decision_model = load_spec(spec, allow_empty=True)
            from pushdown.decide.evaluator import Evaluator

            decision = Evaluator(decision_model).authorize(user, operation, target, other)
        else:
            operation_named(operation)
            decision = _open(ctx).authorize(user, operation, target, other)
    click.echo(escaped_lines(decision.explain()))
    ctx.exit(0 if decision.allowed else 3)


@main.command("report")
@click.option(
    "--out", type=click.Path(file_okay=False), default=None, help="Directory (default: ./report-DATE)."
)
@click.option("--format", "formats", default="parquet,csv", show_default=True, help="parquet, csv or both.")
@click.option(
    "--since", type=click.Path(file_okay=False), default=None, help="A previous report to compare with."
)
@click.option(
    "--engine", default=None, help="local, or an engine a plugin adds (default: the config's engine)."
)
@click.option("--operations", default=None, help="Comma-separated operations (default: one per requirement).")
@click.option(
    "--top", default=10, show_default=True, type=click.IntRange(1), help="Users in the summary's lists."
)
@click.option(
    "--force", is_flag=True, help="Write into an --out that holds something (a report is replaced)."
)
@SPEC
@click.pass_context
def report_command(
    ctx: click.Context,
    out: str | None,
    formats: str,
    since: str | None,
    engine: str | None,
    operations: str | None,
    top: int,
    force: bool,
    spec: str | None,
) -> None:
    """Write who may do what on which object, and why: Parquet by catalog, CSV, SUMMARY.md."""
    from datetime import date

    from pushdown.decide.engine import close_engine
    from pushdown.report.run import Request, parse_formats, write_report

    config: Config = ctx.obj["config"]
    with _errors():
        chosen = engine or config.engine
        compiler = Hooks.load().engine(chosen, config.engine_settings)
        ctx.call_on_close(lambda: close_engine(compiler))
        request = Request(
            out=Path(out or f"report-{date.today().isoformat()}"),
            formats=parse_formats(formats),
            since=None if since is None else Path(since),
            engine=chosen,
            compiler=compiler,
            operations=None if operations is None else operations.split(","),
            force=force,
            top=top,
        )
        if spec is not None:
            model = load_spec(spec, allow_empty=True)
        else:  # the directory's members included, as the backends enforce them
            model = _open(ctx, scratch=True).decision_model()
        result = write_report(model, request, progress=lambda text: click.echo(escaped_lines(text), err=True))
    click.echo(escaped_lines(result.summary.rstrip("\n")))
    click.echo(f"report written to {_shown(str(result.out))} in {result.seconds:.1f} s")


@main.command()
@click.pass_context
def plugins(ctx: click.Context) -> None:
    """List installed plugins, backend kinds and the configured backends."""
    hooks = Hooks.load()
    click.echo("plugins:")
    for name, hook_names in hooks.plugins():
        click.echo(f"  {name}: {', '.join(hook_names) or '(no hooks)'}")
    click.echo("backend kinds:")
    for kind, origin in hooks.backends.kinds().items():
        click.echo(f"  {kind}  (from {origin})")
    config: Config = ctx.obj["config"]
    click.echo(f"configured backends ({config.source}):")
    for name, bc in config.backends.items():
        click.echo(f"  {name}: kind={bc.kind} {redact(bc.settings)}")


@main.command("log")
@click.option("--user", "users", multiple=True, help="Changes that name this user (repeatable).")
@click.option("--group", "groups", multiple=True, help="Changes that name this group (repeatable).")
@click.option("--role", "roles", multiple=True, help="Changes that name this role (repeatable).")
@click.option(
    "--object", "objects", multiple=True, help='Changes on this object, e.g. "table c.s.t" (repeatable).'
)
@click.option("--limit", "-n", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per change.")
@click.pass_context
def log_command(
    ctx: click.Context,
    users: tuple[str, ...],
    groups: tuple[str, ...],
    roles: tuple[str, ...],
    objects: tuple[str, ...],
    limit: int,
    as_json: bool,
) -> None:
    """Who changed what, and when, newest first: every journalled change with its author
    and the way it came (library, cli, spec, rest with the request id, daemon, source)."""
    import json

    from pushdown.app.service import history

    config: Config = ctx.obj["config"]
    with _errors():
        wanted = [history.subject("user", u) for u in users] + [history.subject("group", g) for g in groups]
        wanted += [history.subject("role", r) for r in roles] + [
            history.subject("object", o) for o in objects
        ]
        store = open_store(config, create=False)
        try:
            found = history.entries(store, wanted, limit)
        finally:
            store.close()
    for entry in found:
        click.echo(json.dumps(history.as_dict(entry)) if as_json else escaped_lines(history.line(entry)))
    if not found and not as_json:
        click.echo("no changes recorded" + (" that name " + ", ".join(wanted) if wanted else ""))
