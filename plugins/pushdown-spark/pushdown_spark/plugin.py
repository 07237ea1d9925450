"""The entry point (group ``pushdown``) of the spark plugin."""

from __future__ import annotations
