"""`pushdown explain` on the examples of the reference document (examples/reference.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main

SPEC = str(Path(__file__).resolve().parents[2] / "examples" / "reference.yaml")

CASES = [
    # Example 1: metalake ALLOW USE_CATALOG, catalog DENY USE_CATALOG -> cannot use the catalog
    ("u1", "load_catalog", "catalog1", False, "USE_CATALOG denied: DENY on catalog catalog1"),
    ("u1", "load_catalog", "catalog2", True, "USE_CATALOG allowed: ALLOW on metalake"),
    # Example 2: metalake DENY, catalog ALLOW -> still cannot use it
    ("u2", "load_catalog", "catalog1", False, "USE_CATALOG denied: DENY on metalake"),
    # SELECT_TABLE on the table plus USE_CATALOG and USE_SCHEMA on its parents
    ("reader", "load_table", "catalog1.schema1.table1", True, "SELECT_TABLE allowed"),
    ("reader", "alter_table", "catalog1.schema1.table1", False, "MODIFY_TABLE: no role of the user"),
    ("u1", "load_table", "catalog1.schema1.table1", False, "USE_CATALOG denied"),
    # The workflow: admin creates the metalake, manager owns it, staff holds catalog_manager
    ("admin", "create_metalake", "test", True, "admin is a service admin"),
    ("manager", "create_metalake", "test", False, "manager is not a service admin"),
    ("manager", "alter_metalake", "test", True, "manager owns metalake"),
    ("manager", "add_user", "staff", True, "manager owns metalake"),
    ("manager", "create_role", "catalog_manager", True, "manager owns metalake"),
    (
        "staff",
        "create_catalog",
        "hive_catalog",
        True,
        "CREATE_CATALOG allowed: ALLOW on metalake by role catalog_manager",
    ),
    ("outsider", "create_catalog", "hive_catalog", False, "CREATE_CATALOG: no role of the user"),
    ("staff", "create_schema", "hive_catalog.hive_db", True, "staff owns catalog hive_catalog"),
    ("staff", "create_table", "hive_catalog.hive_db.hive_table", True, "staff owns"),
    ("staff", "load_table", "mysql_catalog.mysql_db.mysql_table", True, "staff owns"),
    ("staff", "drop_table", "hive_catalog.hive_db.hive_table", True, "staff owns"),
    ("outsider", "load_table", "hive_catalog.hive_db.hive_table", False, "not outsider"),
    ("staff", "add_user", "outsider", False, "MANAGE_USERS: no role of the user"),
    ("staff", "grant_role", "catalog_manager", False, "MANAGE_GRANTS: no role of the user"),
    ("manager", "grant_role", "catalog_manager", True, "manager owns metalake"),
]


@pytest.mark.parametrize(("user", "op", "target", "allowed", "because"), CASES)
def test_explain_reference_example(user: str, op: str, target: str, allowed: bool, because: str) -> None:
    result = CliRunner().invoke(main, ["explain", "--spec", SPEC, user, op, target])
    verdict = "ALLOWED" if allowed else "DENIED"
    assert result.output.splitlines()[0].endswith(verdict), result.output
    assert result.exit_code == (0 if allowed else 3)
    assert because in result.output, result.output
