"""The ``pushdown`` command: plan, apply, verify, explain, plugins.

Exit codes: 0 when there is nothing to do (or the command succeeded), 2 when ``plan``
or ``verify`` finds drift, 1 on any error. Secrets never come from the command line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from pushdown.app.config import Config, load_config, redact
from pushdown.app.service import AccessControl
from pushdown.app.spec import load_spec
from pushdown.decide.evaluator import operation_named
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import PushdownError, SpecError
from pushdown.host.plugins import Hooks
from pushdown.reconcile.sync import SyncResult

PROGRESS_MIN_OPS = 100


class Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except SpecError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        click.echo(f"{len(exc.problems)} problem(s) in the spec; nothing was written", err=True)
        raise SystemExit(1) from None
    except PushdownError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(1) from None


def _open(ctx: click.Context, spec: str | None) -> AccessControl:
    config: Config = ctx.obj["config"]
    ac = AccessControl.open(config, push=False)
    ctx.call_on_close(ac.close)
    if spec is not None:
        target = load_spec(spec)
        result = ac.load_model(target)
        click.echo(f"spec {spec}: {len(result.events)} model change(s) recorded in {_shown(config.store)}")
    return ac


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


def _report(results: list[SyncResult]) -> tuple[int, int]:
    """Print each backend's plan or error; return (backends with drift, backends failed)."""
    drift = failed = 0
    for result in results:
        if result.error is not None:
            failed += 1
            click.echo(f"backend {result.backend}: ERROR {result.error}", err=True)
        elif result.plan is not None:
            click.echo(result.plan.render())
            drift += result.plan.drift
        else:
            click.echo(f"backend {result.backend}: nothing pending")
    return drift, failed


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
    help="Load this spec into the store first (grants as code).",
)
PENDING = click.option(
    "--pending",
    is_flag=True,
    help="Only the scope of journal events the backend has not seen, not everything.",
)


@main.command()
@SPEC
@BACKEND
@PENDING
@click.pass_context
def plan(ctx: click.Context, spec: str | None, backends: tuple[str, ...], pending: bool) -> None:
    """Print the operations each backend needs. Exit 0: nothing to do; 2: drift; 1: error."""
    with _errors():
        ac = _open(ctx, spec)
        results = ac.sync(_selected(ac, backends), full=not pending, dry_run=True)
    drift, failed = _report(results)
    ctx.exit(1 if failed else 2 if drift else 0)


@main.command()
@SPEC
@BACKEND
@PENDING
@click.pass_context
def apply(ctx: click.Context, spec: str | None, backends: tuple[str, ...], pending: bool) -> None:
    """Apply the plan to each backend, read back, and require that nothing is left."""
    with _errors():
        ac = _open(ctx, spec)
        results = ac.sync(_selected(ac, backends), full=not pending, progress=_progress_bar)
    failed = 0
    for result in results:
        if result.error is not None:
            failed += 1
            click.echo(f"backend {result.backend}: ERROR {result.error}", err=True)
            click.echo(f"backend {result.backend}: the model is kept; run apply again to catch up", err=True)
        elif result.plan is None or not result.plan.drift:
            click.echo(f"backend {result.backend}: nothing to do")
        else:
            click.echo(result.plan.render())
            click.echo(
                f"backend {result.backend}: applied {len(result.plan.ops)} operation(s); read back: in sync"
            )
    ctx.exit(1 if failed else 0)


def _progress_bar(name: str, total: int) -> Callable[[int], None]:
    """A progress bar on stderr for long applies; silent for short ones."""
    if total < PROGRESS_MIN_OPS:
        return lambda n: None
    bar: Any = click.progressbar(length=total, label=f"applying to {name}", file=sys.stderr)
    bar.__enter__()
    done = [0]

    def tick(n: int) -> None:
        bar.update(n)
        done[0] += n
        if done[0] >= total:
            bar.__exit__(None, None, None)

    return tick


@main.command()
@BACKEND
@click.pass_context
def verify(ctx: click.Context, backends: tuple[str, ...]) -> None:
    """Read every backend back and compare with the model. Exit 0: in sync; 2: drift."""
    with _errors():
        ac = _open(ctx, None)
        results = ac.sync(_selected(ac, backends), full=True, dry_run=True)
    drift, failed = _report(results)
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
            decision_model = load_spec(spec)
            from pushdown.decide.evaluator import Evaluator

            decision = Evaluator(decision_model).authorize(user, operation, target, other)
        else:
            operation_named(operation)
            decision = _open(ctx, None).authorize(user, operation, target, other)
    click.echo(decision.explain())
    ctx.exit(0 if decision.allowed else 3)


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


Hooks.load().register_commands(main)

if __name__ == "__main__":  # pragma: no cover
    main()
