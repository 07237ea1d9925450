"""pushdown's spark plugin."""
