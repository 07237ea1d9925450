"""Databricks Unity Catalog, privilege model 1.0 (reference 003), as data."""

from __future__ import annotations

from pushdown.dialects.data import ALL, Dialect, Mapping, Need, Translation

_IN_SCHEMA = ("TABLE", "VIEW", "VOLUME", "FUNCTION", "REGISTERED MODEL")
_GATES = (Need(("USE SCHEMA",), "SCHEMA"), Need(("USE CATALOG",), "CATALOG"))
_CS = frozenset({"CATALOG", "SCHEMA"})


def _on(*types: str) -> frozenset[str]:
    return frozenset(types)


_FORMS = {"METASTORE": "metalake", "CATALOG": "catalog", "SCHEMA": "schema", "TABLE": "table"}
_DATA = {f: t for f, t in _FORMS.items() if f != "METASTORE"}
_ALL_ON = {
    "CATALOG": ("USE_CATALOG", "USE_SCHEMA", "CREATE_SCHEMA", "CREATE_TABLE", "SELECT_TABLE", "MODIFY_TABLE"),
    "SCHEMA": ("USE_SCHEMA", "CREATE_TABLE", "SELECT_TABLE", "MODIFY_TABLE"),
    "TABLE": ("SELECT_TABLE", "MODIFY_TABLE"),
}
TRANSLATION = Translation(
    forms=_FORMS,
    allow={
        ("USE CATALOG", "CATALOG"): ("USE_CATALOG",),
        ("USE SCHEMA", "CATALOG"): ("USE_SCHEMA",),
        ("USE SCHEMA", "SCHEMA"): ("USE_SCHEMA",),
        **{("SELECT", f): ("SELECT_TABLE",) for f in _DATA},
        ("CREATE SCHEMA", "CATALOG"): ("CREATE_SCHEMA",),
        ("CREATE TABLE", "CATALOG"): ("CREATE_TABLE",),
        ("CREATE TABLE", "SCHEMA"): ("CREATE_TABLE",),
        ("CREATE CATALOG", "METASTORE"): ("CREATE_CATALOG",),
        **{(ALL, f): v for f, v in _ALL_ON.items()},
    },
    combos=tuple((frozenset({"MODIFY", "SELECT"}), f, ("MODIFY_TABLE",)) for f in _DATA),
    export={
        ("USE_CATALOG", "catalog"): ("CATALOG", ("USE CATALOG",)),
        ("USE_SCHEMA", "catalog"): ("CATALOG", ("USE SCHEMA",)),
        ("USE_SCHEMA", "schema"): ("SCHEMA", ("USE SCHEMA",)),
        **{("SELECT_TABLE", t): (f, ("SELECT",)) for f, t in _DATA.items()},
        **{("MODIFY_TABLE", t): (f, ("MODIFY", "SELECT")) for f, t in _DATA.items()},
        ("CREATE_SCHEMA", "catalog"): ("CATALOG", ("CREATE SCHEMA",)),
        ("CREATE_TABLE", "catalog"): ("CATALOG", ("CREATE TABLE",)),
        ("CREATE_TABLE", "schema"): ("SCHEMA", ("CREATE TABLE",)),
        ("CREATE_CATALOG", "metalake"): ("METASTORE", ("CREATE CATALOG",)),
    },
)

DIALECT = Dialect(
    name="unity-catalog",
    title="Databricks Unity Catalog",
    reference="003",
    securables={
        "METASTORE": None,
        "CATALOG": "METASTORE",
        "SCHEMA": "CATALOG",
        **{t: "SCHEMA" for t in _IN_SCHEMA},
        "EXTERNAL LOCATION": "METASTORE",
        "STORAGE CREDENTIAL": "METASTORE",
        "CONNECTION": "METASTORE",
        "SHARE": "METASTORE",
        "RECIPIENT": "METASTORE",
        "PROVIDER": "METASTORE",
    },
    privileges={
        **{
            p: _on("METASTORE")
            for p in (
                "CREATE CATALOG",
                "CREATE CONNECTION",
                "CREATE PROVIDER",
                "CREATE RECIPIENT",
                "CREATE SHARE",
                "CREATE STORAGE CREDENTIAL",
                "SET SHARE PERMISSION",
                "USE MARKETPLACE ASSETS",
                "USE PROVIDER",
                "USE RECIPIENT",
                "USE SHARE",
                "MANAGE ALLOWLIST",
            )
        },
        "CREATE EXTERNAL LOCATION": _on("METASTORE", "STORAGE CREDENTIAL"),
        ALL: _on(
            "CATALOG",
            "EXTERNAL LOCATION",
            "STORAGE CREDENTIAL",
            "SCHEMA",
            "FUNCTION",
            "REGISTERED MODEL",
            "TABLE",
            "VIEW",
            "VOLUME",
            "CONNECTION",
        ),
        "APPLY TAG": _on("CATALOG", "SCHEMA", "REGISTERED MODEL", "TABLE", "VIEW"),
        "USE CATALOG": _on("CATALOG"),
        "CREATE SCHEMA": _on("CATALOG"),
        "CREATE FOREIGN CATALOG": _on("CATALOG", "CONNECTION"),
        **{
            p: _CS for p in ("CREATE FUNCTION", "CREATE TABLE", "CREATE MODEL", "CREATE VOLUME", "USE SCHEMA")
        },
        "READ VOLUME": _on("CATALOG", "SCHEMA", "VOLUME"),
        "WRITE VOLUME": _on("CATALOG", "SCHEMA", "VOLUME"),
        "EXECUTE": _on("CATALOG", "SCHEMA", "FUNCTION", "REGISTERED MODEL"),
        "MODIFY": _on("CATALOG", "SCHEMA", "TABLE"),
        "SELECT": _on("CATALOG", "SCHEMA", "TABLE", "VIEW", "SHARE"),
        "CREATE EXTERNAL TABLE": _on("EXTERNAL LOCATION", "STORAGE CREDENTIAL"),
        "CREATE EXTERNAL VOLUME": _on("EXTERNAL LOCATION"),
        "CREATE MANAGED STORAGE": _on("EXTERNAL LOCATION"),
        "READ FILES": _on("EXTERNAL LOCATION", "STORAGE CREDENTIAL", "VOLUME"),
        "WRITE FILES": _on("EXTERNAL LOCATION", "STORAGE CREDENTIAL", "VOLUME"),
        "USE CONNECTION": _on("CONNECTION"),
    },
    inherits_from=_CS,
    has_deny=False,
    all_privileges="expands",
    revoke_all_removes_each=True,
    owner_has_all=True,
    owner_manages_below=_CS,
    grant_option=False,
    gates=("USE CATALOG on the parent catalog", "USE SCHEMA on the parent schema"),
    operations={
        "select": (Need(("SELECT",)), *_GATES),
        "modify": (Need(("MODIFY",)), Need(("SELECT",)), *_GATES),
        "create_table": (Need(("CREATE TABLE",), "SCHEMA"), *_GATES),
        "create_schema": (Need(("CREATE SCHEMA",), "CATALOG"), Need(("USE CATALOG",), "CATALOG")),
        "apply_tag": (Need(("APPLY TAG",)), *_GATES),
        "manage_grants": (Need(("OWN",)),),
        "create_catalog": (Need(("CREATE CATALOG",), "METASTORE"),),
    },
    translation=TRANSLATION,
    object_types={"metalake": "METASTORE", "catalog": "CATALOG", "schema": "SCHEMA", "table": "TABLE"},
    mappings=(
        Mapping("USE CATALOG", "CATALOG", ("USE_CATALOG",), True, "the catalog gate"),
        Mapping("USE SCHEMA", "CATALOG/SCHEMA", ("USE_SCHEMA",), True, "the schema gate; inherited"),
        Mapping(
            "SELECT",
            "CATALOG/SCHEMA/TABLE",
            ("SELECT_TABLE",),
            True,
            "inherited by current and future tables",
        ),
        Mapping(
            "MODIFY",
            "CATALOG/SCHEMA/TABLE",
            (),
            False,
            "needs SELECT as well to act; MODIFY with SELECT on the same object is MODIFY_TABLE",
        ),
        Mapping("CREATE SCHEMA", "CATALOG", ("CREATE_SCHEMA",), True, "create schemas"),
        Mapping("CREATE TABLE", "CATALOG/SCHEMA", ("CREATE_TABLE",), True, "create tables; inherited"),
        Mapping("CREATE CATALOG", "METASTORE", ("CREATE_CATALOG",), True, "not inherited"),
        Mapping(
            ALL,
            "CATALOG/SCHEMA/TABLE",
            ("what it covers there (see the import table)",),
            False,
            "expanded at check time to the privileges applicable; not ownership "
            "(expanded to the model privileges it covers)",
        ),
        Mapping("DENY", "none", (), False, "Unity Catalog has no DENY: a model DENY narrows the export"),
        Mapping("any other", "any", (), False, "no model privilege (left out)"),
    ),
    notes=(
        "Privileges granted on the metastore are not inherited.",
        "Owners hold every privilege on the object itself only, and manage grants on it and its children.",
        "Defaults the statements do not show (USE CATALOG on main for all users, the workspace catalog's "
        "grants to workspace users) are not imported: the import is narrower there.",
    ),
)
