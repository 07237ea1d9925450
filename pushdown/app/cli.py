"""The ``pushdown`` command: plan, apply, verify, explain, report, plugins, daemon, serve, status, log.

Exit codes: 0 when there is nothing to do (or the command succeeded), 2 when ``plan``
or ``verify`` finds drift, 1 on any error. Secrets never come from the command line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from pushdown.app import planfile
from pushdown.app.config import Config, load_config, redact
from pushdown.app.output import escaped_lines, model_warnings, progress_bar, report, show
from pushdown.app.service import AccessControl
from pushdown.app.source.follow import SourceStatus, load_status
from pushdown.app.spec import load_spec
from pushdown.app.storefile import open_store, store_exists
from pushdown.decide.evaluator import operation_named
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import PushdownError, SpecError
from pushdown.host.plugins import Hooks
from pushdown.journal.connection import MEMORY
from pushdown.model.state import Model
from pushdown.reconcile.sync import CONFIG, GUARDED, SyncResult


class Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except SpecError as exc:
        for problem in exc.problems:
            click.echo(f"error: {escaped_lines(problem)}", err=True)
        click.echo(f"{len(exc.problems)} problem(s) in the spec; nothing was written", err=True)
        raise SystemExit(1) from None
    except PushdownError as exc:
        click.echo(f"error: {escaped_lines(str(exc))}", err=True)
        raise SystemExit(1) from None


def _open(ctx: click.Context, *, create: bool | None = False, scratch: bool = False) -> AccessControl:
    """The configured store and backends. ``create``: see :func:`open_store`; ``scratch``:
    a missing default store reads as an empty model, held in memory (nothing is created)."""
    config: Config = ctx.obj["config"]
    if scratch and not store_exists(config) and not config.store_explicit:
        config = dataclasses.replace(config, store=MEMORY)
    ac = AccessControl.open(config, push=False, create_store=create)
    ctx.call_on_close(ac.close)
    return ac.as_admin("cli")


def _target(spec: str, allow_empty: bool) -> Model:
    target = load_spec(spec, allow_empty=allow_empty)
    for warning in model_warnings(target):
        click.echo(warning, err=True)
    return target


def _shown(path: str) -> str:
    """A path relative to the working directory when it lies below it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def _selected(ac: AccessControl, names: tuple[str, ...]) -> list[str] | None:
    unknown = sorted(set(names) - set(ac.backends))
    if unknown:
        known = ", ".join(sorted(ac.backends)) or "none configured"
        raise PushdownError(f"unknown backend(s) {', '.join(unknown)}; configured: {known}")
    return list(names) or None


@click.group()
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file (TOML). Default: ./pushdown.toml, else the embedded defaults.",
)
@click.pass_context
def main(ctx: click.Context, config_path: str | None) -> None:
    """Keep backends enforcing exactly what one privilege model decides."""
    with _errors():
        ctx.obj = {"config": load_config(config_path)}


BACKEND = click.option("--backend", "-b", "backends", multiple=True, help="Only this backend (repeatable).")
SPEC = click.option(
    "--spec",
    "-s",
    type=click.Path(dir_okay=False),
    default=None,
    help="The model as a spec file (grants as code): plan shows it, apply records it first.",
)
PENDING = click.option(
    "--pending",
    is_flag=True,
    help="Only the scope of journal events the backend has not seen, not everything.",
)
ALLOW_EMPTY = click.option(
    "--allow-empty-spec",
    "allow_empty",
    is_flag=True,
    help="Accept a spec that describes an empty model (it removes everything pushdown manages).",
)


@main.command()
@SPEC
@BACKEND
@PENDING
@ALLOW_EMPTY
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also save the plan to this file; `pushdown apply FILE` applies exactly it, or refuses if stale.",
)
@click.pass_context
def plan(
    ctx: click.Context,
    spec: str | None,
    backends: tuple[str, ...],
    pending: bool,
    allow_empty: bool,
    out: str | None,
) -> None:
    """Print the operations each backend needs; record nothing. Exit 0: nothing to do; 2: drift; 1: error.

    With --spec, the plan is computed against the spec's model (always the whole scope)
    without recording it: the store stays as it is, and only apply records a spec."""
    with _errors():
        if spec is None:
            ac = _open(ctx)
            results = ac.sync(_selected(ac, backends), full=not pending, dry_run=True)
        else:
            target = _target(spec, allow_empty)
            ac = _open(ctx, scratch=True)
            events, results = ac.preview(target, _selected(ac, backends))
            where = _shown(ctx.obj["config"].store)
            count = f"{len(events)} model change(s)"
            click.echo(f"spec {spec}: {count}, not recorded (apply records them in {where})")
        drift, failed = report(results)
        if out is not None and not failed:
            seq = ac.store.last_seq()
            planfile.save(out, results, seq=seq, pending=pending, spec=spec, allow_empty=allow_empty)
            click.echo(f"plan saved to {out}; `pushdown apply {out}` applies exactly this plan")
    ctx.exit(1 if failed else 2 if drift else 0)


@main.command()
@click.argument("plan_file", required=False, type=click.Path(dir_okay=False))
@SPEC
@BACKEND
@PENDING
@ALLOW_EMPTY
@click.option(
    "--allow-mass-removal",
    is_flag=True,
    help="Apply plans that remove more than max_removal_share of a backend's managed grants.",
)
@click.pass_context
def apply(
    ctx: click.Context,
    plan_file: str | None,
    spec: str | None,
    backends: tuple[str, ...],
    pending: bool,
    allow_empty: bool,
    allow_mass_removal: bool,
) -> None:
    """Apply the plan to each backend, read back, and require that nothing is left.

    With --spec, the spec is recorded as the model first (creating the default store if
    there is none yet; a store named in the config must exist: see `pushdown init`).
    With PLAN_FILE (from `plan --out`), exactly that plan is applied, or nothing if the
    model, the spec or a server moved since it was made.

    Exit 0: done and in sync; 2: done, but findings remain (access that bypasses the
    model and that pushdown may not remove); 1: an error."""
    with _errors():
        saved = None if plan_file is None else planfile.open_saved(plan_file, spec, backends, pending)
        if saved is not None:
            spec, pending, allow_empty = saved.spec, saved.pending, saved.allow_empty
        target = None if spec is None else _target(spec, allow_empty)
        ac = _open(ctx, create=None if spec else False)
        ac.dispatcher.allow_mass_removal = allow_mass_removal
        names = saved.names if saved is not None else _selected(ac, backends)
        if saved is not None:
            planfile.check_before_recording(ac, saved, target)
        if target is not None:
            recorded = ac.as_admin("spec").load_model(target)
            where = _shown(ctx.obj["config"].store)
            click.echo(f"spec {spec}: {len(recorded.events)} model change(s) recorded in {where}")
        expect = None if saved is None else saved.check
        results = ac.sync(names, full=not pending, progress=progress_bar, expect=expect)
    failed = left = 0
    for result in results:
        if result.error is not None:
            failed += 1
            click.echo(f"backend {result.backend}: ERROR {escaped_lines(result.error)}", err=True)
            click.echo(f"backend {result.backend}: {_next_step(result)}", err=True)
        elif result.plan is None or not result.plan.drift:
            click.echo(f"backend {result.backend}: nothing to do")
        else:
            show(result.plan)
            done = f"backend {result.backend}: applied {len(result.plan.ops)} operation(s); read back: "
            if result.plan.findings:  # access the model does not give, which pushdown may not remove
                left += 1
                remain = len(result.plan.findings)
                click.echo(done + f"{remain} finding(s) above remain for a person to act on")
            else:
                click.echo(done + "in sync")
    ctx.exit(1 if failed else 2 if left else 0)


def _next_step(result: SyncResult) -> str:
    if result.kind == GUARDED:
        return "nothing was applied; review the plan, then apply with --allow-mass-removal or plan again"
    if result.kind == CONFIG:
        return "fix the configuration; the model is kept"
    return "the model is kept; run apply again to catch up"


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
    from pushdown.app.source.follow import Follower, describe_change

    config: Config = ctx.obj["config"]
    with _errors():
        follower = Follower(config)
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
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the configured store, empty, if it does not exist yet."""
    config: Config = ctx.obj["config"]
    with _errors():
        existed = store_exists(config)
        open_store(config, create=True).close()
    state = "already exists; nothing to do" if existed else "created (an empty model)"
    click.echo(f"store {_shown(config.store)}: {state}")


@main.command()
@BACKEND
@click.pass_context
def verify(ctx: click.Context, backends: tuple[str, ...]) -> None:
    """Read every backend back and compare with the model. Exit 0: in sync; 2: drift."""
    with _errors():
        ac = _open(ctx)
        results = ac.sync(_selected(ac, backends), full=True, dry_run=True)
    drift, failed = report(results)
    if not (drift or failed):
        click.echo("all backends enforce exactly what the model decides")
    ctx.exit(1 if failed else 2 if drift else 0)


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


@main.command()
@click.option(
    "--log-format", type=click.Choice(["text", "json"]), default="text", help="Log lines as text or JSON."
)
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info")
@click.option(
    "--port", type=int, default=None, help="Serve /metrics, /livez, /readyz here (overrides [daemon] port)."
)
@click.pass_context
def daemon(ctx: click.Context, log_format: str, log_level: str, port: int | None) -> None:
    """Run until stopped: follow the journal, reconcile each backend, serve metrics.

    Settings come from the config's [daemon] table (see docs/daemon.md). One daemon is
    active per store; a second one waits. SIGTERM stops it gracefully. Exit 0 when
    stopped, 1 on an error or when another daemon took its lease."""
    from pushdown.app.daemon import logs
    from pushdown.app.daemon.runner import Daemon

    logs.setup(log_format, log_level)
    config: Config = ctx.obj["config"]
    with _errors():
        settings = config.daemon if port is None else dataclasses.replace(config.daemon, port=port)
        if not 0 <= settings.port <= 65535:
            raise PushdownError(f"--port {port}: a whole number from 0 to 65535")
        d = Daemon(config, settings=settings)
        try:
            d.handle_signals()
            d.serve()
        except BaseException:
            d.close()
            raise
        code = d.run()
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
    workers run in the same process. SIGTERM stops it."""
    from pushdown.app.daemon import logs
    from pushdown.app.rest.server import serve as run

    logs.setup(log_format, log_level)
    config: Config = ctx.obj["config"]
    settings = dataclasses.replace(
        config.serve,
        host=config.serve.host if host is None else host,
        port=config.serve.port if port is None else port,
    )
    with _errors():
        code = run(config, settings)
    ctx.exit(code)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Each backend's cursor, lag, last success and last error, and the model source's last
    read ([source]), from the store.

    Exit 0: every backend caught up and its last attempt succeeded (and the source's last
    read was used); 2: some backend lags or failed last, or the source's last read was not
    used; 1: an error."""
    import json

    from pushdown.app.daemon.status import daemon_holder, statuses, when

    config: Config = ctx.obj["config"]
    with _errors():
        store = open_store(config, create=False)
        try:
            rows = statuses(store, config.backends)
            holder = daemon_holder(store)
            last = store.last_seq()
            source = None if config.follow is None else load_status(store, config.follow.describe())
        finally:
            store.close()
    if as_json:
        out: dict[str, object] = {
            "journal_seq": last,
            "daemon": holder,
            "backends": [dataclasses.asdict(r) for r in rows],
        }
        if source is not None:
            out["source"] = dataclasses.asdict(source)
        click.echo(json.dumps(out, indent=2))
    else:
        click.echo(f"store {_shown(config.store)}: journal at seq {last}")
        click.echo(f"daemon: {'active, ' + holder if holder else 'none active'}")
        if source is not None:
            _show_source(source)
        for r in rows:
            click.echo(f"backend {r.backend}:")
            click.echo(f"  cursor {r.cursor}, lag {r.lag_events} event(s), {r.lag_seconds:.0f} s")
            click.echo(f"  last success: {when(r.last_success)}")
            if r.last_error is not None:
                first = escaped_lines(r.last_error).splitlines()[0] if r.last_error else ""
                click.echo(f"  last error: {when(r.last_error_at)} [{r.error_kind}] {first}")
            if r.findings:
                click.echo(f"  findings at the last reconcile: {r.findings} (see `pushdown verify`)")
    failing = source is not None and (source.failing or source.last_good is None)
    ctx.exit(2 if failing or any(r.lag_events or r.failing for r in rows) else 0)


def _show_source(source: SourceStatus) -> None:
    from pushdown.app.daemon.status import when
    from pushdown.app.source.follow import describe_change

    click.echo(f"source {escaped_lines(source.source)}:")
    click.echo(f"  last good read: {when(source.last_good)}")
    if source.last_change is not None:
        click.echo(f"  last change: {when(source.last_change)}: {describe_change(source.changed)}")
        for example in source.examples:
            click.echo(f"    {escaped_lines(example)}")
        more = sum(source.changed.values()) - len(source.examples)
        if more > 0:
            click.echo(f"    ... and {more} more (pushdown log)")
    if source.last_error is not None and source.failing:
        first = escaped_lines(source.last_error).splitlines()[0]
        click.echo(f"  last read not used: {when(source.last_error_at)} [{source.error_kind}] {first}")
    if source.size:
        held = (f"{what.replace('_', ' ')} {n}" for what, n in source.size.items())
        click.echo("  holds: " + ", ".join(held))
    for note in source.notes:
        click.echo(f"  not enforced: {escaped_lines(note)}")


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

    from pushdown.app import history

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


Hooks.load().register_commands(main)

if __name__ == "__main__":  # pragma: no cover
    main()
