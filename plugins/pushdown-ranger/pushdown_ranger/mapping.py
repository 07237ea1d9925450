"""The access mapping, by operation: which Ranger access on which resource an authorized
operation turns into. Pure data; :mod:`pushdown_ranger.compile.desired` applies it.

==========================  =========================================  ==================
evaluator decision          Ranger service, resource                   access
==========================  =========================================  ==================
``load_table`` c.d.t        hive ``database=d, table=t``               ``select``
``alter_table`` c.d.t       hive ``database=d, table=t``               ``update``, ``alter``
``drop_table`` c.d.t        hive ``database=d, table=t``               ``drop``
``create_table`` in c.d     hive ``database=d``                        ``create``
``alter_schema`` c.d        hive ``database=d``                        ``alter``
``drop_schema`` c.d         hive ``database=d``                        ``drop``
``load_topic`` c.s.t        kafka ``topic=t``                          ``consume``, ``describe``
``alter_topic`` c.s.t       kafka ``topic=t``                          ``publish``
``drop_topic`` c.s.t        kafka ``topic=t``                          ``delete``
``load_fileset`` c.s.f      hdfs ``path=<location>`` (recursive)       ``read``, ``execute``
``alter_fileset`` c.s.f     hdfs ``path=<location>`` (recursive)       ``write``
==========================  =========================================  ==================

A Hive policy on ``database=d, table=*, column=*`` would also match a request on the
database ``d`` itself (Ranger: every deeper resource is the match-any ``*``), and grant
``alter`` or ``drop`` of the database with those of its tables; the every-table policy
uses ``table=?*`` instead, which matches every table name and not the database.
"""

from __future__ import annotations

#: Hive accesses on one table, per operation on the table.
TABLE_ACCESS: tuple[tuple[str, str], ...] = (
    ("select", "load_table"),
    ("update", "alter_table"),
    ("alter", "alter_table"),
    ("drop", "drop_table"),
)
#: Hive accesses on one database, per operation (create_table is decided on a new table).
DATABASE_ACCESS: tuple[tuple[str, str], ...] = (
    ("create", "create_table"),
    ("alter", "alter_schema"),
    ("drop", "drop_schema"),
)

KAFKA_ACCESS: tuple[tuple[str, str], ...] = (
    ("consume", "load_topic"),
    ("describe", "load_topic"),
    ("publish", "alter_topic"),
    ("delete", "drop_topic"),
)
HDFS_ACCESS: tuple[tuple[str, str], ...] = (
    ("read", "load_fileset"),
    ("execute", "load_fileset"),
    ("write", "alter_fileset"),
)

TABLE_OPERATIONS = tuple(dict.fromkeys(op for _, op in TABLE_ACCESS + DATABASE_ACCESS))
TOPIC_OPERATIONS = tuple(dict.fromkeys(op for _, op in KAFKA_ACCESS))
FILESET_OPERATIONS = tuple(dict.fromkeys(op for _, op in HDFS_ACCESS))
OPERATIONS = TABLE_OPERATIONS + TOPIC_OPERATIONS + FILESET_OPERATIONS

#: Ranger's wildcard characters: a name holding one cannot be written as an exact resource.
WILDCARD_CHARS = frozenset("*?")
