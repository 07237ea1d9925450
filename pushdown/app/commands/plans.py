"""``pushdown plan``, ``apply``, ``init`` and ``verify``: what the backends would get, and
getting it there."""

from __future__ import annotations

import click

from pushdown.app.commands.base import (
    ALLOW_EMPTY,
    BACKEND,
    PENDING,
    SPEC,
    _errors,
    _open,
    _selected,
    _shown,
    _target,
    main,
)
from pushdown.app.commands.output import escaped_lines, progress_bar, report, show
from pushdown.app.service import planfile
from pushdown.app.service.storefile import open_store, store_exists
from pushdown.app.settings import Config
from pushdown.reconcile.sync import CONFIG, GUARDED, SyncResult


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
