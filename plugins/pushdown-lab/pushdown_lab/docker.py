"""Whether a Docker engine answers: the backends' container variants (MySQL 8, Hive 4, a
real Ranger Admin) run only where one does, and are skipped with that reason elsewhere."""

from __future__ import annotations

import os
from pathlib import Path


def docker_engine() -> bool:
    """Whether a Docker engine answers (instant when none does; ``docker`` imported lazily)."""
    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return False  # nothing to ask (and docker.from_env() would leak a socket failing)
    try:
        import docker  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return False
    try:
        client = docker.from_env()  # type: ignore[attr-defined,unused-ignore]
    except Exception:
        return False
    try:
        return bool(client.ping())
    except Exception:
        return False
    finally:
        client.close()
