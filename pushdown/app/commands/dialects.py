"""`pushdown import --dialect` and `pushdown export --dialect`: the seeds' dialects in and out."""

from __future__ import annotations

from pathlib import Path

import click

from pushdown.errors import PushdownError

DIALECT_NAMES = ("databricks-hms", "unity-catalog", "singdata")


def register(main: click.Group) -> None:
    from pushdown.app.commands import base as cli
    from pushdown.app.service.spec import load_spec

    @main.command("import")
    @click.option(
        "--dialect",
        "dialect_name",
        type=click.Choice(DIALECT_NAMES),
        help="The dialect of FILE's statements.",
    )
    @click.option(
        "--backend",
        "backend_name",
        help="Read what this configured backend's server holds instead of a FILE.",
    )
    @click.option(
        "--group",
        "groups",
        multiple=True,
        help="A principal of FILE that is a group, not a user (repeatable).",
    )
    @click.argument("file", type=click.Path(dir_okay=False, allow_dash=True), required=False)
    @click.pass_context
    def import_(
        ctx: click.Context,
        dialect_name: str | None,
        backend_name: str | None,
        groups: tuple[str, ...],
        file: str | None,
    ) -> None:
        """Read FILE's GRANT / DENY / REVOKE / ALTER … OWNER TO statements and print a spec.

        Never wider: what the model cannot say is left out and reported (on stderr and as
        comments at the top of the spec); a statement that cannot be read is an error
        naming its line. `pushdown import --dialect unity-catalog grants.sql > spec.yaml`;
        `pushdown import --backend NAME > estate.yaml` reads a configured backend's server.
        """
        if backend_name is not None:
            if dialect_name is not None or file is not None or groups:
                raise click.UsageError("--backend takes no --dialect, --group or FILE")
            _import_backend(ctx, backend_name)
            return
        if dialect_name is None or file is None:
            raise click.UsageError("give --dialect NAME FILE, or --backend NAME")
        from pushdown.dialects.importing import to_model
        from pushdown.dialects.registry import dialect_named
        from pushdown.dialects.spec_text import spec_yaml
        from pushdown.dialects.sql import read

        with cli._errors():
            dialect = dialect_named(dialect_name, sql=True)
            text = click.get_text_stream("stdin").read() if file == "-" else _read(file)
            script = read(dialect, text)
            script.kinds.update({g: "group" for g in groups})
            imported = to_model(dialect, script)
        for line in imported.report:
            click.echo(line, err=True)
        click.echo(spec_yaml(imported.model, imported.report, f"{file} ({dialect.title})"), nl=False)

    @main.command("export")
    @click.option(
        "--dialect",
        "dialect_name",
        required=True,
        type=click.Choice((*DIALECT_NAMES, "cdap")),
        help="The dialect to write.",
    )
    @cli.SPEC
    @click.pass_context
    def export(ctx: click.Context, dialect_name: str, spec: str | None) -> None:
        """Print the model (the store, or --spec) as the dialect's statements.

        Exact where the dialect can say it, else narrower, with a comment line saying what
        was left out or withdrawn; never wider than pushdown's evaluator. With
        `--dialect cdap`: the READ / WRITE / ADMIN / EXECUTE the model gives each user
        on each entity.
        """
        from pushdown.dialects.cdap_model import privilege_lines
        from pushdown.dialects.exporting import export as run
        from pushdown.dialects.registry import dialect_named
        from pushdown.dialects.render import statements

        with cli._errors():
            dialect = dialect_named(dialect_name)
            model = load_spec(spec, allow_empty=True) if spec else cli._open(ctx, scratch=True).model
            lines = (
                privilege_lines(model) if dialect.name == "cdap" else statements(dialect, run(dialect, model))
            )
        for line in lines:
            click.echo(line)

    _explain_in_dialects(main)


def _import_backend(ctx: click.Context, name: str) -> None:
    """`pushdown import --backend NAME`: what the configured backend's server holds, as a spec
    (:mod:`pushdown.reconcile.estate`); the report on stderr and atop the spec."""
    from pushdown.app.commands import base as cli
    from pushdown.reconcile.estate import adopt, estate_yaml

    with cli._errors():
        ac = cli._open(ctx, scratch=True)
        backend = ac.backends.get(name)
        if backend is None:
            known = ", ".join(sorted(ac.backends)) or "none configured"
            raise PushdownError(f"no backend named {name!r} (configured: {known})")
        adopted = adopt(backend.estate(ac.model))
    for line in adopted.report:
        click.echo(line, err=True)
    if adopted.wider:
        click.echo("error: the import would be wider than the server (see above); no spec written", err=True)
        raise SystemExit(1)
    click.echo(estate_yaml(adopted, f"backend {name} ({backend.kind})"), nl=False)


def _explain_in_dialects(main: click.Group) -> None:
    """Give `pushdown explain` a `--dialect cdap` option: OPERATION is then a CDAP entity
    operation (e.g. "dataset get") and TARGET the entity's dotted name."""
    from pushdown.app.commands import base as cli
    from pushdown.app.service.spec import load_spec

    command = main.commands["explain"]
    original = command.callback
    assert original is not None
    command.params.append(
        click.Option(
            ["--dialect", "dialect_name"],
            type=click.Choice(["cdap"]),
            default=None,
            help='Answer in CDAP\'s terms: OPERATION is e.g. "dataset get", TARGET the entity.',
        )
    )

    def explain(dialect_name: str | None = None, **kwargs: object) -> object:
        if dialect_name is None:
            return original(**kwargs)
        from pushdown.dialects.cdap_model import explain as cdap_explain

        ctx = click.get_current_context()
        user, operation, entity, spec = (kwargs.get(k) for k in ("user", "operation", "target", "spec"))
        if not (user and operation and entity):
            raise click.UsageError("explain --dialect cdap needs USER OPERATION ENTITY")
        with cli._errors():
            model = load_spec(str(spec), allow_empty=True) if spec else cli._open(ctx, scratch=True).model
            ok, lines = cdap_explain(model, str(user), str(operation), str(entity))
        for line in lines:
            click.echo(line)
        ctx.exit(0 if ok else 3)

    command.callback = explain


def _read(file: str) -> str:
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PushdownError(f"cannot read {file}: {exc}") from None
