"""The reference documents' own statements and examples, read and decided as the documents say.

Each test quotes the sentence it checks. 001 Databricks legacy Hive metastore, 002 Singdata,
003 Unity Catalog, 004 CDAP (in /work/shared/reference/).
"""

from __future__ import annotations

import pytest

from pushdown.dialects.cdap import DIALECT as CDAP
from pushdown.dialects.databricks_hms import DIALECT as HMS
from pushdown.dialects.evaluate import DGrant, State
from pushdown.dialects.singdata import DIALECT as SD
from pushdown.dialects.sql import DialectError, read
from pushdown.dialects.unity_catalog import DIALECT as UC

T = ("TABLE", ("main", "default", "t"))
HT = ("TABLE", ("hive_metastore", "s", "t"))


def state(dialect, text, owners=None):  # type: ignore[no-untyped-def]
    script = read(dialect, text)
    return State(dialect, script.grants, {**script.owners, **(owners or {})})


# -- 003 Unity Catalog -----------------------------------------------------------------


def test_uc_create_table_needs_use_catalog_and_use_schema() -> None:
    text = "GRANT CREATE TABLE ON SCHEMA main.default TO `finance-team`;"
    assert not state(UC, text).allowed("x", ["finance-team"], "create_table", T)
    gated = (
        text
        + "GRANT USE CATALOG ON CATALOG main TO `finance-team`;"
        + "GRANT USE SCHEMA ON SCHEMA main.default TO `finance-team`"
    )
    assert state(UC, gated).allowed("x", ["finance-team"], "create_table", T)


def test_uc_metastore_grants_are_not_inherited() -> None:
    s = state(
        UC,
        "GRANT CREATE CATALOG ON METASTORE TO `account users`;\n"
        "GRANT CREATE CATALOG ON METASTORE TO engineering",
    )
    assert s.allowed("a", ["account users"], "create_catalog", ("CATALOG", ("x",)))
    assert s.allowed("engineering", [], "create_catalog", ("CATALOG", ("x",)))
    assert not s.allowed("a", ["account users"], "create_schema", ("SCHEMA", ("x", "y")))


@pytest.mark.parametrize("on", ["CATALOG main", "SCHEMA main.default"])
def test_uc_select_on_a_catalog_or_schema_reaches_its_tables(on: str) -> None:
    s = state(
        UC,
        f"GRANT SELECT ON {on} TO finance; GRANT USE CATALOG ON CATALOG main TO finance; "
        "GRANT USE SCHEMA ON CATALOG main TO finance",
    )
    assert s.allowed("f", ["finance"], "select", T)
    assert not s.allowed("f", ["finance"], "modify", T)


def test_uc_the_ml_team_example() -> None:
    s = state(
        UC,
        """GRANT USE_CATALOG ON CATALOG ml TO ml_team;
GRANT USE_SCHEMA ON SCHEMA ml.team_sandbox TO ml_team;
GRANT CREATE TABLE ON SCHEMA ml.team_sandbox TO ml_team;
GRANT SELECT ON SCHEMA ml.team_sandbox TO ml_team;""",
    )
    t = ("TABLE", ("ml", "team_sandbox", "a_colleagues_table"))
    assert s.allowed("m", ["ml_team"], "create_table", t)
    assert s.allowed("m", ["ml_team"], "select", t)
    assert not s.allowed("m", ["ml_team"], "select", ("TABLE", ("ml", "other", "t")))


def test_uc_all_privileges_on_a_catalog_is_every_privilege_below_but_not_ownership() -> None:
    s = state(UC, "GRANT ALL PRIVILEGES ON CATALOG main TO analysts")
    assert s.allowed("a", ["analysts"], "select", T) and s.allowed("a", ["analysts"], "modify", T)
    assert not s.allowed("a", ["analysts"], "manage_grants", T)


def test_uc_schema_owner_has_no_privileges_on_its_tables_but_can_grant_them() -> None:
    s = state(UC, "GRANT USE CATALOG ON CATALOG main TO o; ALTER SCHEMA main.default OWNER TO o")
    assert not s.allowed("o", [], "select", T)
    assert s.allowed("o", [], "manage_grants", T)
    assert s.allowed("o", [], "create_table", T)  # all privileges on the schema itself


def test_uc_table_owner_granting_select_needs_the_gates_too() -> None:
    s = state(UC, "GRANT SELECT ON TABLE main.default.t TO reader")
    assert not s.allowed("reader", [], "select", T)


def test_uc_modify_needs_select_as_well() -> None:
    gates = "GRANT USE CATALOG ON CATALOG main TO w; GRANT USE SCHEMA ON SCHEMA main.default TO w;"
    assert not state(UC, gates + "GRANT MODIFY ON TABLE main.default.t TO w").allowed("w", [], "modify", T)
    assert state(UC, gates + "GRANT MODIFY, SELECT ON TABLE main.default.t TO w").allowed(
        "w", [], "modify", T
    )


def test_uc_revoking_all_privileges_revokes_the_explicit_ones_too() -> None:
    s = read(
        UC,
        "GRANT SELECT ON TABLE main.default.t TO u; GRANT ALL PRIVILEGES ON TABLE main.default.t TO u;"
        "REVOKE ALL PRIVILEGES ON TABLE main.default.t FROM u",
    )
    assert s.grants == set()


def test_uc_has_no_deny() -> None:
    with pytest.raises(DialectError, match="line 1"):
        read(UC, "DENY SELECT ON TABLE main.default.t TO u")


# -- 001 Databricks legacy Hive metastore --------------------------------------------


def test_hms_a_catalog_grant_reaches_every_schema_and_table() -> None:
    s = state(HMS, "GRANT SELECT, USAGE ON CATALOG TO u")
    assert s.allowed("u", [], "select", HT)


def test_hms_usage_on_the_catalog_also_passes_the_schema_gate() -> None:
    s = state(HMS, "GRANT USAGE ON CATALOG hive_metastore TO u; GRANT SELECT ON TABLE s.t TO u")
    assert s.allowed("u", [], "select", HT)


def test_hms_select_needs_usage_on_schema_and_catalog() -> None:
    assert not state(HMS, "GRANT SELECT ON TABLE s.t TO u").allowed("u", [], "select", HT)
    assert not state(HMS, "GRANT SELECT, USAGE ON SCHEMA s TO u").allowed("u", [], "select", HT)


def test_hms_deny_on_a_schema_wins_over_a_table_grant() -> None:
    s = state(HMS, "GRANT USAGE ON CATALOG TO u; GRANT SELECT ON s.t TO u; DENY SELECT ON DATABASE s TO u")
    assert not s.allowed("u", [], "select", HT)


def test_hms_modify_does_not_include_reading() -> None:
    s = state(HMS, "GRANT USAGE ON CATALOG TO u; GRANT MODIFY ON TABLE s.t TO u")
    assert s.allowed("u", [], "modify", HT)
    assert not s.allowed("u", [], "select", HT)


def test_hms_all_privileges_is_not_ownership() -> None:
    s = state(HMS, "GRANT ALL PRIVILEGES ON TABLE s.t TO u; ALTER TABLE s.t OWNER TO o")
    assert not s.allowed("u", [], "manage_grants", HT)
    assert s.allowed("o", [], "manage_grants", HT)


def test_hms_any_file_and_schema_or_database() -> None:
    s = state(
        HMS,
        "GRANT SELECT ON ANY FILE TO u; GRANT READ_METADATA ON SCHEMA s TO u;GRANT CREATE ON DATABASE s TO u",
    )
    assert s.allowed("u", [], "read_any_file", ("ANY FILE", ()))
    assert {g.type for g in s.grants} == {"ANY FILE", "SCHEMA"}


# -- 002 Singdata -------------------------------------------------------------------------


def test_sd_all_tables_in_schema_covers_current_and_future_tables() -> None:
    s = state(SD, "grant select on all tables in schema my_schema to user u")
    assert s.allowed("u", [], "select", ("TABLE", ("workspace", "my_schema", "created_tomorrow")))
    assert not s.allowed("u", [], "select", ("TABLE", ("workspace", "other", "t")))


def test_sd_all_objects_in_schema() -> None:
    s = state(SD, "GRANT SELECT ON ALL OBJECTS IN SCHEMA my_schema TO USER u")
    assert s.allowed("u", [], "select", ("TABLE", ("workspace", "my_schema", "t")))


def test_sd_with_grant_option_lets_the_grantee_grant() -> None:
    s = state(
        SD, "GRANT SELECT ON TABLE s.t TO USER u WITH GRANT OPTION; GRANT SELECT ON TABLE s.t TO USER v"
    )
    assert s.allowed("u", [], "manage_grants", ("TABLE", ("workspace", "s", "t")))
    assert not s.allowed("v", [], "manage_grants", ("TABLE", ("workspace", "s", "t")))


def test_sd_all_privileges_is_independent_of_select() -> None:
    text = (
        "GRANT SELECT ON TABLE example_table_s.example_table TO USER my_user; "
        "GRANT ALL PRIVILEGES ON TABLE example_table_s.example_table TO USER my_user;"
    )
    t = ("TABLE", ("workspace", "example_table_s", "example_table"))
    s = state(SD, text)
    assert s.allowed("my_user", [], "drop_table", t) and len(s.grants) == 2  # both shown
    after = state(SD, text + "REVOKE ALL PRIVILEGES ON TABLE example_table_s.example_table FROM USER my_user")
    assert after.allowed("my_user", [], "select", t)
    assert not after.allowed("my_user", [], "drop_table", t)


def test_sd_merge_needs_insert_update_delete() -> None:
    t = ("TABLE", ("workspace", "s", "t"))
    s = state(SD, "grant insert table, delete table on table s.t to user u")
    assert s.allowed("u", [], "insert_overwrite", t) and s.allowed("u", [], "copy_into", t)
    assert not s.allowed("u", [], "modify", t)
    assert state(SD, "grant insert, update, delete on table s.t to user u").allowed("u", [], "modify", t)


def test_sd_instance_and_admin_only_privileges_cannot_be_granted() -> None:
    with pytest.raises(DialectError, match="line 2"):
        read(SD, "grant create schema on workspace w to user u;\ngrant create user on workspace w to user u")


# -- 004 CDAP ------------------------------------------------------------------------------


def cdap(*grants: tuple[str, str, tuple[str, ...]]) -> State:
    return State(CDAP, [DGrant("u", p, t, n) for p, t, n in grants])


NS, DS = ("NAMESPACE", ("ns",)), ("DATASET", ("ns", "ds"))


def test_cdap_create_needs_write_on_the_parent() -> None:
    assert cdap(("WRITE", *NS)).allowed("u", [], "dataset create", DS)
    assert not cdap(("ADMIN", *DS)).allowed("u", [], "dataset create", DS)


def test_cdap_get_needs_read_on_the_entity_and_the_namespace() -> None:
    assert not cdap(("READ", *DS)).allowed("u", [], "dataset get", DS)
    assert cdap(("READ", *DS), ("READ", *NS)).allowed("u", [], "dataset get", DS)


def test_cdap_list_needs_any_of_read_write_admin_and_delete_needs_admin() -> None:
    assert cdap(("WRITE", *DS)).allowed("u", [], "dataset list", DS)
    assert not cdap(("WRITE", *DS)).allowed("u", [], "dataset drop", DS)
    assert cdap(("ADMIN", *DS)).allowed("u", [], "dataset drop", DS)


def test_cdap_program_start_needs_execute_and_read_on_the_namespace() -> None:
    program = ("PROGRAM", ("ns", "app", "p"))
    assert cdap(("EXECUTE", *program), ("READ", *NS)).allowed("u", [], "program start", program)
    assert not cdap(("EXECUTE", *program)).allowed("u", [], "program start", program)
