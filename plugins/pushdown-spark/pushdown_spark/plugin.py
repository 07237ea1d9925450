"""The entry point (group ``pushdown``): the ``spark`` engine (``engine = "spark"``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pushdown.decide.engine import Engine
from pushdown.host.hookspecs import hookimpl


@hookimpl
def pushdown_make_engine(name: str, settings: Mapping[str, Any]) -> Engine | None:
    if name != "spark":
        return None
    from pushdown_spark.engine import SparkEngine, stderr_progress

    return SparkEngine(settings, progress=stderr_progress if settings.get("progress", True) else None)
