"""``pushdown status``: each backend's cursor and lag, the daemon, the model source."""

from __future__ import annotations

import dataclasses

import click

from pushdown.app.commands.base import _errors, _shown, main
from pushdown.app.commands.output import escaped_lines
from pushdown.app.service.sourcestatus import SourceStatus, describe_change, load_status
from pushdown.app.service.storefile import open_store
from pushdown.app.settings import Config


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

    from pushdown.app.service.status import daemon_holder, statuses, when

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
    from pushdown.app.service.status import when

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
