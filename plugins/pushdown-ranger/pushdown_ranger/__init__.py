"""pushdown's ranger plugin."""
