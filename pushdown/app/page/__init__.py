"""The page served by ``pushdown serve`` under ``/ui/``: who may do what, why, and whether
each backend enforces it (docs/ui.md). It reads through the service and the core only;
the REST app mounts it and hands it the REST API's authenticate function."""
