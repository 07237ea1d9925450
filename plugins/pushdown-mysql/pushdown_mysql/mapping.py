"""The privilege mapping, by operation: which MySQL privileges an authorized operation
turns into. Pure data; :mod:`pushdown_mysql.compile` applies it to the entitlement
compiler's answer.

A user receives a MySQL privilege on an object only when the evaluator authorizes
every operation that privilege enables (gates, DENY and ownership included):

============================  =====================================================
evaluator decision            MySQL privileges
============================  =====================================================
``load_table`` c.d.t          ``SELECT`` on ```d`.`t``` (on ```d`.*`` when every table has it)
``alter_table`` c.d.t         ``INSERT, UPDATE, DELETE, ALTER, INDEX`` on ```d`.`t```
                              (all but ``ALTER`` on ```d`.*`` when every table has it)
``drop_table`` c.d.t          ``DROP`` on ```d`.`t```
``create_table`` in c.d       nothing by default (a note: narrower); ``CREATE`` on
                              ```d`.*`` with ``create_on_database = true`` (a note:
                              wider)
``drop_schema`` c.d           ``SELECT, INSERT, UPDATE, DELETE, DROP, INDEX, ALTER``
                              on ```d`.*`` instead of the table grants (and
                              ``CREATE`` as for ``create_table``)
``create_schema`` in c        nothing: needs ``CREATE ON *.*``; a note says so
============================  =====================================================

``drop_schema`` implies every table operation on every table of the schema, present
and future, whatever DENY says (it needs ownership of the schema, catalog or
metalake, and ownership is not subject to DENY), so the database-level grant is exact.

``CREATE`` on ```d`.*`` is the only way MySQL lets a user create tables in ``d``, and
it is wider than ``create_table``: it also lets its holder ``CREATE DATABASE d`` once
the database is gone (the model decides ``create_schema`` apart, on the catalog) and
read every table's definition (``SHOW CREATE TABLE``). So it is not granted unless the
backend setting ``create_on_database = true`` accepts the wider grant; the plan notes
either choice, naming the user and the schema.
"""

from __future__ import annotations

#: Table-level privileges, per operation on the table.
TABLE_OPERATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("load_table", ("SELECT",)),
    ("alter_table", ("INSERT", "UPDATE", "DELETE", "ALTER", "INDEX")),
    ("drop_table", ("DROP",)),
)

#: What the backend asks the entitlement compiler about.
OPERATIONS = (
    "load_table",
    "alter_table",
    "drop_table",
    "create_table",
    "load_schema",
    "drop_schema",
    "create_schema",
)

#: Privileges that, granted on ``db``.*, enable nothing beyond what they enable on each
#: table of ``db`` (``ALTER`` would also allow ALTER DATABASE, ``DROP`` DROP DATABASE):
#: a database-level grant of these is exact when every table, present and future, has it.
DATABASE_LEVEL_EXACT = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "INDEX"})

#: Database-level privileges of a user who may drop the schema (an owner).
OWNER_DATABASE_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "DROP", "INDEX", "ALTER")

#: The database-level privilege that lets a user create tables in the database.
CREATE_TABLE_PRIVILEGE = "CREATE"

#: ``information_schema.TABLES.TABLE_TYPE`` values of the objects a table grant reaches: base
#: tables, views (a database-level grant reaches them, so a DENY on one must show), MariaDB's
#: system-versioned tables and sequences (each is a table to the grant tables). Only
#: ``SYSTEM VIEW`` (the system databases, never governed) and ``TEMPORARY`` are left out.
TABLE_TYPES = ("BASE TABLE", "VIEW", "SYSTEM VERSIONED", "SEQUENCE")

#: Databases pushdown never governs.
SYSTEM_DATABASES = frozenset({"mysql", "information_schema", "performance_schema", "sys"})

#: Every privilege pushdown may grant; its own account needs each WITH GRANT OPTION.
GRANTABLE = ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "INDEX", "ALTER")
