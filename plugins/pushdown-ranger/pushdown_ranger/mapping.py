"""The access mapping, by operation: which Ranger access on which resource an authorized
operation turns into. Pure data; :mod:`pushdown_ranger.compile.desired` applies it.

==========================  =========================================  ==================
evaluator decision          Ranger service, resource                   access
==========================  =========================================  ==================
``load_table`` c.d.t        hive ``database=d, table=t``               ``select``
``alter_table`` c.d.t       hive ``database=d, table=t``               ``update``, ``alter``
``drop_table`` c.d.t        hive ``database=d, table=t``               ``drop``
``create_table`` in c.d     hive ``database=d, table=<new table>``     ``create``
``alter_schema`` c.d        hive ``database=d``                        ``alter``
``drop_schema`` c.d         hive ``database=d``                        ``drop``
``read_topic_data`` c.s.t   kafka ``topic=t``                          ``consume``
``load_topic`` c.s.t        kafka ``topic=t``                          ``describe``
``alter_topic`` c.s.t       kafka ``topic=t``                          ``publish``
``drop_topic`` c.s.t        kafka ``topic=t``                          ``delete``
``read_fileset_data`` c.s.f hdfs ``path=<location>`` (recursive)       ``read``
``load_fileset`` c.s.f      hdfs ``path=<location>`` (recursive)       ``execute``
``alter_fileset`` c.s.f     hdfs ``path=<location>`` (recursive)       ``write``
==========================  =========================================  ==================

A Hive policy on ``database=d, table=*, column=*`` would also match a request on the
database ``d`` itself (Ranger: every deeper resource is the match-any ``*``), and grant
``alter`` or ``drop`` of the database with those of its tables; the every-table policy
uses ``table=?*`` instead, which matches every table name and not the database.

``create`` is what Ranger's Hive plugin (``RangerHiveAuthorizer``) and Kyuubi's Spark AuthZ
extension ask for CREATE TABLE, CREATE TABLE AS SELECT, CREATE TABLE LIKE and CREATE VIEW:
on the *new* table's resource (``database=d, table=t``), never on the database alone (Hive's
database object of CREATE TABLE is asked no access). On a table that exists it allows
Spark's REPLACE TABLE / CREATE OR REPLACE (a drop and a create), CREATE OR REPLACE VIEW and
Hudi's compaction, so on a registered table it goes only to users also allowed
``drop_table`` there (who may alter it too).
"""

from __future__ import annotations

#: Hive accesses on one table, per operation on the table.
TABLE_ACCESS: tuple[tuple[str, str], ...] = (
    ("select", "load_table"),
    ("update", "alter_table"),
    ("alter", "alter_table"),
    ("drop", "drop_table"),
)
#: Hive's access on a table that does not exist yet (decided on a new table of the schema);
#: on a registered table it also needs :data:`REPLACE_NEEDS` there.
NEW_TABLE_ACCESS: tuple[tuple[str, str], ...] = (("create", "create_table"),)
REPLACE_NEEDS = "drop_table"
#: Hive accesses on one database, per operation.
DATABASE_ACCESS: tuple[tuple[str, str], ...] = (
    ("alter", "alter_schema"),
    ("drop", "drop_schema"),
)

KAFKA_ACCESS: tuple[tuple[str, str], ...] = (
    ("consume", "read_topic_data"),
    ("describe", "load_topic"),
    ("publish", "alter_topic"),
    ("delete", "drop_topic"),
)
HDFS_ACCESS: tuple[tuple[str, str], ...] = (
    ("read", "read_fileset_data"),
    ("execute", "load_fileset"),
    ("write", "alter_fileset"),
)

TABLE_OPERATIONS = tuple(dict.fromkeys(op for _, op in TABLE_ACCESS + NEW_TABLE_ACCESS + DATABASE_ACCESS))
TOPIC_OPERATIONS = tuple(dict.fromkeys(op for _, op in KAFKA_ACCESS))
FILESET_OPERATIONS = tuple(dict.fromkeys(op for _, op in HDFS_ACCESS))
OPERATIONS = TABLE_OPERATIONS + TOPIC_OPERATIONS + FILESET_OPERATIONS

#: Ranger's wildcard characters: a name holding one cannot be written as an exact resource.
WILDCARD_CHARS = frozenset("*?")
