"""The entry point (group ``pushdown``) of the hive plugin."""

from __future__ import annotations
