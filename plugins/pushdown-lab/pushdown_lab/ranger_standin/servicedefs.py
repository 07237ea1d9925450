"""The service definitions the stand-in starts with (hdfs, hive, kafka), shipped as package data.

The JSON files under ``data/`` are Apache Ranger's service definitions (Apache-2.0, see
``data/LICENSE-apache-ranger.txt``). A different directory may be given instead.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["load_service_defs"]


def load_service_defs(directory: Path | None = None) -> list[dict[str, Any]]:
    """Every ``*.json`` service definition of ``directory`` (default: the packaged ones)."""
    if directory is not None:
        files = sorted(directory.glob("*.json"))
        return [json.loads(path.read_text(encoding="utf-8")) for path in files]
    data = resources.files("pushdown_lab.ranger_standin").joinpath("data")
    names = sorted(entry.name for entry in data.iterdir() if entry.name.endswith(".json"))
    return [json.loads(data.joinpath(name).read_text(encoding="utf-8")) for name in names]
