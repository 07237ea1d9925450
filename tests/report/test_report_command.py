"""``pushdown report`` on the example: its files, the comparison with a previous report,
and the clear errors (never a traceback) on a bad output directory or previous report."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

from pushdown.app.cli import main
from pushdown.report.schema import COLUMNS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "demo.yaml"


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLE, tmp_path / "demo.yaml")
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def report(*args: str, spec: str = "demo.yaml") -> tuple[int, str, str]:
    return run("report", "--spec", spec, *args)


def csv_rows(path: Path) -> list[dict[str, str]]:
    with (path / "entitlements.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_report_on_the_example_says_who_may_do_what_and_why(cwd: Path) -> None:
    code, out, err = report("--out", "q1")
    assert code == 0, err
    assert "| sales | 29 | 4 | 5 |" in out and "| carol | 17 | 17 | 1 |" in out
    assert "catalog sales:" in err  # progress goes to stderr
    rows = csv_rows(cwd / "q1")
    assert len(rows) == 29 and list(rows[0]) == list(COLUMNS)
    why = {(r["user"], r["object"], r["operation"]): r for r in rows}
    alice = why[("alice", "sales.crm.orders", "load_table")]
    assert (alice["role"], alice["privilege"], alice["source"], alice["via"], alice["group"]) == (
        "reader",
        "SELECT_TABLE",
        "sales",
        "group",
        "analysts",
    )
    assert ("alice", "sales.crm.salaries", "load_table") not in why  # DENY wins
    dave = why[("dave", "sales.crm.orders", "alter_table")]
    assert [dave[c] for c in ("privilege", "source_type", "via", "group")] == [
        "MODIFY_TABLE",
        "table",
        "direct",
        "",
    ]
    carol = why[("carol", "sales.crm.salaries", "drop_table")]
    assert (carol["reason"], carol["source"], carol["role"]) == ("owner", "sales", "")
    parquet = ds.dataset(cwd / "q1" / "parquet", format="parquet", partitioning="hive").to_table()
    assert parquet.num_rows == 29 and set(parquet.column("catalog").to_pylist()) == {"sales"}
    assert sorted(parquet.column("user").to_pylist()) == sorted(r["user"] for r in rows)
    manifest = json.loads((cwd / "q1" / "report.json").read_text())
    assert manifest["rows"] == 29 and manifest["users"]["carol"]["access"] == 17
    assert (cwd / "q1" / "SUMMARY.md").read_text().startswith("# Entitlement report of metalake demo")


def test_since_counts_rows_added_and_removed_per_user(cwd: Path) -> None:
    assert report("--out", "q1")[0] == 0
    changed = (cwd / "demo.yaml").read_text().replace("analysts: [alice, bob]", "analysts: [alice, eve]")
    (cwd / "next.yaml").write_text(changed.replace("users: [admin,", "users: [eve, admin,"))
    code, out, err = report("--out", "q2", "--since", "q1", "--format", "parquet", spec="next.yaml")
    assert code == 0, err
    assert "4 row(s) added, 4 removed; 2 user(s) changed." in out
    since = json.loads((cwd / "q2" / "report.json").read_text())["since"]
    assert since["users"] == {"bob": {"added": 0, "removed": 4}, "eve": {"added": 4, "removed": 0}}
    # a report compares with itself (CSV against Parquet) as unchanged, and may replace itself
    code, out, err = report("--out", "q2", "--since", "q2", "--force", spec="next.yaml")
    assert code == 0 and "0 row(s) added, 0 removed; 0 user(s) changed." in out, err


def test_an_output_directory_that_holds_something_is_refused_unless_forced(cwd: Path) -> None:
    (cwd / "mine").mkdir()
    (cwd / "mine" / "notes.txt").write_text("keep me")
    code, _, err = report("--out", "mine")
    assert code == 1 and "mine exists and is not a pushdown report" in err and "Traceback" not in err
    assert report("--out", "mine", "--force")[0] == 0
    assert (cwd / "mine" / "notes.txt").read_text() == "keep me" and (cwd / "mine" / "report.json").exists()
    code, _, err = report("--out", "mine")
    assert code == 1 and "holds a report already; pass --force" in err
    (cwd / "theirs" / "parquet").mkdir(parents=True)
    code, _, err = report("--out", "theirs", "--force")
    assert code == 1 and "parquet exists and is not a report's" in err  # never deleted
    assert not list(cwd.glob(".mine.partial-*"))  # nothing half-written is left behind


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--since", "nowhere"), "nowhere is not a pushdown report (no report.json in it)"),
        (("--format", "xlsx"), "unknown report format xlsx; choose from parquet, csv"),
        (("--operations", "load_table,fly"), "not a reported operation: fly"),
        (("--engine", "nosuch"), "engine = 'nosuch': no installed plugin provides it"),
    ],
)
def test_bad_input_gets_one_clear_error(cwd: Path, args: tuple[str, ...], message: str) -> None:
    code, _, err = report("--out", "q", *args)
    assert code == 1 and message in err and "Traceback" not in err
    assert not (cwd / "q").exists()


def test_an_unreadable_previous_report_is_a_clear_error(cwd: Path) -> None:
    assert report("--out", "q1")[0] == 0
    (cwd / "q1" / "entitlements.csv").write_text("not,the,header\n")
    code, _, err = report("--out", "q2", "--since", "q1")
    assert code == 1 and "cannot read the report in q1" in err and not (cwd / "q2").exists()
    (cwd / "q1" / "report.json").write_text("{")
    code, _, err = report("--out", "q2", "--since", "q1")
    assert code == 1 and "cannot read the report manifest" in err


def test_operations_narrow_the_report(cwd: Path) -> None:
    assert report("--out", "q", "--operations", "load_table", "--format", "csv")[0] == 0
    rows = csv_rows(cwd / "q")
    assert {r["operation"] for r in rows} == {"load_table"} and not (cwd / "q" / "parquet").exists()


def test_an_unwritable_out_is_one_clear_error(cwd: Path) -> None:
    (cwd / "afile").write_text("x")
    code, _, err = report("--out", "afile/q")
    assert code == 1 and err.startswith("error: cannot write the report to afile/q")
    assert "Traceback" not in err


def test_since_a_report_of_another_metalake_is_refused(cwd: Path) -> None:
    assert report("--out", "q1")[0] == 0
    other = (cwd / "demo.yaml").read_text().replace("metalake: demo", "metalake: prod")
    (cwd / "other.yaml").write_text(other)
    code, _, err = report("--out", "q2", "--since", "q1", spec="other.yaml")
    assert code == 1 and "q1 is a report of metalake 'demo', not of 'prod'" in err
    assert not (cwd / "q2").exists()


def test_since_a_report_of_other_operations_compares_the_ones_both_cover(cwd: Path) -> None:
    assert report("--out", "q1", "--operations", "load_table,load_schema")[0] == 0
    code, out, err = report("--out", "q2", "--since", "q1", "--operations", "load_table,alter_table")
    assert code == 0, err
    assert "0 row(s) added, 0 removed; 0 user(s) changed." in out
    assert "compared on the 1 both cover" in out
    since = json.loads((cwd / "q2" / "report.json").read_text())["since"]
    assert since["operations_compared"] == ["load_table"]


def test_the_report_directory_has_the_mode_of_a_plain_mkdir(cwd: Path) -> None:
    """Readable by whoever the umask lets read (the files are), not owner-only like a temp dir."""
    import os

    old = os.umask(0o022)
    try:
        assert report("--out", "q1")[0] == 0
    finally:
        os.umask(old)
    assert (cwd / "q1").stat().st_mode & 0o777 == 0o755


def test_a_catalog_no_one_may_use_is_counted_as_zero(cwd: Path) -> None:
    (cwd / "closed.yaml").write_text(
        "metalake: demo\nusers: [ann]\ncatalogs:\n  vault:\n    backend: demo\n"
        "    schemas:\n      s:\n        tables: [t]\n"
    )
    code, out, err = report("--out", "q", spec="closed.yaml")
    assert code == 0, err
    assert "| vault | 0 | 0 | 0 |" in out and "0 row(s)" in out
    assert json.loads((cwd / "q" / "report.json").read_text())["catalogs"] == {
        "vault": {"rows": 0, "users": 0, "objects": 0}
    }
