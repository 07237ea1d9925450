"""Lab equipment: what runs real or stand-in servers for the tests, the benchmarks and the demos.

``mariadb`` (a throwaway MariaDB, or MySQL 8 in a container), ``metastore`` (a throwaway
Hive Metastore 2.3 from pyspark's jars with the Java launcher in ``java/``, or Hive 4 in a
container), ``ranger_standin`` (a Ranger Admin stand-in), ``docker`` (whether a Docker engine
answers) and ``demos`` (``pushdown demo``, ``demo-hive``, ``demo-ranger``, registered by
``plugin``). No backend package imports this one; only their tests do.
"""
