"""Singdata Lakehouse metadata objects and privileges (reference 002), as data."""

from __future__ import annotations

from pushdown.dialects.data import ALL, Dialect, Mapping, Need, Translation

_IN_SCHEMA = (
    "TABLE",
    "VIEW",
    "MATERIALIZED VIEW",
    "DYNAMIC TABLE",
    "TABLE STREAM",
    "VOLUME",
    "INDEX",
    "FUNCTION",
    "JOB",
)


def _on(*types: str) -> frozenset[str]:
    return frozenset(types)


_WRITE = frozenset({"SELECT", "INSERT TABLE", "UPDATE TABLE", "DELETE TABLE"})
_TABLES = ("TABLE", "TABLES IN SCHEMA", "OBJECTS IN SCHEMA")
TRANSLATION = Translation(
    forms={
        "WORKSPACE": "catalog",
        "SCHEMA": "schema",
        "TABLE": "table",
        "TABLES IN SCHEMA": "schema",
        "OBJECTS IN SCHEMA": "schema",
    },
    allow={
        **{("SELECT", f): ("SELECT_TABLE",) for f in _TABLES},
        **{(ALL, f): ("SELECT_TABLE", "MODIFY_TABLE") for f in _TABLES},
        ("READ METADATA", "SCHEMA"): ("USE_SCHEMA",),
        ("CREATE TABLE", "SCHEMA"): ("CREATE_TABLE",),
        (ALL, "SCHEMA"): ("USE_SCHEMA", "CREATE_TABLE"),
        ("CREATE SCHEMA", "WORKSPACE"): ("CREATE_SCHEMA",),
    },
    combos=tuple((_WRITE, f, ("MODIFY_TABLE",)) for f in _TABLES),
    export={
        ("SELECT_TABLE", "table"): ("TABLE", ("SELECT",)),
        ("SELECT_TABLE", "schema"): ("TABLES IN SCHEMA", ("SELECT",)),
        ("MODIFY_TABLE", "table"): ("TABLE", tuple(sorted(_WRITE))),
        ("MODIFY_TABLE", "schema"): ("TABLES IN SCHEMA", tuple(sorted(_WRITE))),
        ("USE_SCHEMA", "schema"): ("SCHEMA", ("READ METADATA",)),
        ("CREATE_TABLE", "schema"): ("SCHEMA", ("CREATE TABLE",)),
        ("CREATE_SCHEMA", "catalog"): ("WORKSPACE", ("CREATE SCHEMA",)),
    },
    # a Singdata workspace has no gate: whoever holds a grant inside it passes the catalog gate
    implied_catalog=("USE_CATALOG",),
)

DIALECT = Dialect(
    name="singdata",
    title="Singdata Lakehouse",
    reference="002",
    securables={
        "INSTANCE": None,
        "WORKSPACE": "INSTANCE",
        "SHARE": "INSTANCE",
        "NETWORK POLICY": "INSTANCE",
        "SCHEMA": "WORKSPACE",
        "VCLUSTER": "WORKSPACE",
        "CONNECTION": "WORKSPACE",
        **{t: "SCHEMA" for t in _IN_SCHEMA},
    },
    privileges={
        # instance privileges and alter workspace / create user / create role are not
        # grantable ("not supported for other roles or users"); job privileges neither
        "CREATE CONNECTION": _on("WORKSPACE"),
        "CREATE VCLUSTER": _on("WORKSPACE"),
        "CREATE SCHEMA": _on("WORKSPACE"),
        "ALTER SCHEMA": _on("SCHEMA"),
        "DROP SCHEMA": _on("SCHEMA"),
        "READ METADATA": _on(
            "SCHEMA",
            "VCLUSTER",
            "CONNECTION",
            "TABLE",
            "VIEW",
            "DYNAMIC TABLE",
            "MATERIALIZED VIEW",
            "FUNCTION",
            "VOLUME",
            "TABLE STREAM",
            "INDEX",
        ),
        **{
            f"CREATE {t}": _on("SCHEMA")
            for t in (
                "TABLE",
                "VIEW",
                "MATERIALIZED VIEW",
                "DYNAMIC TABLE",
                "INDEX",
                "FUNCTION",
                "TABLE STREAM",
            )
        },
        "SELECT": _on("TABLE", "VIEW", "DYNAMIC TABLE", "MATERIALIZED VIEW", "TABLE STREAM"),
        **{
            f"{verb} TABLE": _on("TABLE")
            for verb in ("ALTER", "DROP", "INSERT", "DELETE", "RESTORE", "TRUNCATE", "UPDATE")
        },
        "ALTER VIEW": _on("VIEW"),
        "DROP VIEW": _on("VIEW"),
        "ALTER VCLUSTER": _on("VCLUSTER"),
        "DROP VCLUSTER": _on("VCLUSTER"),
        "USE VCLUSTER": _on("VCLUSTER"),
        "ALTER CONNECTION": _on("CONNECTION"),
        "DROP CONNECTION": _on("CONNECTION"),
        "USE FUNCTION": _on("FUNCTION"),
        "ALTER FUNCTION": _on("FUNCTION"),
        "DROP FUNCTION": _on("FUNCTION"),
        "READ VOLUME": _on("VOLUME"),
        "WRITE VOLUME": _on("VOLUME"),
        "ALTER VOLUME": _on("VOLUME"),
        ALL: _on(
            "SCHEMA",
            "VCLUSTER",
            "CONNECTION",
            "TABLE",
            "VIEW",
            "DYNAMIC TABLE",
            "MATERIALIZED VIEW",
            "FUNCTION",
            "VOLUME",
            "TABLE STREAM",
            "INDEX",
        ),
    },
    inherits_from=frozenset(),
    has_deny=False,
    all_privileges="independent",
    revoke_all_removes_each=False,
    owner_has_all=False,
    owner_manages_below=frozenset(),
    grant_option=True,
    gates=(),
    operations={
        "select": (Need(("SELECT",)),),
        "modify": (Need(("INSERT TABLE",)), Need(("UPDATE TABLE",)), Need(("DELETE TABLE",))),
        "insert": (Need(("INSERT TABLE",)),),
        "insert_overwrite": (Need(("INSERT TABLE",)), Need(("DELETE TABLE",))),
        "copy_into": (Need(("INSERT TABLE",)),),
        "describe": (Need(("READ METADATA",)),),
        "create_table": (Need(("CREATE TABLE",), "SCHEMA"),),
        "create_schema": (Need(("CREATE SCHEMA",), "WORKSPACE"),),
        "drop_table": (Need(("DROP TABLE",)),),
        "manage_grants": (Need(("GRANT OPTION",)),),
    },
    object_types={"metalake": "INSTANCE", "catalog": "WORKSPACE", "schema": "SCHEMA", "table": "TABLE"},
    all_objects={"TABLES": _on("TABLE"), "VIEWS": _on("VIEW"), "OBJECTS": frozenset(_IN_SCHEMA)},
    default_catalog="workspace",
    translation=TRANSLATION,
    mappings=(
        Mapping(
            "SELECT",
            "TABLE / ALL TABLES IN SCHEMA",
            ("SELECT_TABLE",),
            True,
            "ALL TABLES IN SCHEMA covers current and future tables, as a schema grant does",
        ),
        Mapping(
            "INSERT/UPDATE/DELETE TABLE",
            "TABLE",
            (),
            False,
            "MODIFY_TABLE is all three and reading: exported as the three with SELECT; "
            "imported only when all four are held",
        ),
        Mapping("READ METADATA", "SCHEMA/TABLE", (), False, "no metadata-only privilege (left out)"),
        Mapping("CREATE SCHEMA", "WORKSPACE", ("CREATE_SCHEMA",), True, "workspace = catalog"),
        Mapping("CREATE TABLE", "SCHEMA", ("CREATE_TABLE",), True, "create tables"),
        Mapping(
            ALL,
            "any",
            (),
            False,
            "an independent privilege point allowing every operation on that object; "
            "revoking it keeps the ones granted one by one",
        ),
        Mapping(
            "WITH GRANT OPTION",
            "any",
            (),
            False,
            "the model manages grants through ownership and MANAGE_GRANTS (left out)",
        ),
        Mapping(
            "USE_CATALOG/USE_SCHEMA",
            "none",
            (),
            False,
            "no gate: exported grants are limited to users who pass the model's gates",
        ),
        Mapping("DENY", "none", (), False, "Singdata has no DENY: a model DENY narrows the export"),
    ),
    notes=(
        "Business objects cannot be authorized through SQL.",
        "merge into needs insert, update and delete; insert overwrite needs insert and delete.",
    ),
)
