"""The privilege mapping, by operation: which metastore privileges an authorized model
operation turns into. Pure data; :mod:`pushdown_hive.compile` applies it to the
entitlement compiler's answer (docs/hive.md shows the same table).

A user receives a metastore privilege on an object only when the evaluator authorizes
every operation that privilege enables (USE_CATALOG / USE_SCHEMA gates, DENY and
ownership included). The metastore has neither DENY nor USE gates, so the compiler
decides and the backend grants on concrete tables only:

==============================  =====================================================
evaluator decision              metastore privileges (SQL-standard names)
==============================  =====================================================
``load_table`` c.d.t            ``SELECT`` on table ``d.t``
``alter_table`` c.d.t           ``INSERT``, ``UPDATE``, ``DELETE`` on table ``d.t``
``drop_table`` c.d.t (owner)    ``ALL`` on table ``d.t`` instead of the four above
``create_table`` in c.d         ``CREATE`` on database ``d``
``create_schema`` in c          nothing (the metastore has no catalog-level grant
                                pushdown may use; a note says so: narrower)
==============================  =====================================================

A schema-level ALLOW is expanded to the tables the metastore holds; a table that
appears later gets its grants at the next sync that sees it (the library hook's scoped
sync, or discovery).
"""

from __future__ import annotations

#: Table-level privileges, per model operation on the table.
TABLE_OPERATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("load_table", ("SELECT",)),
    ("alter_table", ("INSERT", "UPDATE", "DELETE")),
)

#: What a table owner (a user who may ``drop_table``) gets instead: ALL, as the
#: metastore's SQL-standard authorization spells it.
ALL = "ALL"

#: The database-level privilege that lets a user create tables in the database.
CREATE = "CREATE"

#: Which model operation each privilege stands for (the proof reads privileges back
#: with ``get_privilege_set`` and compares each with the evaluator's decision).
OPERATION_OF: dict[str, str] = {
    "SELECT": "load_table",
    "INSERT": "alter_table",
    "UPDATE": "alter_table",
    "DELETE": "alter_table",
    ALL: "drop_table",
    CREATE: "create_table",
}

#: Privileges that ``ALL`` includes on a table.
IMPLIED_BY_ALL = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE"})

#: What the backend asks the entitlement compiler about.
OPERATIONS = ("load_table", "alter_table", "drop_table", "create_table", "load_schema", "create_schema")

#: Roles every metastore holds; pushdown never creates, drops or grants them.
BUILTIN_ROLES = frozenset({"admin", "public"})
