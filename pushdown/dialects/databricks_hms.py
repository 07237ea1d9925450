"""Databricks' legacy Hive metastore table ACLs (reference 001), as data."""

from __future__ import annotations

from pushdown.dialects.data import ALL, Dialect, Mapping, Need, Translation

_DATA = frozenset({"CATALOG", "SCHEMA", "TABLE", "VIEW"})
_USAGE = (Need(("USAGE",), "SCHEMA"), Need(("USAGE",), "CATALOG"))

_FORMS = {"CATALOG": "catalog", "SCHEMA": "schema", "TABLE": "table"}
_ALL_ON = {
    "CATALOG": ("USE_CATALOG", "USE_SCHEMA", "CREATE_SCHEMA", "CREATE_TABLE", "SELECT_TABLE", "MODIFY_TABLE"),
    "SCHEMA": ("USE_SCHEMA", "CREATE_TABLE", "SELECT_TABLE", "MODIFY_TABLE"),
    "TABLE": ("SELECT_TABLE", "MODIFY_TABLE"),
}
_READING = ("SELECT_TABLE", "MODIFY_TABLE")  # both let a model user load (read) a table
_CREATE = {"CATALOG": ("CREATE_SCHEMA", "CREATE_TABLE"), "SCHEMA": ("CREATE_TABLE",)}
TRANSLATION = Translation(
    forms=_FORMS,
    allow={
        ("USAGE", "CATALOG"): ("USE_CATALOG", "USE_SCHEMA"),
        ("USAGE", "SCHEMA"): ("USE_SCHEMA",),
        **{("SELECT", f): ("SELECT_TABLE",) for f in _FORMS},
        **{("CREATE", f): v for f, v in _CREATE.items()},
        **{(ALL, f): v for f, v in _ALL_ON.items()},
    },
    combos=tuple((frozenset({"MODIFY", "SELECT"}), f, ("MODIFY_TABLE",)) for f in _FORMS),
    deny={
        ("USAGE", "CATALOG"): ("USE_CATALOG", "USE_SCHEMA"),
        ("USAGE", "SCHEMA"): ("USE_SCHEMA",),
        **{("SELECT", f): _READING for f in _FORMS},
        **{("MODIFY", f): ("MODIFY_TABLE",) for f in _FORMS},
        **{("READ_METADATA", f): _READING for f in _FORMS},
        **{("CREATE", f): v for f, v in _CREATE.items()},
        **{(ALL, f): v for f, v in _ALL_ON.items()},
    },
    export={
        ("USE_CATALOG", "catalog"): ("CATALOG", ("USAGE",)),
        ("USE_SCHEMA", "catalog"): ("CATALOG", ("USAGE",)),
        ("USE_SCHEMA", "schema"): ("SCHEMA", ("USAGE",)),
        **{("SELECT_TABLE", t): (f, ("SELECT",)) for f, t in _FORMS.items()},
        **{("MODIFY_TABLE", t): (f, ("MODIFY", "SELECT")) for f, t in _FORMS.items()},
        ("CREATE_SCHEMA", "catalog"): ("CATALOG", ("CREATE",)),
        ("CREATE_TABLE", "catalog"): ("CATALOG", ("CREATE",)),
        ("CREATE_TABLE", "schema"): ("SCHEMA", ("CREATE",)),
    },
)

DIALECT = Dialect(
    name="databricks-hms",
    title="Databricks legacy Hive metastore",
    reference="001",
    securables={
        "CATALOG": None,
        "SCHEMA": "CATALOG",
        "TABLE": "SCHEMA",
        "VIEW": "SCHEMA",
        "FUNCTION": "SCHEMA",
        "ANY FILE": None,
        "ANONYMOUS FUNCTION": None,
    },
    privileges={
        "CREATE": frozenset({"CATALOG", "SCHEMA"}),
        "MODIFY": frozenset({"ANY FILE", "CATALOG", "SCHEMA", "TABLE"}),
        "READ_METADATA": _DATA,
        "SELECT": frozenset(
            {"ANONYMOUS FUNCTION", "ANY FILE", "CATALOG", "SCHEMA", "FUNCTION", "TABLE", "VIEW"}
        ),
        "USAGE": frozenset({"CATALOG", "SCHEMA"}),
        ALL: frozenset({"ANY FILE", "CATALOG", "SCHEMA", "FUNCTION", "TABLE", "VIEW", "ANONYMOUS FUNCTION"}),
    },
    inherits_from=frozenset({"CATALOG", "SCHEMA"}),
    has_deny=True,
    all_privileges="expands",
    revoke_all_removes_each=False,
    owner_has_all=True,
    owner_manages_below=frozenset(),
    grant_option=False,
    gates=("USAGE on the schema and on the catalog",),
    operations={
        "select": (Need(("SELECT",)), *_USAGE),
        "modify": (Need(("MODIFY",)), *_USAGE),
        "describe": (Need(("READ_METADATA",)), *_USAGE),
        "create_table": (Need(("CREATE",), "SCHEMA"), *_USAGE),
        "create_schema": (Need(("CREATE",), "CATALOG"), Need(("USAGE",), "CATALOG")),
        "manage_grants": (Need(("OWN",)),),
        "read_any_file": (Need(("SELECT",)),),
    },
    object_types={"catalog": "CATALOG", "schema": "SCHEMA", "table": "TABLE"},
    default_catalog="hive_metastore",
    translation=TRANSLATION,
    mappings=(
        Mapping(
            "USAGE",
            "CATALOG",
            ("USE_CATALOG", "USE_SCHEMA"),
            True,
            "inherited downward, so it passes the schema gate too",
        ),
        Mapping("USAGE", "SCHEMA", ("USE_SCHEMA",), True, "the schema gate"),
        Mapping(
            "SELECT",
            "CATALOG/SCHEMA/TABLE",
            ("SELECT_TABLE",),
            True,
            "query; inherited by current and future tables",
        ),
        Mapping(
            "MODIFY",
            "CATALOG/SCHEMA/TABLE",
            (),
            False,
            "writes without reading; MODIFY_TABLE also lets a user read, so MODIFY alone is "
            "left out; MODIFY with SELECT on the same object is MODIFY_TABLE",
        ),
        Mapping(
            "READ_METADATA",
            "CATALOG/SCHEMA/TABLE",
            (),
            False,
            "SHOW and DESCRIBE only; the model has no metadata-only privilege (left out)",
        ),
        Mapping(
            "CREATE",
            "CATALOG",
            ("CREATE_SCHEMA", "CREATE_TABLE"),
            True,
            "create schemas in the catalog, and (inherited) tables in its schemas",
        ),
        Mapping("CREATE", "SCHEMA", ("CREATE_TABLE",), True, "create tables in the schema"),
        Mapping(
            ALL,
            "CATALOG/SCHEMA/TABLE",
            ("what it covers there (see the import table)",),
            False,
            "every privilege applicable, expanded at check time; not ownership: holders "
            "cannot manage grants (expanded to the model privileges it covers)",
        ),
        Mapping("any", "ANY FILE / FUNCTION / VIEW", (), False, "no model securable (left out)"),
        Mapping("DENY", "any", ("DENY",), True, "wins and is inherited, as in the model"),
    ),
    notes=(
        "To manage privileges on any object you must be its owner or an administrator.",
        "A denied table or schema is hidden from listings.",
    ),
)
