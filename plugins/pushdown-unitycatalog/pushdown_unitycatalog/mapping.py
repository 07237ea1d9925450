"""The privilege mapping, by operation: which Unity Catalog privileges an authorized
model operation turns into. Pure data; :mod:`pushdown_unitycatalog.compile` applies it
(docs/unitycatalog.md shows the same table beside seed 003's rules).

==============================  ==========================================================
evaluator decision              Unity Catalog privilege
==============================  ==========================================================
``load_catalog`` c              ``USE CATALOG`` on catalog ``c``
``create_schema`` in c          ``CREATE SCHEMA`` on catalog ``c``
``load_schema`` c.s             ``USE SCHEMA`` on schema ``c.s``
``create_table`` in c.s         ``CREATE TABLE`` on schema ``c.s``
``load_table`` c.s.t            ``SELECT`` on ``c.s.t``, or on ``c.s`` when every table
                                the server holds there and a new one decide alike
``alter_table`` c.s.t           ``MODIFY`` (only together with ``load_table``: the server
                                lets MODIFY alone read the table's metadata), as SELECT
``drop_table`` (owner)          nothing: ownership is set by the server at creation and
                                the permissions API cannot give it (narrower; a note)
==============================  ==========================================================

The server has no DENY and its open-source edition no groups: the compiler decides with
DENY, the USE gates and owners, and grants only what it allows, to users one by one.
"""

from __future__ import annotations

USE_CATALOG = "USE CATALOG"
USE_SCHEMA = "USE SCHEMA"
CREATE_SCHEMA = "CREATE SCHEMA"
CREATE_TABLE = "CREATE TABLE"
SELECT = "SELECT"
MODIFY = "MODIFY"

#: What the backend asks the entitlement compiler about.
OPERATIONS = ("load_catalog", "create_schema", "load_schema", "create_table", "load_table", "alter_table")

#: table privileges, per model operation (MODIFY needs load_table too: see above)
TABLE_OPERATIONS: tuple[tuple[str, str], ...] = (("load_table", SELECT), ("alter_table", MODIFY))

#: the privileges pushdown writes, per securable type
WRITTEN: dict[str, frozenset[str]] = {
    "catalog": frozenset({USE_CATALOG, CREATE_SCHEMA}),
    "schema": frozenset({USE_SCHEMA, CREATE_TABLE, SELECT, MODIFY}),
    "table": frozenset({SELECT, MODIFY}),
}

#: Every privilege of the open server's ``Privilege`` enum (the permissions API's spelling).
SERVER_PRIVILEGES = (
    "CREATE CATALOG",
    USE_CATALOG,
    CREATE_SCHEMA,
    USE_SCHEMA,
    CREATE_TABLE,
    SELECT,
    MODIFY,
    "CREATE FUNCTION",
    "EXECUTE",
    "CREATE VOLUME",
    "READ VOLUME",
    "CREATE MODEL",
    "CREATE EXTERNAL LOCATION",
    "READ FILES",
    "WRITE FILES",
    "CREATE EXTERNAL TABLE",
    "CREATE EXTERNAL VOLUME",
    "CREATE MANAGED STORAGE",
    "CREATE STORAGE CREDENTIAL",
)

#: Every securable type of the permissions API.
SECURABLE_TYPES = (
    "metastore",
    "catalog",
    "schema",
    "table",
    "function",
    "volume",
    "registered_model",
    "external_location",
    "credential",
)
