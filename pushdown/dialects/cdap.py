"""CDAP authorization policies (reference 004): each entity's operations and the
READ / WRITE / ADMIN / EXECUTE privileges they require, as data."""

from __future__ import annotations

from pushdown.dialects.data import Dialect, Mapping, Need

PRIVILEGES = ("READ", "WRITE", "ADMIN", "EXECUTE")
_ANY = ("READ", "WRITE", "ADMIN")


def _n(privilege: str, at: str = "target") -> Need:
    return Need(_ANY if privilege == "ANY" else (privilege,), at)


def _rows(entity: str, table: dict[str, tuple[tuple[str, str], ...]]) -> dict[str, tuple[Need, ...]]:
    return {f"{entity} {op}": tuple(_n(p, at) for p, at in needs) for op, needs in table.items()}


_T, _NS = "target", "NAMESPACE"
OPERATIONS: dict[str, tuple[Need, ...]] = {
    **_rows(
        "namespace",
        {
            "create": (("WRITE", "INSTANCE"),),
            "update": (("ADMIN", _T),),
            "list": (("ANY", _T),),
            "get": (("READ", _T),),
            "delete": (("ADMIN", _T),),
            "set preference": (("WRITE", _T),),
            "get preference": (("READ", _T),),
            "search": (("READ", _T),),
        },
    ),
    **_rows(
        "artifact",
        {
            "add": (("WRITE", _NS),),
            "delete": (("ADMIN", _T),),
            "get": (("READ", _T),),
            "list": (("ANY", _T),),
            "write property": (("ADMIN", _T),),
            "delete property": (("ADMIN", _T),),
            "get property": (("READ", _T),),
            "write metadata": (("ADMIN", _T),),
            "read metadata": (("READ", _T),),
        },
    ),
    **_rows(
        "application",
        {
            "deploy": (("WRITE", _NS),),
            "get": (("READ", _T),),
            "list": (("ANY", _T),),
            "update": (("ADMIN", _T),),
            "delete": (("ADMIN", _T),),
            "set preference": (("WRITE", _T),),
            "get preference": (("READ", _T),),
            "add metadata": (("ADMIN", _T),),
            "get metadata": (("READ", _T),),
        },
    ),
    **_rows(
        "program",
        {
            "start": (("EXECUTE", _T), ("READ", _NS)),
            "stop": (("EXECUTE", _T), ("READ", _NS)),
            "debug": (("EXECUTE", _T), ("READ", _NS)),
            "set instances": (("ADMIN", _T),),
            "list": (("ANY", _T),),
            "set runtime args": (("ADMIN", _T),),
            "get runtime args": (("READ", _T),),
            "get instances": (("READ", _T),),
            "set preference": (("WRITE", _T),),
            "get preference": (("READ", _T),),
            "get status": (("READ", _T),),
            "get history": (("READ", _T),),
            "add metadata": (("ADMIN", _T),),
            "get metadata": (("READ", _T),),
            "emit logs": (("WRITE", _NS),),
            "view logs": (("READ", _T),),
            "emit metrics": (("WRITE", _NS),),
            "view metrics": (("READ", _T),),
        },
    ),
    **_rows(
        "stream",
        {
            "create": (("WRITE", _NS),),
            "update properties": (("ADMIN", _T),),
            "delete": (("ADMIN", _T),),
            "truncate": (("ADMIN", _T),),
            "enqueue": (("WRITE", _T), ("READ", _NS)),
            "get": (("READ", _T), ("READ", _NS)),
            "list": (("ANY", _T),),
            "read events": (("READ", _T), ("READ", _NS)),
            "set preferences": (("WRITE", _T),),
            "get preferences": (("READ", _T),),
            "add metadata": (("ADMIN", _T),),
            "get metadata": (("READ", _T),),
            "view lineage": (("READ", _T),),
            "emit metrics": (("WRITE", _NS),),
            "view metrics": (("READ", _T),),
        },
    ),
    **_rows(
        "dataset",
        {
            "create": (("WRITE", _NS),),
            "get": (("READ", _T), ("READ", _NS)),
            "list": (("ANY", _T),),
            "update": (("ADMIN", _T), ("READ", _NS)),
            "drop": (("ADMIN", _T),),
            "truncate": (("ADMIN", _T),),
            "upgrade": (("ADMIN", _T),),
            "add metadata": (("ADMIN", _T),),
            "get metadata": (("READ", _T),),
            "view lineage": (("READ", _T),),
            "emit metrics": (("WRITE", _NS),),
            "view metrics": (("READ", _T),),
        },
    ),
}

#: What creating an entity gives its creator ("Resultant Privileges": ALL on the new entity).
RESULTANT = {
    "namespace create": "ALL",
    "artifact add": "ALL",
    "application deploy": "ALL",
    "stream create": "ALL",
    "dataset create": "ALL",
}

DIALECT = Dialect(
    name="cdap",
    title="CDAP",
    reference="004",
    securables={
        "INSTANCE": None,
        "NAMESPACE": "INSTANCE",
        "ARTIFACT": "NAMESPACE",
        "APPLICATION": "NAMESPACE",
        "PROGRAM": "APPLICATION",
        "STREAM": "NAMESPACE",
        "DATASET": "NAMESPACE",
    },
    privileges={
        p: frozenset({"INSTANCE", "NAMESPACE", "ARTIFACT", "APPLICATION", "PROGRAM", "STREAM", "DATASET"})
        for p in PRIVILEGES
    },
    inherits_from=frozenset(),
    has_deny=False,
    all_privileges="expands",
    revoke_all_removes_each=True,
    owner_has_all=False,
    owner_manages_below=frozenset(),
    grant_option=False,
    gates=(),
    operations=OPERATIONS,
    # CDAP entities onto the model: instance = metalake, namespace = catalog,
    # application = schema (NS.APP), dataset and stream = a table of schema "data" and
    # "streams", program = a table of its application's schema (NS.APP.PROGRAM)
    object_types={
        "metalake": "INSTANCE",
        "catalog": "NAMESPACE",
        "schema": "APPLICATION",
        "table": "DATASET",
    },
    mappings=(
        Mapping(
            "READ",
            "any entity",
            ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"),
            False,
            "READ is what the model's load operation on the mapped object allows",
        ),
        Mapping(
            "WRITE",
            "INSTANCE/NAMESPACE/APPLICATION",
            ("CREATE_CATALOG", "CREATE_SCHEMA", "CREATE_TABLE"),
            False,
            "WRITE on a parent is creating inside it",
        ),
        Mapping("WRITE", "DATASET/STREAM", ("MODIFY_TABLE",), False, "WRITE on a leaf is changing it"),
        Mapping("ADMIN", "any entity", ("OWNER",), False, "update and delete: the model's ownership"),
        Mapping(
            "EXECUTE",
            "PROGRAM",
            ("MODIFY_TABLE",),
            False,
            "no model privilege runs a program: given with MODIFY_TABLE on the program's table",
        ),
    ),
    notes=(
        "Secure keys are not in the reference's table: not modelled.",
        "Listing shows every namespace, even those the user cannot access.",
    ),
)
