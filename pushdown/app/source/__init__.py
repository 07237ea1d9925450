"""A model source: the model is read from another system (an Apache Gravitino server) and
pushdown converges its own model to it, as one change, every interval (docs/gravitino.md)."""
