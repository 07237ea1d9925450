"""pushdown's hive plugin."""
