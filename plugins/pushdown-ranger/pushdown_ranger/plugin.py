"""The entry point (group ``pushdown``) of the ranger plugin."""

from __future__ import annotations
