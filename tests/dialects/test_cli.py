"""The commands: import and export with --dialect, explain --dialect cdap; errors without tracebacks."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.app.service.spec import load_spec_text

DEMO = str(Path(__file__).resolve().parents[2] / "examples" / "demo.yaml")


def run(*args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), input=stdin)


def test_import_prints_a_spec_and_reports_on_stderr() -> None:
    sql = "GRANT USAGE ON CATALOG TO `analysts`;\nGRANT SELECT ON SCHEMA sales TO `analysts`;\n"
    sql += "GRANT MODIFY ON sales.o TO d;"
    result = run("import", "--dialect", "databricks-hms", "--group", "analysts", "-", stdin=sql)
    assert result.exit_code == 0, result.output
    assert "left out: GRANT MODIFY" in result.stderr
    model = load_spec_text(result.stdout)
    assert "analysts" in model.groups


def test_import_error_names_the_line_without_a_traceback() -> None:
    result = run(
        "import",
        "--dialect",
        "unity-catalog",
        "-",
        stdin="GRANT SELECT ON TABLE c.s.t TO u;\nGRANT NOPE ON TABLE c.s.t TO u",
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("error: line 2:")
    assert "Traceback" not in result.output


def test_export_each_dialect_from_a_spec() -> None:
    for name in ("databricks-hms", "unity-catalog", "singdata", "cdap"):
        result = run("export", "--dialect", name, "--spec", DEMO)
        assert result.exit_code == 0, (name, result.output)
    assert (
        "DENY MODIFY, SELECT ON TABLE sales.crm.salaries"
        in run("export", "--dialect", "databricks-hms", "--spec", DEMO).stdout
    )


def test_explain_in_cdap_terms() -> None:
    denied = run("explain", "--dialect", "cdap", "bob", "dataset get", "sales.crm.salaries", "--spec", DEMO)
    assert denied.exit_code == 3 and denied.stdout.rstrip().endswith("denied")
    allowed = run("explain", "--dialect", "cdap", "dave", "program start", "sales.crm.orders", "--spec", DEMO)
    assert allowed.exit_code == 0 and "EXECUTE" in allowed.stdout
    assert run("explain", "alice", "load_table", "sales.crm.orders", "--spec", DEMO).exit_code == 0
