"""The seeds' privilege dialects as data: Databricks legacy Hive metastore, Unity Catalog,
Singdata Lakehouse and CDAP. Each module holds one dialect read from its reference document;
:mod:`pushdown.dialects.evaluate` decides with any of them, :mod:`pushdown.dialects.sql`
reads their statements, :mod:`pushdown.dialects.convert` maps them to and from the model."""
