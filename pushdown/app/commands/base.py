"""The ``pushdown`` command group and what every command shares: the config, the store
opened as the administrator, the common options, errors as one line each.

Exit codes: 0 when there is nothing to do (or the command succeeded), 2 when ``plan``
or ``verify`` finds drift, 1 on any error. Secrets never come from the command line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from pushdown.app.commands.output import escaped_lines, model_warnings
from pushdown.app.service import AccessControl
from pushdown.app.service.spec import load_spec
from pushdown.app.service.storefile import store_exists
from pushdown.app.settings import Config, load_config
from pushdown.errors import PushdownError, SpecError
from pushdown.journal.connection import MEMORY
from pushdown.model.state import Model


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
