"""The Unity Catalog backend of pushdown (docs/unitycatalog.md)."""
