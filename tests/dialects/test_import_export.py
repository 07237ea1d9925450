"""Import never wider, with its report; export guarded; errors name the line."""

from __future__ import annotations

import pytest

from pushdown.app.service.spec import load_spec, load_spec_text
from pushdown.dialects.databricks_hms import DIALECT as HMS
from pushdown.dialects.evaluate import State
from pushdown.dialects.exporting import export, wider
from pushdown.dialects.importing import to_model
from pushdown.dialects.render import statements
from pushdown.dialects.singdata import DIALECT as SD
from pushdown.dialects.spec_text import spec_yaml
from pushdown.dialects.sql import DialectError, read
from pushdown.dialects.unity_catalog import DIALECT as UC
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef


def privileges(model, role, obj):  # type: ignore[no-untyped-def]
    return {
        (g.privilege.value, g.condition.value) for g in model.roles[role] if g.object == ObjectRef.parse(obj)
    }


def test_legacy_modify_alone_is_left_out_and_reported() -> None:
    out = to_model(HMS, read(HMS, "GRANT MODIFY ON TABLE s.t TO u"))
    assert out.model.roles.get("grants_of_u", set()) == set()
    assert any("MODIFY" in line and "left out" in line for line in out.report)


def test_legacy_modify_with_select_is_modify_table() -> None:
    out = to_model(HMS, read(HMS, "GRANT MODIFY, SELECT ON TABLE s.t TO u"))
    assert privileges(out.model, "grants_of_u", "table hive_metastore.s.t") == {
        ("MODIFY_TABLE", "ALLOW"),
        ("SELECT_TABLE", "ALLOW"),
    }


def test_legacy_usage_on_the_catalog_is_both_gates() -> None:
    out = to_model(HMS, read(HMS, "GRANT USAGE ON CATALOG TO u"))
    assert privileges(out.model, "grants_of_u", "catalog hive_metastore") == {
        ("USE_CATALOG", "ALLOW"),
        ("USE_SCHEMA", "ALLOW"),
    }


def test_legacy_all_privileges_is_not_ownership_and_deny_select_denies_reading() -> None:
    out = to_model(HMS, read(HMS, "GRANT ALL PRIVILEGES ON SCHEMA s TO u; DENY SELECT ON TABLE s.t TO u"))
    assert not out.model.owners
    assert ("MODIFY_TABLE", "DENY") in privileges(out.model, "grants_of_u", "table hive_metastore.s.t")
    assert Privilege.MANAGE_GRANTS not in {g.privilege for g in out.model.roles["grants_of_u"]}


def test_unity_catalog_schema_owner_is_left_out_table_owner_kept() -> None:
    out = to_model(UC, read(UC, "ALTER SCHEMA c.s OWNER TO o; ALTER TABLE c.s.t OWNER TO o"))
    assert out.model.owners == {ObjectRef.parse("table c.s.t"): "o"}
    assert any("owner of SCHEMA c.s" in line for line in out.report)


def test_singdata_grant_option_is_reported_and_all_tables_is_a_schema_grant() -> None:
    out = to_model(SD, read(SD, "GRANT SELECT ON ALL TABLES IN SCHEMA s TO USER u WITH GRANT OPTION"))
    assert ("SELECT_TABLE", "ALLOW") in privileges(out.model, "grants_of_u", "schema workspace.s")
    assert any("WITH GRANT OPTION" in line for line in out.report)


def test_the_spec_loads_back_to_the_same_model() -> None:
    text = (
        "GRANT SELECT, MODIFY ON TABLE `we.ird`.`s``x`.t TO `a b`; DENY SELECT ON SCHEMA `we.ird`.`s``x` TO g"
    )
    out = to_model(HMS, read(HMS, text))
    back = load_spec_text(spec_yaml(out.model, out.report, "test"))
    assert back.roles == out.model.roles
    assert ObjectRef.of("table", ("we.ird", "s`x", "t")) in back.objects


@pytest.mark.parametrize(
    ("dialect", "text", "line"),
    [
        (HMS, "GRANT SELECT ON TABLE s.t TO u;\n\nGRANT SELEKT ON TABLE s.t TO u", 3),
        (HMS, "-- a comment\nREVOKE SELECT ON s.t TO u", 2),
        (UC, "GRANT SELECT ON TABLE c.s.t TO u;\nGRANT SELECT ON WAREHOUSE w TO u", 2),
        (SD, "grant select on table s.t to user u extra", 1),
        (UC, "GRANT SELECT ON TABLE a.b TO u", 1),
        (HMS, "SHOW TABLES", 1),
    ],
)
def test_a_statement_not_understood_is_an_error_naming_its_line(dialect, text, line) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DialectError, match=f"^line {line}:"):
        read(dialect, text)


def test_quoted_names_keep_dots_and_semicolons() -> None:
    s = read(UC, "GRANT SELECT ON TABLE `a.b`.`x;y`.```t` TO `u;v`")
    (g,) = s.grants
    assert g.names == ("a.b", "x;y", "`t") and g.principal == "u;v"


@pytest.mark.parametrize("dialect", [HMS, UC, SD], ids=lambda d: d.name)
def test_the_demo_exports_never_wider_and_reads_back(dialect) -> None:  # type: ignore[no-untyped-def]
    model = load_spec("examples/demo.yaml")
    out = export(dialect, model)
    script = read(dialect, "\n".join(statements(dialect, out)))
    assert script.grants == out.grants
    assert wider(dialect, model, State(dialect, script.grants, script.owners)) == []


def test_databricks_export_keeps_the_deny_and_revokes_any_file() -> None:
    text = "\n".join(statements(HMS, export(HMS, load_spec("examples/demo.yaml"))))
    assert "DENY MODIFY, SELECT ON TABLE sales.crm.salaries TO `analysts`;" in text
    assert "REVOKE ALL PRIVILEGES ON ANY FILE FROM `analysts`;" in text


def test_singdata_export_uses_all_tables_in_schema_and_grant_option() -> None:
    model = load_spec_text("""
users: [u, o]
catalogs: {c: {schemas: {s: {tables: {t: {owner: o}}}}}}
roles:
  r:
    grants:
      - {on: catalog c, allow: [USE_CATALOG]}
      - {on: schema c.s, allow: [USE_SCHEMA, SELECT_TABLE]}
    to: [user u, user o]
""")
    text = "\n".join(statements(SD, export(SD, model)))
    assert "GRANT SELECT ON ALL TABLES IN SCHEMA c.s TO USER u;" in text
    assert "GRANT ALL PRIVILEGES ON TABLE c.s.t TO USER o WITH GRANT OPTION;" in text


def test_unity_catalog_export_gives_the_use_gates() -> None:
    text = "\n".join(statements(UC, export(UC, load_spec("examples/demo.yaml"))))
    assert "GRANT USE CATALOG, USE SCHEMA ON CATALOG sales TO `dave`;" in text
    assert Condition.DENY.value not in text.replace("-- ", "\n").split("\n", 1)[0]


SHOW_LEGACY = """Principal       ActionType      ObjectType  ObjectKey
--------------  --------------  ----------  ---------
alf@melmak.et   USAGE           CATALOG     hive_metastore
alf@melmak.et   SELECT          SCHEMA      my_schema
alf@melmak.et   DENIED_SELECT   TABLE       my_schema.salaries
"""
SHOW_UC = """| principal | privilege | object_type | object_key |
|---|---|---|---|
| finance | USE CATALOG | CATALOG | main |
| finance | SELECT | SCHEMA | main.default |
"""


def test_show_grants_output_is_read_like_the_statements() -> None:
    legacy = read(HMS, SHOW_LEGACY)
    assert (
        legacy.grants
        == read(
            HMS,
            "GRANT USAGE ON CATALOG hive_metastore TO `alf@melmak.et`;"
            "GRANT SELECT ON SCHEMA my_schema TO `alf@melmak.et`;"
            "DENY SELECT ON TABLE my_schema.salaries TO `alf@melmak.et`",
        ).grants
    )
    uc = read(UC, SHOW_UC)
    assert {(g.privilege, g.type) for g in uc.grants} == {("USE CATALOG", "CATALOG"), ("SELECT", "SCHEMA")}


def test_a_show_grants_row_not_understood_names_its_line() -> None:
    with pytest.raises(DialectError, match=r"^line 5:"):
        read(UC, SHOW_UC + "| x | FLY | TABLE | a.b.c |\n")
    with pytest.raises(DialectError, match=r"^line 3:"):
        read(UC, SHOW_UC.replace("| finance | USE CATALOG | CATALOG | main |", "| finance | main |"))


def test_a_databricks_principal_may_be_named_like_a_keyword() -> None:
    (g,) = read(UC, "GRANT SELECT ON TABLE c.s.t TO role").grants
    assert g.principal == "role"
    assert read(SD, "GRANT SELECT ON TABLE s.t TO ROLE r").kinds == {"r": "role"}
