"""``pushdown pull``, ``daemon`` and ``serve``: the commands that start another front-end,
through the launchers (:mod:`pushdown.app.service.frontends`), never by importing it."""

from __future__ import annotations

import dataclasses

import click

from pushdown.app.commands.base import _errors, main
from pushdown.app.commands.output import escaped_lines
from pushdown.app.service import AccessControl, frontends
from pushdown.app.service.sourcestatus import describe_change
from pushdown.app.settings import Config
from pushdown.errors import PushdownError


@main.command()
@click.option(
    "--allow-mass-removal",
    is_flag=True,
    help="Record a read that removes more than source.max_removal_share of the model.",
)
@click.pass_context
def pull(ctx: click.Context, allow_mass_removal: bool) -> None:
    """Read the model source ([source]) once and record its model (one change); push nothing.

    `pushdown apply` (or the daemon) then pushes what changed. Exit 0: recorded (or
    nothing changed); 1: the read was not used (the status says why; the model is kept)."""
    config: Config = ctx.obj["config"]
    with _errors():
        follower = frontends.model_source(config)
        ctx.call_on_close(follower.close)
        ac = AccessControl.open(config, push=False, create_store=None)
        ctx.call_on_close(ac.close)
        result = follower.poll(ac, allow_mass_removal=allow_mass_removal)
    for note in result.notes:
        click.echo(f"note: {escaped_lines(note)}", err=True)
    if not result.ok:
        click.echo(f"error: {escaped_lines(result.error or '')}", err=True)
        click.echo("nothing was changed; the model stays as it was", err=True)
        ctx.exit(1)
    what = "no model change" if not result.changes else f"{result.changes} model change(s): "
    detail = describe_change(result.summary) if result.changes else ""
    click.echo(
        f"source {config.follow.describe() if config.follow else ''}: {result.reads} read(s), "
        f"{result.calls} call(s), {result.seconds:.2f} s; {what}{detail}"
    )


@main.command()
@click.option(
    "--log-format", type=click.Choice(["text", "json"]), default="text", help="Log lines as text or JSON."
)
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info")
@click.option(
    "--port", type=int, default=None, help="Serve /metrics, /livez, /readyz here (overrides [daemon] port)."
)
@click.option(
    "--serving",
    "parent",
    type=click.IntRange(1),
    default=None,
    hidden=True,
    help="The workers of the pushdown serve process of this pid: no endpoints; stop when it is gone.",
)
@click.pass_context
def daemon(ctx: click.Context, log_format: str, log_level: str, port: int | None, parent: int | None) -> None:
    """Run until stopped: follow the journal, reconcile each backend, serve metrics.

    Settings come from the config's [daemon] table (see docs/daemon.md). One daemon is
    active per store; a second one waits. SIGTERM stops it gracefully. Exit 0 when
    stopped, 1 on an error or when another daemon took its lease."""
    from pushdown.app.service import logs

    logs.setup(log_format, log_level)
    config: Config = ctx.obj["config"]
    with _errors():
        settings = config.daemon if port is None else dataclasses.replace(config.daemon, port=port)
        if not 0 <= settings.port <= 65535:
            raise PushdownError(f"--port {port}: a whole number from 0 to 65535")
        code = frontends.run_daemon(config, settings, parent=parent)
    ctx.exit(code)


@main.command()
@click.option("--host", default=None, help="Listen on this address (overrides [serve] host).")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=None, help="Listen here (overrides [serve] port)."
)
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, log_format: str, log_level: str) -> None:
    """Serve Gravitino's access-control REST API and push every change to the backends.

    Settings come from the config's [serve] table (see docs/rest.md); the daemon's
    workers run in a child process, stopped with it. SIGTERM stops it."""
    from pushdown.app.service import logs

    logs.setup(log_format, log_level)
    config: Config = ctx.obj["config"]
    settings = dataclasses.replace(
        config.serve,
        host=config.serve.host if host is None else host,
        port=config.serve.port if port is None else port,
    )
    with _errors():
        code = frontends.serve(config, settings)
    ctx.exit(code)
